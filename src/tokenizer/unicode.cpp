#include "tokenizer/unicode.h"

#include <algorithm>

namespace peak::tokenizer::unicode {

uint16_t flags(uint32_t cpt) {
  if (cpt >= 0x110000) {
    return 0;
  }
  // The last range whose first code point is <= cpt (the table starts at U+0000).
  const FlagRange* end = kFlagRanges + kFlagRangeCount;
  const FlagRange* next = std::upper_bound(kFlagRanges, end, cpt,
                                           [](uint32_t value, const FlagRange& range) { return value < range.first; });
  return (next - 1)->flags;
}

uint32_t to_lower(uint32_t cpt) {
  const CodepointPair* end = kLowercase + kLowercaseCount;
  const CodepointPair* it = std::lower_bound(kLowercase, end, cpt,
                                             [](const CodepointPair& pair, uint32_t value) { return pair.from < value; });
  return it != end && it->from == cpt ? it->to : cpt;
}

uint32_t nfd_first(uint32_t cpt) {
  const NfdRange* end = kNfdFirst + kNfdFirstCount;
  const NfdRange* it = std::upper_bound(kNfdFirst, end, cpt,
                                        [](uint32_t value, const NfdRange& range) { return value < range.first; });
  if (it == kNfdFirst) return cpt;
  --it;
  return cpt <= it->last ? it->nfd : cpt;
}

}  // namespace peak::tokenizer::unicode
