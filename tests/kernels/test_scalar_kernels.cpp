// The scalar reference kernels against plain float maths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/dispatch.h"
#include "kernels/float16.h"
#include "kernels/kernels.h"

namespace peak::kernels {
namespace {

TEST(Blocks, SizesMatchTypeTraits) {
  struct Case { GgmlType type; size_t size; };
  const Case cases[] = {
      {GgmlType::Q4_0, sizeof(BlockQ4_0)}, {GgmlType::Q4_1, sizeof(BlockQ4_1)},
      {GgmlType::Q5_0, sizeof(BlockQ5_0)}, {GgmlType::Q5_1, sizeof(BlockQ5_1)},
      {GgmlType::Q8_0, sizeof(BlockQ8_0)}, {GgmlType::Q8_1, sizeof(BlockQ8_1)},
      {GgmlType::Q2_K, sizeof(BlockQ2_K)}, {GgmlType::Q3_K, sizeof(BlockQ3_K)},
      {GgmlType::Q4_K, sizeof(BlockQ4_K)}, {GgmlType::Q5_K, sizeof(BlockQ5_K)},
      {GgmlType::Q6_K, sizeof(BlockQ6_K)}, {GgmlType::Q8_K, sizeof(BlockQ8_K)},
      {GgmlType::IQ4_NL, sizeof(BlockIQ4_NL)}, {GgmlType::IQ4_XS, sizeof(BlockIQ4_XS)},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ggml_type_traits(static_cast<uint32_t>(c.type))->block_bytes, c.size)
        << ggml_type_name(static_cast<uint32_t>(c.type));
  }
}

TEST(ScalarKernels, Q4_0KnownBlock) {
  BlockQ4_0 b{};
  b.d = fp32_to_fp16(0.5f);
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  float out[32];
  kernels_for_isa(GgmlType::Q4_0, Isa::Scalar).to_float(&b, out, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], 0.5f * static_cast<float>(j - 8));
    EXPECT_EQ(out[j + 16], 0.5f * static_cast<float>(7 - j));
  }
}

TEST(ScalarKernels, Q8_0DotMatchesFloatDot) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const int n = 256;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = dist(rng);
  for (float& v : y) v = dist(rng);
  const TypeKernels& k = kernels_for_isa(GgmlType::Q8_0, Isa::Scalar);
  std::vector<BlockQ8_0> qx(n / 32), qy(n / 32);
  k.from_float(x.data(), qx.data(), n);
  k.from_float(y.data(), qy.data(), n);
  float dot = 0.0f, expected = 0.0f;
  k.vec_dot(n, &dot, qx.data(), qy.data());
  for (int i = 0; i < n; ++i) expected += x[i] * y[i];
  EXPECT_NEAR(dot, expected, 0.05f * std::sqrt(static_cast<float>(n)));
}

TEST(Dispatch, ActiveTableHasMinimalTypes) {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    const TypeKernels& k = kernels_for(t);
    EXPECT_NE(k.to_float, nullptr);
    EXPECT_NE(k.from_float, nullptr);
    EXPECT_NE(k.vec_dot, nullptr);
    EXPECT_NE(k.gemm, nullptr);
  }
  EXPECT_STREQ(isa_name(Isa::Avx512), "avx512");
}

TEST(Dispatch, PriorityTypesHaveSimdKernelsOnEveryPath) {
  for (int i = 1; i < kIsaCount; ++i) {
    const Isa isa = static_cast<Isa>(i);
    if (!cpu_has_isa(isa)) continue;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16}) {
      const Isa path = kernel_path_for(t, isa);
      EXPECT_NE(path, Isa::Scalar) << ggml_type_name(static_cast<uint32_t>(t)) << " on " << isa_name(isa);
      // Integer types use the path's own int8 dot (avx512bf16 adds only
      // attention's bf16 kernels to avx512's); F16 may keep a lower path's kernel.
      const Isa int8_path = isa == Isa::Avx512Bf16 ? Isa::Avx512 : isa;
      if (t != GgmlType::F16) {
        EXPECT_EQ(path, int8_path) << ggml_type_name(static_cast<uint32_t>(t)) << " on " << isa_name(isa);
      }
    }
  }
}

TEST(Dispatch, PeakIsaNamesRoundTrip) {
  for (int i = 0; i < kIsaCount; ++i) {
    Isa parsed;
    ASSERT_TRUE(isa_from_name(isa_name(static_cast<Isa>(i)), &parsed));
    EXPECT_EQ(parsed, static_cast<Isa>(i));
  }
  Isa unused;
  EXPECT_FALSE(isa_from_name("sse9", &unused));
  EXPECT_TRUE(cpu_has_isa(active_isa()));
}

// The x86 kernels read the tuning of the lowest x86 path
// (x86/stream_prefetch.inc, x86_tuning): it must be that of every x86 path.
TEST(Dispatch, X86PathsShareOneTuning) {
  for (Isa isa : {Isa::AvxVnni, Isa::Avx512, Isa::Avx512Bf16}) {
    if (!cpu_has_isa(isa)) continue;
    const KernelTuning& lowest = kernel_tuning_for_isa(Isa::Avx2);
    EXPECT_EQ(kernel_tuning_for_isa(isa).prefetch_decode_rows, lowest.prefetch_decode_rows) << isa_name(isa);
    EXPECT_EQ(kernel_tuning_for_isa(isa).prefetch_into_l2, lowest.prefetch_into_l2) << isa_name(isa);
  }
}

TEST(Dispatch, PeakIsaRequestsFallBackWhenUnavailable) {
  const Isa best = best_cpu_isa();
  EXPECT_EQ(resolve_isa_request(nullptr), best);
  EXPECT_EQ(resolve_isa_request(""), best);
  EXPECT_EQ(resolve_isa_request("scalar"), Isa::Scalar);
  EXPECT_EQ(resolve_isa_request("no-such-path"), best);  // warns on stderr
  for (int i = 0; i < kIsaCount; ++i) {
    const Isa isa = static_cast<Isa>(i);
    EXPECT_EQ(resolve_isa_request(isa_name(isa)), cpu_has_isa(isa) ? isa : best) << isa_name(isa);
  }
}

}  // namespace
}  // namespace peak::kernels
