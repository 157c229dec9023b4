// Every type on every path this CPU supports against the scalar reference, on
// random data whose lengths are multiples of the block size but not of any
// SIMD width, and row counts that leave partial tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/float16.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;
using testing_util::nmse;
using testing_util::quantize_rows;
using testing_util::random_floats;
using testing_util::row_bytes;

struct PathCase {
  GgmlType type;
  Isa isa;
};

std::string case_name(const ::testing::TestParamInfo<PathCase>& p) {
  return std::string(ggml_type_name(static_cast<uint32_t>(p.param.type))) + "_" + isa_name(p.param.isa);
}

std::vector<PathCase> all_cases() {
  std::vector<PathCase> out;
  for (GgmlType t : testing_util::all_kernel_types()) {
    for (Isa isa : available_isas()) out.push_back({t, isa});
  }
  return out;
}

// Quantized types that weights are stored in: not the float types and not
// the activation-only Q8_1 and Q8_K (those are covered by the quantized-data tests).
bool is_quantized_weight_type(GgmlType t) {
  return ggml_type_traits(static_cast<uint32_t>(t))->block_elems != 1 && t != GgmlType::Q8_1 && t != GgmlType::Q8_K;
}

std::vector<PathCase> quantized_weight_cases() {
  std::vector<PathCase> out;
  for (const PathCase& c : all_cases()) {
    if (is_quantized_weight_type(c.type)) out.push_back(c);
  }
  return out;
}

// Lengths: 7, 13 and 45 blocks of 32 (45 crosses the 32-block chunks of the
// row-packed gemms), 3, 5 and 7 super-blocks of 256, or for the float types
// (block of 1) those element counts plus a few, to exercise the vector tails.
constexpr int kLengthVariants = 3;
int64_t test_length(GgmlType t, int variant) {
  const uint32_t block = ggml_type_traits(static_cast<uint32_t>(t))->block_elems;
  const int64_t blocks[kLengthVariants] = {7, 13, 45};
  const int64_t super_blocks[kLengthVariants] = {3, 5, 7};
  if (block == 1) return 32 * blocks[variant] + 5 + 2 * variant;
  return block == 256 ? 256 * super_blocks[variant] : 32 * blocks[variant];
}

class KernelPaths : public ::testing::TestWithParam<PathCase> {
 protected:
  const TypeKernels& ref() const { return kernels_for_isa(GetParam().type, Isa::Scalar); }
  const TypeKernels& path() const { return kernels_for_isa(GetParam().type, GetParam().isa); }
};

TEST_P(KernelPaths, ToFloatMatchesScalar) {
  const GgmlType t = GetParam().type;
  for (int variant = 0; variant < kLengthVariants; ++variant) {
    const int64_t n = test_length(t, variant);
    const std::vector<float> x = random_floats(static_cast<size_t>(n), 11u + static_cast<uint32_t>(variant));
    const std::vector<uint8_t> q = quantize_rows(t, x, n, 1);
    std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    ref().to_float(q.data(), want.data(), n);
    path().to_float(q.data(), got.data(), n);
    EXPECT_EQ(got, want) << "n=" << n;
  }
}

TEST_P(KernelPaths, FromFloatWritesScalarBytes) {
  const GgmlType t = GetParam().type;
  for (int variant = 0; variant < kLengthVariants; ++variant) {
    const int64_t n = test_length(t, variant);
    std::vector<float> x = random_floats(static_cast<size_t>(n), 41u + static_cast<uint32_t>(variant));
    // Rounding ties: with 127 the largest magnitude of every block the Q8
    // scales are exactly 1, so values k + 0.5 are halfway cases.
    for (size_t i = 0; i < x.size(); ++i) {
      if (i % 32 == 0) x[i] = 127.0f;
      if (i % 7 == 1) x[i] = static_cast<float>(static_cast<int>(i % 50) - 25) + 0.5f;
    }
    std::vector<uint8_t> want(row_bytes(t, n)), got(want.size());
    ref().from_float(x.data(), want.data(), n);
    path().from_float(x.data(), got.data(), n);
    EXPECT_EQ(got, want) << "n=" << n;
  }
}

