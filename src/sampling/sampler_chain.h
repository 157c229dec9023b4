// A sampler chain: logits in, one token out. The stages of SamplerParams::order
// run in turn over a candidate list, then a seeded draw from the softmax of what
// is left (or the highest logit when temperature is 0) picks the token.
//
// Everything is sized at construction (the candidate buffer holds the whole
// vocabulary, the penalty window its N tokens): sample() and accept() never
// allocate. Same params, same logits and the same accepted tokens give the same
// tokens on every platform: the random source is our own and every reordering is
// a total order. (The one platform dependence left is the C library's expf,
// which may differ in the last bit; a draw can only change when it lands within
// that rounding of a cumulative-probability boundary.)
//
// Very small temperatures can push logits to +inf; the tokens that overflow then
// share the probability equally (see softmax() in candidates.h).
//
// Logits may contain NaN (treated as -inf: never chosen), -inf (never chosen) and
// +inf (the +inf tokens share all the probability). When no token is above -inf,
// sample() throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/pcg32.h"
#include "sampling/penalties.h"
#include "sampling/sampler_params.h"

namespace peak::sampling {

class SamplerChain {
 public:
  // Throws std::invalid_argument for n_vocab <= 0 or invalid params (see validate()).
  SamplerChain(int32_t n_vocab, const SamplerParams& params);

  // Chooses a token from logits[0..n_vocab). Does not accept it: call accept().
  int32_t sample(const float* logits);
  // Feeds the penalty window: accept every token of the context that should
  // count as "already said" (generated tokens, and the prompt if wanted).
  void accept(int32_t token);
  // Forgets the accepted tokens and restarts the random sequence from the seed.
  void reset();
  // Takes the accepted tokens of `other` (a chain of the same n_vocab and
  // penalty_last_n: e.g. a copy of this one from before a turn that is taken
  // back), keeping this chain's random sequence where it is, so that a sampled
  // answer written again draws new numbers. Throws std::invalid_argument for
  // another shape; never allocates.
  void take_penalty_window(const SamplerChain& other);

  int32_t n_vocab() const { return n_vocab_; }
  const SamplerParams& params() const { return params_; }
  // The candidates the last sample() chose from, after its stages ran.
  const Candidates& last_candidates() const { return candidates_; }
  size_t candidate_capacity() const { return buffer_.capacity(); }

 private:
  void run_stage(SamplerStage stage);

  int32_t n_vocab_;
  SamplerParams params_;
  std::vector<TokenCandidate> buffer_;  // n_vocab entries, reserved once
  Candidates candidates_;
  PenaltyWindow penalty_window_;
  Pcg32 rng_;
};

}  // namespace peak::sampling
