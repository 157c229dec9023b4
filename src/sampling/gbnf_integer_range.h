// The integers of a closed range [low, high] as GBNF alternatives over their
// decimal text, exactly: no leading zeros, "-" before negative values, never
// "-0". The text grows with the number of digits, not with the range's size:
// [1, 100] is `[1-9] | [1-9] [0-9] | "100"`.
#pragma once

#include <cstdint>
#include <string>

namespace peak::sampling {

// low <= high; both within +-(10^18 - 1).
std::string gbnf_integer_range(int64_t low, int64_t high);

}  // namespace peak::sampling
