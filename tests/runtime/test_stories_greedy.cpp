// The real stories260K model (llama2.c's TinyStories checkpoint): greedy decoding
// from BOS must reproduce the 300 token ids of shared/models/stories260K.greedy-ids.txt,
// which come from an independent float64 implementation and match llama.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "batched_prefill.h"
#include "kernels/ggml_type.h"
#include "model/model.h"
#include "model/quantize.h"
#include "runtime/context.h"

namespace peak {

using kernels::ggml_type_name;
using kernels::GgmlType;

namespace {

const std::string kShared = PEAK_SHARED_DIR;

std::vector<int32_t> expected_ids() {
  std::ifstream in(kShared + "/models/stories260K.greedy-ids.txt");
  std::vector<int32_t> ids;
  int32_t id;
  while (in >> id) ids.push_back(id);
  return ids;
}

int32_t argmax(const float* logits, int64_t n) {
  return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

std::vector<int32_t> greedy_from_bos(const model::Model& m, runtime::ContextParams params, size_t n) {
  runtime::Context ctx(m, params);
  std::vector<int32_t> out;
  int32_t token = 1;  // BOS
  for (size_t i = 0; i < n; ++i) {
    ctx.eval(&token, 1);
    token = argmax(ctx.logits(), ctx.n_vocab());
    out.push_back(token);
  }
  return out;
}

TEST(Stories260K, GreedyDecodingMatchesTheReferenceIds) {
  const std::vector<int32_t> expected = expected_ids();
  ASSERT_EQ(expected.size(), 300u);
  const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  runtime::ContextParams params;
  params.n_ctx = 512;
  params.type_k = GgmlType::F32;
  params.type_v = GgmlType::F32;
  for (int threads : {1, 2}) {
    params.n_threads = threads;
    EXPECT_EQ(greedy_from_bos(*m, params, expected.size()), expected) << threads << " threads";
  }
}

TEST(Stories260K, GreedyDecodingWithAnF16CacheStaysOnTrack) {
  const std::vector<int32_t> expected = expected_ids();
  const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  runtime::ContextParams params;
  params.n_ctx = 512;
  const std::vector<int32_t> got = greedy_from_bos(*m, params, expected.size());
  // F16 keys and values round the cache; the reference's smallest top-2 logit
  // gap before step 114 is far above that rounding (SOURCES.md).
  EXPECT_TRUE(std::equal(expected.begin(), expected.begin() + 114, got.begin()));
  size_t same = 0;
  while (same < got.size() && got[same] == expected[same]) ++same;
  std::printf("F16 KV cache: first %zu of 300 greedy ids match\n", same);
}

// The batched and the single-token matrix products sum in different orders
// on SIMD paths (not on the scalar one), so K and V differ by an fp32 ulp or
// so. An F32 cache keeps that (seen: 8e-6 on AVX2). An F16 cache rounds each
// key and value: one that sits on a rounding boundary lands a whole F16 step
// (2^-11 of it) apart, and a few such do over five layers (seen: 2.2e-3 on
// AVX2, 0 on the scalar path; the F16 rounding itself moves these logits by
// 1.4e-2 from the F32 cache's).
TEST(Stories260K, BatchedPrefillGivesTheLogitsOfTokenByTokenDecoding) {
  const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  std::vector<int32_t> prompt = {1};
  const std::vector<int32_t> ids = expected_ids();
  prompt.insert(prompt.end(), ids.begin(), ids.begin() + 40);
  const int64_t n = static_cast<int64_t>(prompt.size());

  for (const auto& [cache_type, tolerance] : {std::pair{GgmlType::F32, 1e-4}, std::pair{GgmlType::F16, 5e-3}}) {
    runtime::ContextParams params;
    params.n_ctx = 128;
    params.n_batch = 16;  // several batches, the last one partial
    params.type_k = params.type_v = cache_type;
    params.logits_all = true;
    runtime::Context batched(*m, params);
    params.logits_all = false;
    runtime::Context stepwise(*m, params);
    EXPECT_LT(test::batched_versus_stepwise(batched, stepwise, prompt), tolerance)
        << ggml_type_name(static_cast<uint32_t>(cache_type));
    EXPECT_EQ(batched.kv().used(), n);
  }
}

TEST(Stories260K, AsQ8_0StillDecodesTheReferenceIds) {
  const std::string q8 = ::testing::TempDir() + "peak_stories_q8_decode.gguf";
  model::QuantizeOptions o;
  o.type = "Q8_0";
  model::quantize_model(kShared + "/models/stories260K.gguf", q8, o);
  const std::vector<int32_t> expected = expected_ids();
  const auto m = model::Model::load(q8);
  runtime::ContextParams params;
  params.n_ctx = 512;
  runtime::Context ctx(*m, params);
  int32_t token = 1;
  size_t matching = 0;
  bool diverged = false;
  for (size_t i = 0; i < expected.size(); ++i) {
    ctx.eval(&token, 1);
    token = static_cast<int32_t>(std::max_element(ctx.logits(), ctx.logits() + ctx.n_vocab()) - ctx.logits());
    if (token != expected[i]) diverged = true;
    if (!diverged) ++matching;
    if (diverged) token = expected[i];  // keep following the reference to count later matches too
  }
  std::printf("stories260K Q8_0: first %zu of 300 greedy ids match\n", matching);
  EXPECT_GE(matching, 100u);
  std::remove(q8.c_str());
}

}  // namespace
}  // namespace peak
