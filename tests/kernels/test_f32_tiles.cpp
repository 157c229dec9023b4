// Attention's fp32 tile kernels: the scalar twins against double-precision
// sums, and every path with tile kernels against the twins: the same
// transposed bytes, and products within the fp32 rounding of their sums in
// another grouping (fused multiply-adds round once per term, the twin twice).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;
using testing_util::random_floats;

constexpr double kFloatRounding = 1.0 / 16777216;  // 2^-24

std::vector<Isa> tile_paths() {
  std::vector<Isa> paths;
  for (Isa isa : available_isas()) {
    if (float_kernels_for_isa(isa).f32_tiles.gemm != nullptr) paths.push_back(isa);
  }
  return paths;
}

TEST(F32TileKernels, EveryX86VectorPathHoldsThem) {
  for (Isa isa : available_isas()) {
    const F32TileKernels& k = float_kernels_for_isa(isa).f32_tiles;
    const bool x86_vector = isa == Isa::Avx2 || isa == Isa::AvxVnni || isa == Isa::Avx512 || isa == Isa::Avx512Bf16;
    EXPECT_EQ(k.gemm != nullptr && k.transpose != nullptr, x86_vector) << isa_name(isa);
  }
}

struct GemmShape {
  int64_t n, n_rows, n_cols;
};
// Register tiles whole and ragged in rows, panels whole and cut short in columns.
constexpr GemmShape kGemmShapes[] = {{1, 1, 16},   {128, 4, 64},  {128, 128, 128}, {37, 7, 80},
                                     {64, 13, 48}, {128, 6, 16}, {5, 33, 112},    {128, 25, 32}};

struct GemmProblem {
  GemmShape s;
  std::vector<float> a, b, c;
  GemmProblem(const GemmShape& shape, uint32_t seed)
      : s(shape), a(random_floats(static_cast<size_t>(shape.n_rows * shape.n), seed)),
        b(random_floats(static_cast<size_t>(shape.n * shape.n_cols), seed + 1)),
        c(random_floats(static_cast<size_t>(shape.n_rows * shape.n_cols), seed + 2)) {}

  std::vector<float> run(const F32TileKernels& k, bool add) const {
    std::vector<float> out = c;
    k.gemm(s.n, a.data(), static_cast<size_t>(s.n), s.n_rows, b.data(), s.n_cols, out.data(),
           static_cast<size_t>(s.n_cols), add);
    return out;
  }
};

// Row r, column j: the exact sum and the sum of the terms' magnitudes (the
// scale of every rounding error).
struct Exact {
  double sum, magnitude;
};
Exact exact(const GemmProblem& p, int64_t r, int64_t j, bool add) {
  const double initial = add ? p.c[r * p.s.n_cols + j] : 0.0;
  Exact e{initial, std::fabs(initial)};
  for (int64_t k = 0; k < p.s.n; ++k) {
    const double term = static_cast<double>(p.a[r * p.s.n + k]) * p.b[k * p.s.n_cols + j];
    e.sum += term;
    e.magnitude += std::fabs(term);
  }
  return e;
}

TEST(F32TileKernels, ScalarGemmIsTheProductWithinItsRoundings) {
  const F32TileKernels& k = scalar_f32_tile_kernels();
  uint32_t seed = 10;
  for (const GemmShape& shape : kGemmShapes) {
    const GemmProblem p(shape, seed += 3);
    for (bool add : {false, true}) {
      const std::vector<float> c = p.run(k, add);
      for (int64_t r = 0; r < shape.n_rows; ++r) {
        for (int64_t j = 0; j < shape.n_cols; ++j) {
          const Exact e = exact(p, r, j, add);
          // n products and n + 1 additions, each rounded once.
          const double bound = static_cast<double>(2 * shape.n + 1) * kFloatRounding * e.magnitude;
          ASSERT_LE(std::fabs(c[r * shape.n_cols + j] - e.sum), bound)
              << "n " << shape.n << " rows " << shape.n_rows << " cols " << shape.n_cols << " at " << r << ", " << j;
        }
      }
    }
  }
}

TEST(F32TileKernels, EveryPathMatchesTheScalarTwin) {
  const F32TileKernels& twin = scalar_f32_tile_kernels();
  for (Isa isa : tile_paths()) {
    const F32TileKernels& k = float_kernels_for_isa(isa).f32_tiles;
    uint32_t seed = 50;
    for (const GemmShape& shape : kGemmShapes) {
      SCOPED_TRACE(::testing::Message() << isa_name(isa) << " n " << shape.n << " rows " << shape.n_rows << " cols "
                                        << shape.n_cols);
      const GemmProblem p(shape, seed += 3);
      for (bool add : {false, true}) {
        const std::vector<float> want = p.run(twin, add), got = p.run(k, add);
        for (int64_t r = 0; r < shape.n_rows; ++r) {
          for (int64_t j = 0; j < shape.n_cols; ++j) {
            // Both within their roundings of the exact sum.
            const double bound =
                2.0 * static_cast<double>(2 * shape.n + 1) * kFloatRounding * exact(p, r, j, add).magnitude;
            ASSERT_LE(std::fabs(got[r * shape.n_cols + j] - want[r * shape.n_cols + j]), bound)
                << "at " << r << ", " << j << (add ? " adding" : "");
          }
        }
      }
    }
  }
}

TEST(F32TileKernels, TransposeMatchesTheScalarTwinOnRaggedShapes) {
  const F32TileKernels& twin = scalar_f32_tile_kernels();
  for (Isa isa : tile_paths()) {
    const F32TileKernels& k = float_kernels_for_isa(isa).f32_tiles;
    for (int64_t n_rows : {1, 7, 8, 15, 16, 37}) {
      for (int64_t n : {1, 8, 16, 30, 72, 128}) {
        const size_t stride = static_cast<size_t>(n + 3);
        const std::vector<float> src = random_floats(stride * static_cast<size_t>(n_rows), 7);
        const int64_t dst_cols = n_rows + 5;
        std::vector<float> want(static_cast<size_t>(n * dst_cols), -1.0f), got = want;
        twin.transpose(src.data(), stride, n_rows, n, want.data(), dst_cols);
        k.transpose(src.data(), stride, n_rows, n, got.data(), dst_cols);
        EXPECT_EQ(got, want) << isa_name(isa) << " rows " << n_rows << " n " << n;
      }
    }
  }
}

TEST(F32TileKernels, ScalarTransposeMovesEachElement) {
  const std::vector<float> src = {1, 2, 3, 4, 5, 6};  // 2 rows of 3
  std::vector<float> dst(3 * 4, 0.0f);
  scalar_f32_tile_kernels().transpose(src.data(), 3, 2, 3, dst.data(), 4);
  EXPECT_EQ(dst, (std::vector<float>{1, 4, 0, 0, 2, 5, 0, 0, 3, 6, 0, 0}));
}

}  // namespace
}  // namespace peak::kernels
