// The candidate list the samplers work on: one (token id, logit, probability)
// per vocabulary entry still in the running, in a buffer the chain reserves once.
//
// Samplers shrink `size` and may reorder the entries. Every reordering uses the
// total order of ranks_before (higher logit first, lower id first on ties), so
// the result does not depend on the standard library's sort algorithm, and the
// same inputs give the same candidates on every platform.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::sampling {

struct TokenCandidate {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;  // probability, valid after softmax()
};

struct Candidates {
  TokenCandidate* data = nullptr;
  size_t size = 0;
  bool sorted = false;  // data[0..size) ordered by ranks_before
};

// Higher logit first; equal logits: lower id first.
inline bool ranks_before(const TokenCandidate& a, const TokenCandidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Fills buffer[0..n_vocab) from logits in id order. A NaN logit becomes -inf:
// a token whose score is undefined can never be chosen.
Candidates load_logits(const float* logits, int32_t n_vocab, TokenCandidate* buffer);

// True when at least one candidate can be chosen (a logit above -inf).
bool has_selectable(const Candidates& candidates);

// Orders the first k entries (the k best overall); the rest stay in unspecified order.
void sort_best(Candidates& candidates, size_t k);

// Sets p of every candidate to softmax(logit). Candidates at +inf share all the
// probability equally (the limit of softmax as their logits grow); candidates at
// -inf get 0. Throws std::invalid_argument when every logit is -inf.
void softmax(Candidates& candidates);

}  // namespace peak::sampling
