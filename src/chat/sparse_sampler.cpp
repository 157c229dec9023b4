#include "chat/sparse_sampler.h"

#include <stdexcept>

namespace peak::chat {

std::vector<int64_t> sparse_sample(int64_t n, int64_t budget) {
  if (n < 0 || budget < 0) throw std::invalid_argument("sparse_sample: sizes must not be negative");
  std::vector<int64_t> keep;
  if (n <= budget) {
    keep.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) keep.push_back(i);
    return keep;
  }
  const int64_t head = budget / 4;
  const int64_t tail = budget / 4;
  const int64_t middle = budget - head - tail;
  const int64_t span = n - head - tail;  // > middle, since n > budget
  keep.reserve(static_cast<size_t>(budget));
  for (int64_t i = 0; i < head; ++i) keep.push_back(i);
  for (int64_t j = 0; j < middle; ++j) keep.push_back(head + (2 * j + 1) * span / (2 * middle));
  for (int64_t i = n - tail; i < n; ++i) keep.push_back(i);
  return keep;
}

}  // namespace peak::chat