TEST_P(KernelPaths, VecDotAndGemmMatchScalar) {
  const GgmlType t = GetParam().type;
  const GgmlType partner = ref().dot_partner;
  ASSERT_EQ(path().dot_partner, partner);
  // Partial tiles in both directions.
  const int64_t rows_x = 19, rows_y = 7;
  for (int variant = 0; variant < kLengthVariants; ++variant) {
    const int64_t n = test_length(t, variant);
    const std::vector<float> xf = random_floats(static_cast<size_t>(n * rows_x), 21u + static_cast<uint32_t>(variant));
    const std::vector<float> yf = random_floats(static_cast<size_t>(n * rows_y), 31u + static_cast<uint32_t>(variant));
    const std::vector<uint8_t> x = quantize_rows(t, xf, n, rows_x);
    const std::vector<uint8_t> y = quantize_rows(partner, yf, n, rows_y);
    const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
    std::vector<float> want(static_cast<size_t>(rows_x * rows_y)), dots(want.size()), gemm(want.size(), -1.0f);
    for (int64_t ry = 0; ry < rows_y; ++ry) {
      for (int64_t rx = 0; rx < rows_x; ++rx) {
        const size_t o = static_cast<size_t>(ry * rows_x + rx);
        ref().vec_dot(n, &want[o], x.data() + rx * static_cast<int64_t>(xs), y.data() + ry * static_cast<int64_t>(ys));
        path().vec_dot(n, &dots[o], x.data() + rx * static_cast<int64_t>(xs), y.data() + ry * static_cast<int64_t>(ys));
      }
    }
    path().gemm(n, x.data(), xs, rows_x, y.data(), ys, rows_y, gemm.data(), static_cast<size_t>(rows_x));
    // One activation row: the decode GEMV some paths special-case.
    std::vector<float> gemv(static_cast<size_t>(rows_x), -1.0f);
    path().gemm(n, x.data(), xs, rows_x, y.data(), ys, 1, gemv.data(), static_cast<size_t>(rows_x));
    const std::vector<float> want_gemv(want.begin(), want.begin() + rows_x);
    EXPECT_LT(nmse(dots, want), 1e-9) << "vec_dot, n=" << n;
    EXPECT_LT(nmse(gemm, want), 1e-9) << "gemm, n=" << n;
    EXPECT_LT(nmse(gemv, want_gemv), 1e-9) << "gemm with one activation row, n=" << n;
  }
}

// A prefill-sized product: 300 weight rows cross the 256-row panels of the
// row-packed gemms with a partial 16-row tile, 133 activation rows cross their
// 128-row groups with a partial tile, and 37 blocks cross a 32-block chunk.
// Every product in a sample that includes all boundary rows is checked.
TEST_P(KernelPaths, GemmAcrossPanelsAndGroupsMatchesScalar) {
  const GgmlType t = GetParam().type;
  const GgmlType partner = ref().dot_partner;
  const uint32_t block = ggml_type_traits(static_cast<uint32_t>(t))->block_elems;
  const int64_t n = block == 256 ? 256 * 5 : 32 * 37, rows_x = 300, rows_y = 133;
  const std::vector<uint8_t> x = quantize_rows(t, random_floats(static_cast<size_t>(n * rows_x), 61), n, rows_x);
  const std::vector<uint8_t> y = quantize_rows(partner, random_floats(static_cast<size_t>(n * rows_y), 62), n, rows_y);
  const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
  std::vector<float> gemm(static_cast<size_t>(rows_x * rows_y), -1.0f);
  path().gemm(n, x.data(), xs, rows_x, y.data(), ys, rows_y, gemm.data(), static_cast<size_t>(rows_x));
  const auto boundary = [](int64_t r, int64_t edge) { return r % edge == 0 || r % edge == edge - 1; };
  std::vector<float> want, got;
  for (int64_t ry = 0; ry < rows_y; ++ry) {
    for (int64_t rx = 0; rx < rows_x; ++rx) {
      if ((rx + ry) % 7 != 0 && !boundary(rx, 16) && !boundary(ry, 128) && ry != rows_y - 1 && rx != rows_x - 1) continue;
      float dot = 0.0f;
      ref().vec_dot(n, &dot, x.data() + rx * static_cast<int64_t>(xs), y.data() + ry * static_cast<int64_t>(ys));
      want.push_back(dot);
      got.push_back(gemm[static_cast<size_t>(ry * rows_x + rx)]);
    }
  }
  EXPECT_LT(nmse(got, want), 1e-9) << want.size() << " products";
}

