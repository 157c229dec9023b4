// Attention's bf16 kernels: the scalar twins against double-precision sums of
// the same operands (rounding to bf16 keeps an 8-bit significand: a relative
// error of at most 2^-8 per operand), and every path with bf16 kernels
// against the scalar twins: the same roundings and packed bytes, and products
// within the fp32 rounding of their sums in another order.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/float16.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;
using testing_util::random_floats;

constexpr double kBf16Rounding = 1.0 / 256;     // 2^-8: half an ulp of an 8-bit significand
constexpr double kFloatRounding = 1.0 / 16777216;  // 2^-24

// The paths whose tables hold bf16 kernels.
std::vector<Isa> bf16_paths() {
  std::vector<Isa> paths;
  for (Isa isa : available_isas()) {
    if (float_kernels_for_isa(isa).bf16.gemm != nullptr) paths.push_back(isa);
  }
  return paths;
}

TEST(Bf16Kernels, OnlyPathsWithBf16DotProductsHoldThem) {
  for (Isa isa : available_isas()) {
    const Bf16Kernels& k = float_kernels_for_isa(isa).bf16;
    const bool expected = isa == Isa::Avx512Bf16;
    EXPECT_EQ(k.gemm != nullptr, expected) << isa_name(isa);
    EXPECT_EQ(k.round != nullptr && k.pack_rows != nullptr && k.pack_columns != nullptr, expected) << isa_name(isa);
  }
}

TEST(Bf16Kernels, ScalarRoundingIsWithinHalfAnUlp) {
  const std::vector<float> x = random_floats(1000, 3);
  std::vector<uint16_t> rounded(x.size());
  scalar_bf16_kernels().round(x.data(), rounded.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(std::fabs(bf16_to_fp32(rounded[i]) - static_cast<double>(x[i])), kBf16Rounding * std::fabs(x[i]));
  }
}

struct GemmShape {
  int64_t n_pairs, n_rows, n_cols;
};
constexpr GemmShape kGemmShapes[] = {{1, 1, 16},  {8, 3, 48},   {64, 32, 128}, {64, 5, 80},
                                     {17, 7, 64}, {64, 32, 16}, {40, 2, 112}};

// A [n_rows][2 n_pairs] and B [2 n_pairs][n_cols] as floats, packed like
// attention's values (pack_rows) and like its keys (pack_columns of B^T).
struct GemmProblem {
  GemmShape s;
  std::vector<float> a, b, b_transposed, c;

  GemmProblem(const GemmShape& shape, uint32_t seed)
      : s(shape), a(random_floats(static_cast<size_t>(shape.n_rows * 2 * shape.n_pairs), seed)),
        b(random_floats(static_cast<size_t>(2 * shape.n_pairs * shape.n_cols), seed + 1)),
        b_transposed(b.size()), c(random_floats(static_cast<size_t>(shape.n_rows * shape.n_cols), seed + 2)) {
    for (int64_t k = 0; k < 2 * s.n_pairs; ++k)
      for (int64_t j = 0; j < s.n_cols; ++j) b_transposed[j * 2 * s.n_pairs + k] = b[k * s.n_cols + j];
  }
  int64_t depth() const { return 2 * s.n_pairs; }
};

struct Packed {
  std::vector<uint16_t> a, b_rows, b_columns;
};

Packed pack(const Bf16Kernels& k, const GemmProblem& p) {
  Packed out{std::vector<uint16_t>(p.a.size()), std::vector<uint16_t>(p.b.size()), std::vector<uint16_t>(p.b.size())};
  k.round(p.a.data(), out.a.data(), static_cast<int64_t>(p.a.size()));
  k.pack_rows(p.b.data(), static_cast<size_t>(p.s.n_cols), p.depth(), p.s.n_cols, out.b_rows.data());
  k.pack_columns(p.b_transposed.data(), static_cast<size_t>(p.depth()), p.s.n_cols, p.depth(), out.b_columns.data(),
                 p.s.n_cols);
  return out;
}

std::vector<float> gemm(const Bf16Kernels& k, const GemmProblem& p, const std::vector<uint16_t>& a,
                        const std::vector<uint16_t>& b, bool add) {
  std::vector<float> c = p.c;
  k.gemm(p.s.n_pairs, a.data(), static_cast<size_t>(p.depth()), p.s.n_rows, b.data(), p.s.n_cols, c.data(),
         static_cast<size_t>(p.s.n_cols), add);
  return c;
}

// Row r, column j: the exact sum of the unrounded products, and the sum of
// their magnitudes (the scale of every rounding error).
struct Exact {
  double sum, magnitude;
};
Exact exact(const GemmProblem& p, int64_t r, int64_t j, bool add) {
  Exact e{add ? p.c[r * p.s.n_cols + j] : 0.0, add ? std::fabs(p.c[r * p.s.n_cols + j]) : 0.0};
  for (int64_t k = 0; k < p.depth(); ++k) {
    const double term = static_cast<double>(p.a[r * p.depth() + k]) * p.b[k * p.s.n_cols + j];
    e.sum += term;
    e.magnitude += std::fabs(term);
  }
  return e;
}

