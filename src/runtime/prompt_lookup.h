// Drafts for speculative decoding by prompt lookup: the text a generation
// writes often repeats what it has read (a summary, an edit, an answer that
// quotes its sources), so the tokens that followed the latest earlier
// occurrence of the last few tokens are a cheap guess of what comes next.
// The target model verifies the guess in one pass (runtime::generate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace peak::runtime {

// N-grams shorter than this are not looked up: a single token recurs too
// often for what followed it to predict what follows now.
constexpr int32_t kMinLookupNgram = 2;

// Finds the longest n-gram, from ngram_max down to kMinLookupNgram tokens,
// that ends `seen` and occurs earlier in it, and writes the tokens that
// followed its latest earlier occurrence to `draft` (at most max_draft).
// Returns how many it wrote: 0 when no such n-gram occurs. Allocates nothing.
size_t draft_by_lookup(const std::vector<int32_t>& seen, int32_t ngram_max, size_t max_draft, int32_t* draft);

}  // namespace peak::runtime