// F16 rows against F32 rows (attention's float queries against an F16 cache):
// every path against a double-precision sum over the halves' exact values,
// including head sizes below one vector and with vector tails.
TEST(KernelPathsF16, GemmAgainstFloatRowsMatchesDoubleSums) {
  for (Isa isa : available_isas()) {
    const GemmFn gemm = kernels_for_isa(GgmlType::F16, isa).gemm_f32;
    ASSERT_NE(gemm, nullptr) << isa_name(isa);
    for (int64_t n : {8, 64, 128, 133}) {
      const int64_t rows_x = 37, rows_y = 5;
      const std::vector<float> xf = random_floats(static_cast<size_t>(n * rows_x), 71);
      const std::vector<float> y = random_floats(static_cast<size_t>(n * rows_y), 72);
      std::vector<uint16_t> x(xf.size());
      for (size_t i = 0; i < x.size(); ++i) x[i] = fp32_to_fp16(xf[i]);
      std::vector<float> got(static_cast<size_t>(rows_x * rows_y), -1.0f), want(got.size());
      gemm(n, x.data(), static_cast<size_t>(n) * sizeof(uint16_t), rows_x, y.data(), static_cast<size_t>(n) * sizeof(float),
           rows_y, got.data(), static_cast<size_t>(rows_x));
      for (int64_t ry = 0; ry < rows_y; ++ry) {
        for (int64_t rx = 0; rx < rows_x; ++rx) {
          double sum = 0.0;
          for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(x[static_cast<size_t>(rx * n + i)])) * y[static_cast<size_t>(ry * n + i)];
          want[static_cast<size_t>(ry * rows_x + rx)] = static_cast<float>(sum);
        }
      }
      EXPECT_LT(nmse(got, want), 1e-12) << isa_name(isa) << " n=" << n;
    }
  }
}

// The float types' prefill tiles (arm64: 8 x 8 register tiles over panels of
// 128 elements, 32 activation rows a pass): lengths below one step, with a
// tail of 1 to 3 past a step, and crossing 1 and 2 chunks; weight rows past a
// whole tile (21 = 2 x 8 + 5); activation rows of one partial tile, whole
// tiles, and past a 32-row pass with a partial tile (45). Every product
// against the scalar vec_dot (gemm) or the scalar gemm_f32 (F16 against F32
// rows), every output row padded so a store past the last weight row shows.
TEST(KernelPathsFloat, PrefillTilesMatchScalar) {
  constexpr int64_t kRows = 21, kStride = kRows + 3;
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    const TypeKernels& ref = kernels_for_isa(t, Isa::Scalar);
    for (const bool f32_rows : {false, true}) {
      if (f32_rows && t != GgmlType::F16) continue;
      const GgmlType partner = f32_rows ? GgmlType::F32 : ref.dot_partner;
      for (int64_t n : {3, 9, 130, 259, 300}) {
        for (int64_t rows_y : {4, 8, 16, 45}) {
          const std::vector<uint8_t> x = quantize_rows(t, random_floats(static_cast<size_t>(n * kRows), 81), n, kRows);
          const std::vector<uint8_t> y =
              quantize_rows(partner, random_floats(static_cast<size_t>(n * rows_y), 82), n, rows_y);
          const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
          std::vector<float> want(static_cast<size_t>(kStride * rows_y), -1.0f);
          if (f32_rows) {
            ref.gemm_f32(n, x.data(), xs, kRows, y.data(), ys, rows_y, want.data(), kStride);
          } else {
            for (int64_t ry = 0; ry < rows_y; ++ry) {
              for (int64_t rx = 0; rx < kRows; ++rx) {
                ref.vec_dot(n, &want[static_cast<size_t>(ry * kStride + rx)], x.data() + static_cast<size_t>(rx) * xs,
                            y.data() + static_cast<size_t>(ry) * ys);
              }
            }
          }
          for (Isa isa : available_isas()) {
            const TypeKernels& path = kernels_for_isa(t, isa);
            const GemmFn gemm = f32_rows ? path.gemm_f32 : path.gemm;
            std::vector<float> got(want.size(), -1.0f);
            gemm(n, x.data(), xs, kRows, y.data(), ys, rows_y, got.data(), kStride);
            const std::string what = std::string(ggml_type_name(static_cast<uint32_t>(t))) +
                                     (f32_rows ? " x F32" : "") + " on " + isa_name(isa) + ", n=" + std::to_string(n) +
                                     " rows_y=" + std::to_string(rows_y);
            EXPECT_LT(nmse(got, want), 1e-12) << what;
            for (int64_t ry = 0; ry < rows_y; ++ry) {
              for (int64_t pad = kRows; pad < kStride; ++pad) {
                ASSERT_EQ(got[static_cast<size_t>(ry * kStride + pad)], -1.0f) << what << ": wrote past its rows";
              }
            }
          }
        }
      }
    }
  }
}

