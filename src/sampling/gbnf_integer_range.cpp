#include "sampling/gbnf_integer_range.h"

#include <vector>

#include "sampling/gbnf_text.h"

namespace peak::sampling {
namespace {

std::string digit_class(char first, char last) {
  return first == last ? std::string{'[', first, ']'} : std::string{'[', first, '-', last, ']'};
}

// Any `count` digits (count >= 1).
std::string any_digits(size_t count) {
  return "[0-9]" + gbnf_repetition(static_cast<uint32_t>(count), static_cast<uint32_t>(count));
}

std::string group(const std::vector<std::string>& alternatives) {
  std::string out;
  for (const std::string& alternative : alternatives) out += (out.empty() ? "" : " | ") + alternative;
  return alternatives.size() > 1 ? "(" + out + ")" : out;
}

// The alternatives for the strings of low.size() digits from low to high
// (same length, low <= high, leading zeros allowed: they are inner digits).
std::vector<std::string> same_length(const std::string& low, const std::string& high) {
  size_t common = 0;
  while (common < low.size() && low[common] == high[common]) ++common;
  if (common == low.size()) return {gbnf_literal(low)};
  if (common > 0) {
    const std::string rest = group(same_length(low.substr(common), high.substr(common)));
    return {gbnf_literal(low.substr(0, common)) + " " + rest};
  }
  const size_t tail = low.size() - 1;
  if (tail == 0) return {digit_class(low[0], high[0])};
  const std::string low_tail = low.substr(1);
  const std::string high_tail = high.substr(1);
  char middle_first = low[0];
  char middle_last = high[0];
  std::vector<std::string> out;
  if (low_tail != std::string(tail, '0')) {
    out.push_back(digit_class(low[0], low[0]) + " " + group(same_length(low_tail, std::string(tail, '9'))));
    ++middle_first;
  }
  const bool high_partial = high_tail != std::string(tail, '9');
  if (high_partial) --middle_last;
  if (middle_first <= middle_last) out.push_back(digit_class(middle_first, middle_last) + " " + any_digits(tail));
  if (high_partial) {
    out.push_back(digit_class(high[0], high[0]) + " " + group(same_length(std::string(tail, '0'), high_tail)));
  }
  return out;
}

int64_t power_of_ten(size_t exponent) {
  int64_t value = 1;
  for (size_t i = 0; i < exponent; ++i) value *= 10;
  return value;
}

// Non-negative [low, high]: one group of alternatives per digit count, the
// counts whose whole span is inside taken together as `[1-9] [0-9]{a,b}`.
std::vector<std::string> non_negative(int64_t low, int64_t high) {
  std::vector<std::string> out;
  const size_t low_digits = std::to_string(low).size();
  const size_t high_digits = std::to_string(high).size();
  size_t digits = low_digits;
  while (digits <= high_digits) {
    const int64_t first = digits == 1 ? 0 : power_of_ten(digits - 1);
    const int64_t last = power_of_ten(digits) - 1;
    if (digits > 1 && low <= first && high >= last) {
      size_t full_end = digits;
      while (full_end + 1 <= high_digits && high >= power_of_ten(full_end + 1) - 1) ++full_end;
      out.push_back("[1-9] [0-9]" +
                    gbnf_repetition(static_cast<uint32_t>(digits - 1), static_cast<uint32_t>(full_end - 1)));
      digits = full_end + 1;
      continue;
    }
    const std::string from = std::to_string(std::max(low, first));
    const std::string to = std::to_string(std::min(high, last));
    for (std::string& alternative : same_length(from, to)) out.push_back(std::move(alternative));
    ++digits;
  }
  return out;
}

}  // namespace

std::string gbnf_integer_range(int64_t low, int64_t high) {
  std::vector<std::string> alternatives;
  if (low < 0) {
    const int64_t nearest = high < 0 ? -high : 1;
    alternatives.push_back("\"-\" " + group(non_negative(nearest, -low)));
  }
  if (high >= 0) {
    for (std::string& alternative : non_negative(std::max<int64_t>(low, 0), high)) {
      alternatives.push_back(std::move(alternative));
    }
  }
  std::string out;
  for (const std::string& alternative : alternatives) out += (out.empty() ? "" : " | ") + alternative;
  return out;
}

}  // namespace peak::sampling
