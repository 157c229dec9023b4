// Repetition, frequency and presence penalties over the last N accepted tokens,
// with llama.cpp's semantics (llama_sampler_penalties).
#pragma once

#include <cstdint>
#include <vector>

#include "sampling/candidates.h"

namespace peak::sampling {

// The last `window` accepted tokens and how often each occurs among them.
// Both buffers are sized at construction; accept() never allocates.
class PenaltyWindow {
 public:
  PenaltyWindow(int32_t n_vocab, int32_t window);

  // Throws std::out_of_range for a token outside [0, n_vocab).
  void accept(int32_t token);
  void reset();
  int32_t count(int32_t token) const { return counts_[static_cast<size_t>(token)]; }
  int32_t size() const { return filled_; }

 private:
  std::vector<int32_t> recent_;  // ring buffer of the last `window` tokens
  std::vector<int32_t> counts_;  // per token id: occurrences in recent_
  int32_t next_ = 0;             // where the next token goes (the oldest once full)
  int32_t filled_ = 0;
};

struct PenaltyStrengths {
  float repeat = 1.0f;     // > 0; 1 = off
  float frequency = 0.0f;  // subtracted once per occurrence
  float presence = 0.0f;   // subtracted once if the token occurs at all
};

// For every candidate occurring c > 0 times in the window: a positive logit is
// divided by `repeat`, a negative one multiplied (so both become less likely),
// then c * frequency + presence is subtracted.
void apply_penalties(Candidates& candidates, const PenaltyWindow& window, const PenaltyStrengths& strengths);

}  // namespace peak::sampling