// Byte offsets of the fp16 scale fields inside one block of each weight type
// (from the layouts in kernels/blocks.h); every other byte may hold anything.
std::vector<size_t> half_fields(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q2_K: return {80, 82};
    case GgmlType::Q3_K: return {108};
    case GgmlType::Q6_K: return {208};
    default: return {0};
  }
}

// The quantized weight types only (quantized_weight_cases).
class QuantizedWeightPaths : public KernelPaths {};

// Weight rows of random bytes (every code, scale and bit pattern a file could
// hold, e.g. Q8_0's -128) with finite fp16 scales in [-1, 1]: every path must
// agree with the scalar reference.
TEST_P(QuantizedWeightPaths, RandomBlockBytesMatchScalar) {
  const GgmlType t = GetParam().type;
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(t));
  const GgmlType partner = ref().dot_partner;
  const int64_t n = test_length(t, 2), rows_x = 19, rows_y = 5;
  const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
  std::mt19937 rng(51);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-1.0f, 1.0f);
  std::vector<uint8_t> x(xs * static_cast<size_t>(rows_x));
  for (uint8_t& v : x) v = static_cast<uint8_t>(byte(rng));
  for (size_t block = 0; block < x.size() / traits->block_bytes; ++block) {
    for (size_t offset : half_fields(t)) {
      const uint16_t h = fp32_to_fp16(scale(rng));
      std::memcpy(&x[block * traits->block_bytes + offset], &h, sizeof h);
    }
  }
  const std::vector<uint8_t> y = quantize_rows(partner, random_floats(static_cast<size_t>(n * rows_y), 52), n, rows_y);
  std::vector<float> want(static_cast<size_t>(rows_x * rows_y)), dots(want.size()), gemm(want.size());
  for (int64_t ry = 0; ry < rows_y; ++ry) {
    for (int64_t rx = 0; rx < rows_x; ++rx) {
      const size_t o = static_cast<size_t>(ry * rows_x + rx);
      ref().vec_dot(n, &want[o], x.data() + static_cast<size_t>(rx) * xs, y.data() + static_cast<size_t>(ry) * ys);
      path().vec_dot(n, &dots[o], x.data() + static_cast<size_t>(rx) * xs, y.data() + static_cast<size_t>(ry) * ys);
    }
  }
  path().gemm(n, x.data(), xs, rows_x, y.data(), ys, rows_y, gemm.data(), static_cast<size_t>(rows_x));
  EXPECT_LT(nmse(dots, want), 1e-9);
  EXPECT_LT(nmse(gemm, want), 1e-9);
  std::vector<float> xf(static_cast<size_t>(n)), xf_ref(xf.size());
  ref().to_float(x.data(), xf_ref.data(), n);
  path().to_float(x.data(), xf.data(), n);
  EXPECT_EQ(xf, xf_ref);
}

// Activation row counts the gemms treat apart: every count of a decode step
// (the x86 paths stream the weights once for up to 8 rows, each count its own
// kernel), pairs and groups of up to four pairs (the SMMLA tiles), odd
// remainders, and the first count past decode.
constexpr int64_t kRowCountsY[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
// Weight pairs and an odd last row; past one 16-row lane tile, two 8-row
// ones, and a partial tile after them.
constexpr int64_t kRowsX = 21;
// Output rows are this much longer than kRowsX: the gemm must leave the rest alone.
constexpr int64_t kOutPadding = 3;

// Every product of kRowsX weight rows and rows_y activation rows (row-major
// [rows_y][kRowsX]) through the scalar vec_dot, the path's vec_dot and its gemm.
struct AllProducts {
  std::vector<float> want, dots, gemm;
};
AllProducts all_products(const TypeKernels& ref, const TypeKernels& path, int64_t n, const std::vector<uint8_t>& x,
                         size_t xs, const std::vector<uint8_t>& y, size_t ys, int64_t rows_y) {
  AllProducts p;
  const size_t count = static_cast<size_t>(kRowsX * rows_y);
  p.want.resize(count);
  p.dots.resize(count);
  p.gemm.assign(count, -1.0f);
  for (int64_t ry = 0; ry < rows_y; ++ry) {
    for (int64_t rx = 0; rx < kRowsX; ++rx) {
      const size_t o = static_cast<size_t>(ry * kRowsX + rx);
      ref.vec_dot(n, &p.want[o], x.data() + static_cast<size_t>(rx) * xs, y.data() + static_cast<size_t>(ry) * ys);
      path.vec_dot(n, &p.dots[o], x.data() + static_cast<size_t>(rx) * xs, y.data() + static_cast<size_t>(ry) * ys);
    }
  }
  constexpr size_t kOutStride = kRowsX + kOutPadding;
  std::vector<float> padded(kOutStride * static_cast<size_t>(rows_y), -1.0f);
  path.gemm(n, x.data(), xs, kRowsX, y.data(), ys, rows_y, padded.data(), kOutStride);
  for (int64_t ry = 0; ry < rows_y; ++ry) {
    const auto row = padded.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(ry) * kOutStride);
    std::copy(row, row + kRowsX, p.gemm.begin() + static_cast<std::ptrdiff_t>(ry * kRowsX));
    for (auto pad = row + kRowsX; pad != row + static_cast<std::ptrdiff_t>(kOutStride); ++pad) {
      EXPECT_EQ(*pad, -1.0f) << "gemm wrote past its rows, activation row " << ry;
    }
  }
  return p;
}

