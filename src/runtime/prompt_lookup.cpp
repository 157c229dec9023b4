#include "runtime/prompt_lookup.h"

#include <algorithm>

namespace peak::runtime {

size_t draft_by_lookup(const std::vector<int32_t>& seen, int32_t ngram_max, size_t max_draft, int32_t* draft) {
  if (max_draft == 0) return 0;
  const size_t size = seen.size();
  for (auto n = static_cast<size_t>(std::max(ngram_max, 0)); n >= static_cast<size_t>(kMinLookupNgram); --n) {
    if (n >= size) continue;  // an earlier occurrence needs a token before the end's n-gram
    const int32_t* tail = seen.data() + size - n;
    // Latest first: the nearer text is likelier to be the one being repeated.
    for (size_t start = size - n; start-- > 0;) {
      if (!std::equal(tail, tail + n, seen.data() + start)) continue;
      const size_t from = start + n;
      const size_t count = std::min(max_draft, size - from);
      std::copy(seen.data() + from, seen.data() + from + count, draft);
      return count;
    }
  }
  return 0;
}

}  // namespace peak::runtime
