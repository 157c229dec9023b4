// The sparse sampler of SSSKV-lite ("SnapKV-lite"): thins the text handed to
// the summariser (old summary + dropped history) to a token budget. It keeps
// the first quarter and the last quarter of the budget verbatim (the start is
// the attention sink of StreamingLLM and holds the old summary; the end is the
// freshest dropped text) and samples the middle at a uniform stride.
#pragma once

#include <cstdint>
#include <vector>

namespace peak::chat {

// Indices (ascending, unique) of the tokens to keep out of `n`, at most `budget`
// of them: all of them when n <= budget. Otherwise head = budget / 4 and
// tail = budget / 4 tokens are kept at both ends and the remaining
// m = budget - head - tail are taken from the middle span [head, n - tail) at
// positions head + floor((2j + 1) * span / (2m)), j = 0..m-1 (the centre of
// each of m equal slices). Throws std::invalid_argument for negative sizes.
std::vector<int64_t> sparse_sample(int64_t n, int64_t budget);

}  // namespace peak::chat