// Lengths from one block up to past the 8-super-block slices of the i8mm
// K-type gemm. Only the order of float sums differs from the scalar kernels:
// every path stayed below 3e-12 here.
TEST_P(QuantizedWeightPaths, GemmRowAndBlockCountsMatchScalar) {
  const GgmlType t = GetParam().type;
  const GgmlType partner = ref().dot_partner;
  const bool super = ggml_type_traits(static_cast<uint32_t>(t))->block_elems == 256;
  for (int64_t blocks : {1, 2, 9, 17}) {
    const int64_t n = super ? 256 * blocks : 32 * 5 * blocks;
    const int64_t max_rows_y = kRowCountsY[std::size(kRowCountsY) - 1];
    const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
    const std::vector<uint8_t> x = quantize_rows(t, random_floats(static_cast<size_t>(n * kRowsX), 81), n, kRowsX);
    const std::vector<uint8_t> y =
        quantize_rows(partner, random_floats(static_cast<size_t>(n * max_rows_y), 82), n, max_rows_y);
    for (int64_t rows_y : kRowCountsY) {
      const AllProducts p = all_products(ref(), path(), n, x, xs, y, ys, rows_y);
      EXPECT_LT(nmse(p.dots, p.want), 1e-10) << "vec_dot, n=" << n;
      EXPECT_LT(nmse(p.gemm, p.want), 1e-10) << "gemm, n=" << n << " rows_y=" << rows_y;
    }
  }
}

// Weight rows of random bytes with every fp16 scale 1, against activations of
// small integers with one 127 per 32 (so their Q8 scale is exactly 1): every
// product, scale and partial sum in any path is then an integer below 2^24
// (at most 8.2e6 for one super-block of Q6_K or IQ4_XS), so each path must
// give the scalar result exactly, whatever order it adds in. A code read
// from the wrong bit, a scale or min applied to the wrong group or row, or a
// tile lane written to the wrong output cannot hide under a tolerance here.
TEST_P(QuantizedWeightPaths, IntegerValuedProductsMatchScalarExactly) {
  const GgmlType t = GetParam().type;
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(t));
  const GgmlType partner = ref().dot_partner;
  const int64_t n = traits->block_elems == 256 ? 256 : 32 * 8;
  const int64_t max_rows_y = kRowCountsY[std::size(kRowCountsY) - 1];
  const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
  std::mt19937 rng(91);
  std::uniform_int_distribution<int> byte(0, 255), small(-8, 8);
  std::vector<uint8_t> x(xs * static_cast<size_t>(kRowsX));
  for (uint8_t& v : x) v = static_cast<uint8_t>(byte(rng));
  const uint16_t one = fp32_to_fp16(1.0f);
  for (size_t block = 0; block < x.size() / traits->block_bytes; ++block) {
    for (size_t offset : half_fields(t)) std::memcpy(&x[block * traits->block_bytes + offset], &one, sizeof one);
  }
  std::vector<float> yf(static_cast<size_t>(n * max_rows_y));
  for (size_t i = 0; i < yf.size(); ++i) yf[i] = i % 32 == 0 ? 127.0f : static_cast<float>(small(rng));
  const std::vector<uint8_t> y = quantize_rows(partner, yf, n, max_rows_y);
  for (int64_t rows_y : kRowCountsY) {
    const AllProducts p = all_products(ref(), path(), n, x, xs, y, ys, rows_y);
    EXPECT_EQ(p.dots, p.want) << "vec_dot";
    EXPECT_EQ(p.gemm, p.want) << "gemm, rows_y=" << rows_y;
  }
}