TEST(Bf16Kernels, ScalarGemmIsTheBf16ProductOfBothPackings) {
  const Bf16Kernels& k = scalar_bf16_kernels();
  uint32_t seed = 10;
  for (const GemmShape& shape : kGemmShapes) {
    const GemmProblem p(shape, seed += 3);
    const Packed packed = pack(k, p);
    EXPECT_EQ(packed.b_rows, packed.b_columns);  // the same B either way
    for (bool add : {false, true}) {
      const std::vector<float> c = gemm(k, p, packed.a, packed.b_rows, add);
      for (int64_t r = 0; r < shape.n_rows; ++r) {
        for (int64_t j = 0; j < shape.n_cols; ++j) {
          const Exact e = exact(p, r, j, add);
          // Both operands rounded (2^-8 each, their product 2^-16), then up to
          // depth + 1 fp32 additions.
          const double bound = (2 * kBf16Rounding + kBf16Rounding * kBf16Rounding +
                                static_cast<double>(p.depth() + 1) * kFloatRounding) * e.magnitude;
          ASSERT_LE(std::fabs(c[r * shape.n_cols + j] - e.sum), bound)
              << "pairs " << shape.n_pairs << " rows " << shape.n_rows << " cols " << shape.n_cols << " at " << r
              << ", " << j;
        }
      }
    }
  }
}

TEST(Bf16Kernels, EveryPathMatchesTheScalarTwin) {
  const Bf16Kernels& twin = scalar_bf16_kernels();
  for (Isa isa : bf16_paths()) {
    const Bf16Kernels& k = float_kernels_for_isa(isa).bf16;
    uint32_t seed = 50;
    for (const GemmShape& shape : kGemmShapes) {
      SCOPED_TRACE(::testing::Message() << isa_name(isa) << " pairs " << shape.n_pairs << " rows " << shape.n_rows
                                        << " cols " << shape.n_cols);
      const GemmProblem p(shape, seed += 3);
      const Packed want = pack(twin, p), got = pack(k, p);
      EXPECT_EQ(got.a, want.a);
      EXPECT_EQ(got.b_rows, want.b_rows);
      EXPECT_EQ(got.b_columns, want.b_columns);
      for (bool add : {false, true}) {
        const std::vector<float> c_want = gemm(twin, p, want.a, want.b_rows, add);
        const std::vector<float> c_got = gemm(k, p, want.a, want.b_rows, add);
        for (int64_t r = 0; r < shape.n_rows; ++r) {
          for (int64_t j = 0; j < shape.n_cols; ++j) {
            // The same exact products, summed in fp32 in another grouping:
            // each sum within (depth + 1) roundings of the exact one.
            const double bound = 2.0 * static_cast<double>(p.depth() + 1) * kFloatRounding *
                                 (exact(p, r, j, add).magnitude * (1 + 3 * kBf16Rounding));
            ASSERT_LE(std::fabs(c_got[r * shape.n_cols + j] - c_want[r * shape.n_cols + j]), bound)
                << "at " << r << ", " << j << (add ? " adding" : "");
          }
        }
      }
    }
  }
}

// Rows and elements outside the 16-row, 32-element groups of the packing.
TEST(Bf16Kernels, PackingRaggedShapesMatchesTheScalarTwin) {
  const Bf16Kernels& twin = scalar_bf16_kernels();
  for (Isa isa : bf16_paths()) {
    const Bf16Kernels& k = float_kernels_for_isa(isa).bf16;
    for (int64_t n_rows : {1, 15, 16, 37}) {
      for (int64_t n : {2, 30, 32, 72}) {
        const size_t stride = static_cast<size_t>(n + 3);
        const std::vector<float> src = random_floats(stride * static_cast<size_t>(n_rows), 7);
        const int64_t dst_cols = n_rows + 5;
        std::vector<uint16_t> want(static_cast<size_t>(n * dst_cols), 0), got = want;
        twin.pack_columns(src.data(), stride, n_rows, n, want.data(), dst_cols);
        k.pack_columns(src.data(), stride, n_rows, n, got.data(), dst_cols);
        EXPECT_EQ(got, want) << isa_name(isa) << " rows " << n_rows << " n " << n;
      }
    }
    const std::vector<float> odd = random_floats(37, 8);
    std::vector<uint16_t> want(odd.size()), got(odd.size());
    twin.round(odd.data(), want.data(), 37);
    k.round(odd.data(), got.data(), 37);
    EXPECT_EQ(got, want) << isa_name(isa);
  }
}

}  // namespace
}  // namespace peak::kernels
