// Checking a KV cache's cells against the same cells computed again: what a
// restored session does, when asked, before it trusts cells read from a file.
//
// Cells are compared row by row (one kv head of one cell of one layer's K or
// V: head_dim values), as floats, with an allowance relative to the largest
// magnitude of the recomputed row (the trusted one sets the scale):
//   allowance = (storage step of the type + arithmetic allowance) * row scale
// - the storage step: how far two values that differ by a hair may land apart
//   once stored: F32 0; F16 2^-11 (half rounding, relative to the value, at
//   most the row's largest); Q8_0 1/127 + 2^-11 (a code step is the block's
//   largest magnitude / 127, at most the row's; two values on either side of a
//   rounding boundary take neighbouring codes; the block's scale is a half);
//   Q4_0 1/8 + 2^-11 (likewise, with 8 steps a side).
// - the arithmetic allowance, kKvArithmeticAllowance: the cells were computed
//   by other batch sizes (a turn evaluates its answer a token at a time, a
//   prefill in batches) and maybe another thread count, which sum the same
//   products in other orders; deeper layers carry what earlier ones moved.
// What the check is for differs from the row's values by their own scale: a
// cell of another token, rows in another order, values overwritten (a file
// whose every value is 1.0).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kv_cache.h"

namespace peak::runtime {

// 1/32 of a row's scale. Measured against a fresh prefill (batches of 7 and
// 512, 1 and 2 threads), the cells of three turns (answers evaluated a token at
// a time, then settled) differ by at most 2e-6 of their row's scale in F32 and
// 1e-3 in F16 on stories260K's 5 layers, and not at all in Q8_0 and Q4_0 on a
// synthetic 2-layer model. Real models' deeper stacks carry more; what the
// check is for is off by the whole scale (Recent's cells after a drop, which
// a prefill does not give again, differ by up to twice it).
constexpr double kKvArithmeticAllowance = 1.0 / 32;

// The first row found differing more than allowed.
struct KvRowDifference {
  int64_t layer = 0;
  bool value = false;  // a row of V, else of K
  int64_t cell = 0;
  int64_t head = 0;
  double difference = 0;  // the largest |loaded - recomputed| in the row
  double allowed = 0;
};

// Compares the first `n` used cells of `kv` with `recomputed`, a snapshot of
// the same cells computed again (KvCache::snapshot_first(n) of a cache of the
// same shape and types). Rows are visited layer by layer, K before V, cell by
// cell, head by head; returns the first that differs more than allowed, or
// nothing. Throws std::invalid_argument when `recomputed` is not the size of
// n cells, std::out_of_range when n passes the used cells.
std::optional<KvRowDifference> first_kv_difference(const KvCache& kv, const std::vector<uint8_t>& recomputed,
                                                   int64_t n);

}  // namespace peak::runtime
