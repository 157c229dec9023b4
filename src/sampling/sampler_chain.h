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
// With a grammar (SamplerParams::grammar), the grammar stage runs first
// (grammar_stage.h): sample() only returns tokens the grammar allows after the
// tokens accepted so far, and throws std::invalid_argument when the grammar
// allows no token of the vocabulary. The grammar reads the generated tokens
// (accept()), never the prompt (accept_prompt()). A thinking model's reasoning
// is no text of the grammar: the caller moves the grammar through the phases
// of GrammarPhase as the output shows where the answer starts.
//
// Logits may contain NaN (treated as -inf: never chosen), -inf (never chosen) and
// +inf (the +inf tokens share all the probability). When no token is above -inf,
// sample() throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/grammar_stage.h"
#include "sampling/grammar_vocabulary.h"
#include "sampling/pcg32.h"
#include "sampling/penalties.h"
#include "sampling/sampler_params.h"

namespace peak::sampling {

// Where a thinking model's output stands, for the grammar of its answer.
enum class GrammarPhase {
  Answer,                // the grammar reads every token
  Held,                  // tokens are free (the reasoning), the penalties still see them
  AnswerOrReasoning,     // the output's start: the grammar's text, or the text opening the reasoning
  AnswerAfterReasoning,  // the reasoning closed: the text that may separate it from the answer, then the grammar
};

class SamplerChain {
 public:
  // Throws std::invalid_argument for n_vocab <= 0, invalid params (see
  // validate()), a grammar or preserved tokens without a vocabulary of n_vocab
  // tokens, or preserved tokens it refuses.
  SamplerChain(int32_t n_vocab, const SamplerParams& params,
               std::shared_ptr<const GrammarVocabulary> vocabulary = nullptr);

  // Chooses a token from logits[0..n_vocab). Does not accept it: call accept().
  int32_t sample(const float* logits);
  // Speculative sampling (speculative_sampling.h): chooses the token sample()
  // would, in distribution, given `drafted`, a token another chain drew from
  // the distribution `draft_probabilities` (dense, n_vocab entries): keeps it
  // or draws from the residual. At temperature 0 it is sample() (greedy).
  int32_t sample_against_draft(const float* logits, int32_t drafted, const float* draft_probabilities);
  // The probability of `token` among the candidates of the last sample() (at
  // temperature 0: softmax of the logits after the penalties and the grammar);
  // 0 when it was not a candidate. For a draft's confidence in its choice.
  float last_probability(int32_t token);
  // A random sequence of its own, derived from this chain's, for a copy that
  // drafts for it: its draws must not repeat the draws that judge them.
  void split_random_stream();
  // A token generated (sampled, or forced by the caller): it joins the penalty
  // window and the grammar reads its bytes. Throws std::invalid_argument,
  // changing nothing, for a token the grammar does not allow here.
  void accept(int32_t token);
  // A token of the context that the grammar does not read (the prompt, the
  // conversation before an answer): it only joins the penalty window.
  void accept_prompt(int32_t token);
  // Forgets the accepted tokens, restarts the random sequence from the seed
  // and the grammar from its start.
  void reset();
  // Starts the grammar again (a new answer) in phase Answer, keeping the rest.
  void restart_grammar() { enter_grammar_phase(GrammarPhase::Answer); }
  // For a thinking model: `opening`, a grammar of the output's start that opens
  // the reasoning (its markers are the caller's), and `separator`, of the text
  // that may come between the reasoning's end and the answer. The phases that
  // use them are built here, once, so that entering one never allocates.
  // Does nothing without a grammar.
  void set_reasoning_grammars(const Grammar& opening, const Grammar& separator);
  // Starts `phase` from its start. Throws std::logic_error for
  // AnswerOrReasoning or AnswerAfterReasoning before set_reasoning_grammars().
  // Without a grammar there is nothing to enter.
  void enter_grammar_phase(GrammarPhase phase);
  GrammarPhase grammar_phase() const { return phase_; }
  // Text the grammar of this phase reads that no token accepted under it
  // carried: the start of an answer that came in the token which ended the
  // phase before. Throws std::invalid_argument, changing nothing, when the
  // grammar does not allow it here; does nothing without a grammar.
  void accept_grammar_text(std::string_view text);
  // In a phase of the answer: the text accepted is a whole string of the
  // grammar and nothing can follow (the only token it allows is an end of
  // generation).
  bool grammar_finished() const;
  // Takes the accepted tokens of `other` (a chain of the same n_vocab and
  // penalty_last_n: e.g. a copy of this one from before a turn that is taken
  // back) and, when both have the same grammar, its grammar phase and state, keeping
  // this chain's random sequence where it is, so that a sampled answer written
  // again draws new numbers. Throws std::invalid_argument for another shape;
  // never allocates.
  void take_penalty_window(const SamplerChain& other);

  int32_t n_vocab() const { return n_vocab_; }
  const SamplerParams& params() const { return params_; }
  // One of params().preserved_tokens: its text is written (runtime::generate).
  bool preserves(int32_t token) const;
  const std::shared_ptr<const GrammarVocabulary>& grammar_vocabulary() const { return vocabulary_; }
  // The state of the grammar of this phase (nullptr without a grammar);
  // restore it with restore_grammar() in the same phase.
  const GrammarMatcher::State* grammar_state() const;
  void restore_grammar(const GrammarMatcher::State& state);
  // The candidates the last sample() chose from, after its stages ran.
  const Candidates& last_candidates() const { return candidates_; }
  size_t candidate_capacity() const { return buffer_.capacity(); }

 private:
  // The candidates of `logits`; throws std::invalid_argument when none can be chosen.
  void load(const float* logits);
  void run_stage(SamplerStage stage);
  void run_stages();
  // The stage of the phase: nullptr without a grammar or while it is held.
  GrammarStage* active_grammar();
  const GrammarStage* active_grammar() const { return const_cast<SamplerChain*>(this)->active_grammar(); }

  int32_t n_vocab_;
  SamplerParams params_;
  std::vector<TokenCandidate> buffer_;  // n_vocab entries, reserved once
  Candidates candidates_;
  PenaltyWindow penalty_window_;
  Pcg32 rng_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  std::optional<GrammarStage> grammar_;
  std::optional<GrammarStage> answer_or_reasoning_;     // either(grammar, opening)
  std::optional<GrammarStage> answer_after_reasoning_;  // then(separator, grammar)
  GrammarPhase phase_ = GrammarPhase::Answer;
};

}  // namespace peak::sampling
