#include "sampling/penalties.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace peak::sampling {

PenaltyWindow::PenaltyWindow(int32_t n_vocab, int32_t window)
    : recent_(static_cast<size_t>(std::max(window, 0))), counts_(static_cast<size_t>(n_vocab), 0) {}

void PenaltyWindow::accept(int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= counts_.size()) {
    throw std::out_of_range("sampling: accepted token " + std::to_string(token) + " is outside the vocabulary of " +
                            std::to_string(counts_.size()) + " tokens");
  }
  if (recent_.empty()) return;
  const auto capacity = static_cast<int32_t>(recent_.size());
  if (filled_ == capacity) {
    --counts_[static_cast<size_t>(recent_[static_cast<size_t>(next_)])];
  } else {
    ++filled_;
  }
  recent_[static_cast<size_t>(next_)] = token;
  ++counts_[static_cast<size_t>(token)];
  next_ = (next_ + 1) % capacity;
}

void PenaltyWindow::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  next_ = 0;
  filled_ = 0;
}

void apply_penalties(Candidates& candidates, const PenaltyWindow& window, const PenaltyStrengths& strengths) {
  const bool all_off = strengths.repeat == 1.0f && strengths.frequency == 0.0f && strengths.presence == 0.0f;
  if (window.size() == 0 || all_off) return;
  for (size_t i = 0; i < candidates.size; ++i) {
    TokenCandidate& c = candidates.data[i];
    const int32_t occurrences = window.count(c.id);
    if (occurrences == 0) continue;
    if (c.logit <= 0.0f) {
      c.logit *= strengths.repeat;
    } else {
      c.logit /= strengths.repeat;
    }
    c.logit -= static_cast<float>(occurrences) * strengths.frequency + strengths.presence;
  }
  candidates.sorted = false;
}

}  // namespace peak::sampling
