// KvCache::snapshot_first: the first cells of a cache, as restore() takes them,
// carry a kept prefix into another cache. Checked against a fresh prefill of
// the same tokens (stories260K, F32 cache), not against the cache they came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"

namespace peak::runtime {

using kernels::GgmlType;

namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf");
  return *m;
}

ContextParams f32_params() {
  ContextParams p;
  p.n_ctx = 64;
  p.n_threads = 1;
  p.type_k = p.type_v = GgmlType::F32;
  return p;
}

TEST(KvSnapshot, TheFirstCellsContinueAsAFreshPrefillOfTheirTokens) {
  const std::vector<int32_t> tokens = {1, 403, 260, 21, 29, 368, 95, 300, 77, 12, 440, 9};
  const int64_t kept = 5;
  Context source(stories(), f32_params());
  source.eval(tokens.data(), static_cast<int64_t>(tokens.size()));
  const std::vector<uint8_t> first = source.kv().snapshot_first(kept);

  // The snapshot's format: per layer, the first cells of K, then of V.
  const std::vector<uint8_t> all = source.kv().snapshot();
  const size_t k = source.kv().cell_bytes_k(), v = source.kv().cell_bytes_v();
  const auto used = static_cast<size_t>(source.kv().used());
  std::vector<uint8_t> sliced;
  for (size_t l = 0, at = 0; l < source.kv().layers().size(); ++l, at += used * (k + v)) {
    sliced.insert(sliced.end(), all.begin() + static_cast<std::ptrdiff_t>(at),
                  all.begin() + static_cast<std::ptrdiff_t>(at + kept * k));
    sliced.insert(sliced.end(), all.begin() + static_cast<std::ptrdiff_t>(at + used * k),
                  all.begin() + static_cast<std::ptrdiff_t>(at + used * k + kept * v));
  }
  EXPECT_EQ(first, sliced);

  Context copy(stories(), f32_params());
  const std::vector<int32_t> positions(source.kv().positions().begin(), source.kv().positions().begin() + kept);
  copy.kv().restore(first, positions);
  copy.eval(tokens.data() + kept, static_cast<int64_t>(tokens.size()) - kept);
  Context fresh(stories(), f32_params());
  fresh.eval(tokens.data(), static_cast<int64_t>(tokens.size()));
  double max_diff = 0;
  for (int64_t i = 0; i < fresh.n_vocab(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(copy.logits()[i] - fresh.logits()[i])));
  }
  EXPECT_LT(max_diff, 1e-4);

  EXPECT_TRUE(source.kv().snapshot_first(0).empty());
  EXPECT_THROW(source.kv().snapshot_first(static_cast<int64_t>(tokens.size()) + 1), std::out_of_range);
  EXPECT_THROW(source.kv().snapshot_first(-1), std::out_of_range);
}

}  // namespace
}  // namespace peak::runtime
