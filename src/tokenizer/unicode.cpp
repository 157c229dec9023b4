#include "tokenizer/unicode.h"

#include <algorithm>

namespace peak::tokenizer::unicode {

uint8_t flags(uint32_t cpt) {
  if (cpt >= 0x110000) {
    return 0;
  }
  // The last range whose first code point is <= cpt (the table starts at U+0000).
  const FlagRange* end = kFlagRanges + kFlagRangeCount;
  const FlagRange* next = std::upper_bound(kFlagRanges, end, cpt,
                                           [](uint32_t value, const FlagRange& range) { return value < range.first; });
  return (next - 1)->flags;
}

}  // namespace peak::tokenizer::unicode