// A decode step of several rows (a token with the tokens drafted after it)
// must give each row the bits its own one-row step gives, so that greedy
// speculative decoding writes the text written without drafts: the x86 paths
// keep each row's accumulators of the one-row kernel. Not yet Q8_0 there (its
// lanes, from 2 or 4 rows, add in another order) nor the arm64 paths (their
// tiles pair the rows).
TEST_P(QuantizedWeightPaths, DecodeRowsGiveEachRowItsOneRowBits) {
  const GgmlType t = GetParam().type;
  const Isa isa = GetParam().isa;
  const bool x86 =
      isa == Isa::Scalar || isa == Isa::Avx2 || isa == Isa::AvxVnni || isa == Isa::Avx512 || isa == Isa::Avx512Bf16;
  if (!x86 || (t == GgmlType::Q8_0 && isa != Isa::Scalar)) GTEST_SKIP() << "rows not yet bit-equal on this path";
  const GgmlType partner = ref().dot_partner;
  const int64_t n = ggml_type_traits(static_cast<uint32_t>(t))->block_elems == 256 ? 256 * 3 : 32 * 24;
  const int64_t rows_y = 8;
  const size_t xs = row_bytes(t, n), ys = row_bytes(partner, n);
  const std::vector<uint8_t> x = quantize_rows(t, random_floats(static_cast<size_t>(n * kRowsX), 61), n, kRowsX);
  const std::vector<uint8_t> y = quantize_rows(partner, random_floats(static_cast<size_t>(n * rows_y), 62), n, rows_y);
  for (int64_t m = 2; m <= rows_y; ++m) {
    std::vector<float> together(static_cast<size_t>(kRowsX * m)), alone(together.size());
    path().gemm(n, x.data(), xs, kRowsX, y.data(), ys, m, together.data(), static_cast<size_t>(kRowsX));
    for (int64_t r = 0; r < m; ++r) {
      path().gemm(n, x.data(), xs, kRowsX, y.data() + static_cast<size_t>(r) * ys, ys, 1,
                  alone.data() + static_cast<size_t>(r * kRowsX), static_cast<size_t>(kRowsX));
    }
    EXPECT_EQ(together, alone) << m << " rows";
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesAllPaths, KernelPaths, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(QuantizedWeightTypesAllPaths, QuantizedWeightPaths, ::testing::ValuesIn(quantized_weight_cases()),
                         case_name);

// Half conversions where rounding is delicate: ties to even, subnormals,
// the largest finite half, overflow to infinity and signed zero, in the
// vector body (the first 16 values) and the scalar tail.
TEST(KernelPathsF16, EdgeValuesConvertLikeScalar) {
  const float tie_up = 1.0f + 3.0f / 2048.0f;  // halfway between two halves, rounds up to even
  const float tie_down = 1.0f + 1.0f / 2048.0f;
  const std::vector<float> x = {tie_up,  tie_down, -tie_up, 6.0e-8f, 2.9e-8f,   3.0e-8f, 1.0e-5f, -6.1e-5f,
                                65504.0f, 65519.0f, 65520.0f, 1.0e6f, -1.0e6f, 0.0f,    -0.0f,   3.14159f,
                                tie_up,  65520.0f, 2.9e-8f};
  const int64_t n = static_cast<int64_t>(x.size());
  const TypeKernels& ref = kernels_for_isa(GgmlType::F16, Isa::Scalar);
  std::vector<uint16_t> want(x.size());
  ref.from_float(x.data(), want.data(), n);
  EXPECT_EQ(want[0], fp32_to_fp16(1.0f + 4.0f / 2048.0f));
  EXPECT_EQ(want[1], fp32_to_fp16(1.0f));
  EXPECT_EQ(want[10], 0x7c00u);
  for (Isa isa : available_isas()) {
    const TypeKernels& path = kernels_for_isa(GgmlType::F16, isa);
    std::vector<uint16_t> got(x.size());
    path.from_float(x.data(), got.data(), n);
    EXPECT_EQ(got, want) << isa_name(isa);
    std::vector<float> back(x.size()), back_ref(x.size());
    path.to_float(want.data(), back.data(), n);
    ref.to_float(want.data(), back_ref.data(), n);
    EXPECT_EQ(std::memcmp(back.data(), back_ref.data(), back.size() * sizeof(float)), 0) << isa_name(isa);
  }
}

}  // namespace
}  // namespace peak::kernels
