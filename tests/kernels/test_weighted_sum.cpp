// The weighted sum of rows (attention's softmax weights times value rows): the
// scalar reference against a double-precision sum, and every SIMD path against
// the scalar reference, for the KV cache types (F32, F16, Q8_0, Q4_0), on
// shapes that leave partial register tiles (rows not a multiple of 4, columns
// not a multiple of the widest tile, and for the float types not of any vector
// width) and strides wider than the data. Paths that sum Q8_0 rows in integer
// products (x86/attention_avx512.cpp) may differ by their rounding bound; NaN
// and infinite weights and values keep the float kernel's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/blocks.h"
#include "kernels/float16.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;
using testing_util::random_floats;
using testing_util::row_bytes;

struct Shape {
  int64_t n, n_rows, n_out;
};
constexpr Shape kFloatShapes[] = {{1, 1, 1},     {7, 3, 2},   {16, 5, 4},      {64, 37, 9},
                                  {100, 8, 5}, {128, 128, 32}, {133, 17, 7}, {256, 20, 3}};
// n_out 2, 6 and 7 take the two-row tile (a decode step of a group of 2 heads).
constexpr Shape kBlockShapes[] = {{32, 1, 1},    {32, 3, 5},   {96, 37, 9}, {128, 128, 32},
                                  {160, 17, 7},  {64, 131, 2}, {128, 9, 6}};

std::vector<Shape> shapes_for(GgmlType type) {
  if (type == GgmlType::F32 || type == GgmlType::F16) return {std::begin(kFloatShapes), std::end(kFloatShapes)};
  return {std::begin(kBlockShapes), std::end(kBlockShapes)};
}

// Rows of `n` elements of `type`, `row_stride` bytes apart.
std::vector<uint8_t> make_rows(GgmlType type, const Shape& s, size_t row_stride, uint32_t seed) {
  const std::vector<float> values = random_floats(static_cast<size_t>(s.n * s.n_rows), seed);
  std::vector<uint8_t> rows(row_stride * static_cast<size_t>(s.n_rows));
  for (int64_t j = 0; j < s.n_rows; ++j) {
    kernels_for_isa(type, Isa::Scalar).from_float(values.data() + j * s.n, rows.data() + static_cast<size_t>(j) * row_stride, s.n);
  }
  return rows;
}

// Row j dequantized by the scalar reference.
std::vector<float> row_values(GgmlType type, const uint8_t* row, int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  kernels_for_isa(type, Isa::Scalar).to_float(row, values.data(), n);
  return values;
}

struct Problem {
  Shape s;
  size_t row_stride, w_stride, out_stride;
  std::vector<uint8_t> rows;
  std::vector<float> weights, initial_out;

  Problem(GgmlType type, const Shape& shape, uint32_t seed)
      : s(shape), row_stride(row_bytes(type, shape.n) + 8),  // padded, element alignment kept
        w_stride(static_cast<size_t>(shape.n_rows + 2)), out_stride(static_cast<size_t>(shape.n + 5)),
        rows(make_rows(type, shape, row_stride, seed)),
        weights(random_floats(w_stride * static_cast<size_t>(shape.n_out), seed + 1)),
        initial_out(random_floats(out_stride * static_cast<size_t>(shape.n_out), seed + 2)) {}

  std::vector<float> run(WeightedSumFn fn) const {
    std::vector<float> out = initial_out;
    fn(s.n, rows.data(), row_stride, s.n_rows, weights.data(), w_stride, s.n_out, out.data(), out_stride);
    return out;
  }
};

class WeightedSum : public ::testing::TestWithParam<GgmlType> {};

TEST_P(WeightedSum, ScalarMatchesDoublePrecisionSum) {
  const GgmlType type = GetParam();
  for (const Shape& shape : shapes_for(type)) {
    const Problem p(type, shape, 11);
    const std::vector<float> got = p.run(kernels_for_isa(type, Isa::Scalar).weighted_sum);
    std::vector<std::vector<float>> values;
    for (int64_t j = 0; j < shape.n_rows; ++j) {
      values.push_back(row_values(type, p.rows.data() + static_cast<size_t>(j) * p.row_stride, shape.n));
    }
    for (int64_t o = 0; o < shape.n_out; ++o) {
      for (int64_t i = 0; i < static_cast<int64_t>(p.out_stride); ++i) {
        const size_t at = static_cast<size_t>(o) * p.out_stride + static_cast<size_t>(i);
        double want = p.initial_out[at];
        if (i < shape.n) {  // columns past n are padding and must stay untouched
          for (int64_t j = 0; j < shape.n_rows; ++j) {
            want += static_cast<double>(p.weights[static_cast<size_t>(o) * p.w_stride + static_cast<size_t>(j)]) *
                    values[static_cast<size_t>(j)][static_cast<size_t>(i)];
          }
        }
        ASSERT_NEAR(got[at], want, 1e-4 * (1.0 + std::abs(want))) << "row " << o << " column " << i;
      }
    }
  }
}

// How far rounding the products of the weights and a Q8_0 block's scale to
// int16 (on the scale max_j |w_j d_j| / 32767 of an output row and block)
// may move output element (o, i): half a step per key, times |q_j,i|.
double int16_rounding_bound(const Problem& p, int64_t o, int64_t i) {
  const auto block = [&](int64_t j) {
    return reinterpret_cast<const BlockQ8_0*>(p.rows.data() + static_cast<size_t>(j) * p.row_stride) + i / kQK;
  };
  double largest = 0.0, values = 0.0;
  for (int64_t j = 0; j < p.s.n_rows; ++j) {
    const double w = p.weights[static_cast<size_t>(o) * p.w_stride + static_cast<size_t>(j)];
    largest = std::max(largest, std::abs(w * fp16_to_fp32(block(j)->d)));
    values += std::abs(block(j)->qs[i % kQK]);
  }
  return largest / 32767.0 / 2.0 * values;
}

TEST_P(WeightedSum, EveryPathMatchesScalar) {
  const GgmlType type = GetParam();
  for (Isa isa : available_isas()) {
    const WeightedSumFn fn = kernels_for_isa(type, isa).weighted_sum;
    ASSERT_NE(fn, nullptr) << isa_name(isa);
    for (const Shape& shape : shapes_for(type)) {
      const Problem p(type, shape, 21);
      const std::vector<float> want = p.run(kernels_for_isa(type, Isa::Scalar).weighted_sum);
      const std::vector<float> got = p.run(fn);
      for (size_t at = 0; at < want.size(); ++at) {
        const auto o = static_cast<int64_t>(at / p.out_stride), i = static_cast<int64_t>(at % p.out_stride);
        const double rounding = type == GgmlType::Q8_0 && i < shape.n ? int16_rounding_bound(p, o, i) : 0.0;
        ASSERT_NEAR(got[at], want[at], 2e-5 * (1.0 + std::abs(want[at])) + rounding)
            << isa_name(isa) << " n " << shape.n << " rows " << shape.n_rows << " out " << shape.n_out << " at " << at;
      }
    }
  }
}

// Weights a softmax gives: zero rows (keys a row does not see), tiny ones,
// one NaN and one infinity, and rows with an infinite scale: every path gives
// the float kernel's NaN, infinity and zero where it does, and is within its
// rounding bound elsewhere.
TEST(WeightedSumQ8_0, NonFiniteAndTinyWeightsAndScalesKeepTheFloatResults) {
  const Shape shape{128, 150, 7};
  for (Isa isa : available_isas()) {
    Problem p(GgmlType::Q8_0, shape, 31);
    for (size_t j = 0; j < p.w_stride; ++j) {
      p.weights[0 * p.w_stride + j] = 0.0f;                // row 0 sees no key
      p.weights[1 * p.w_stride + j] *= 1e-33f;             // below the int16 scale's range
      p.weights[2 * p.w_stride + j] = std::abs(p.weights[2 * p.w_stride + j]);
    }
    p.weights[3 * p.w_stride + 140] = std::numeric_limits<float>::quiet_NaN();
    p.weights[4 * p.w_stride + 3] = std::numeric_limits<float>::infinity();
    auto* block = reinterpret_cast<BlockQ8_0*>(p.rows.data() + 5 * p.row_stride) + 2;
    block->d = 0x7c00;  // +inf: row 5's values 64..95
    const std::vector<float> want = p.run(kernels_for_isa(GgmlType::Q8_0, Isa::Scalar).weighted_sum);
    const std::vector<float> got = p.run(kernels_for_isa(GgmlType::Q8_0, isa).weighted_sum);
    for (size_t at = 0; at < want.size(); ++at) {
      const auto o = static_cast<int64_t>(at / p.out_stride), i = static_cast<int64_t>(at % p.out_stride);
      if (!std::isfinite(want[at]) || o == 0) {
        EXPECT_TRUE(std::isnan(want[at]) ? std::isnan(got[at]) : got[at] == want[at])
            << isa_name(isa) << " out " << o << " column " << i << ": " << got[at] << " for " << want[at];
      } else {
        const double rounding = i < shape.n ? int16_rounding_bound(p, o, i) : 0.0;
        EXPECT_NEAR(got[at], want[at], 2e-5 * (1.0 + std::abs(want[at])) + rounding)
            << isa_name(isa) << " out " << o << " column " << i;
      }
    }
  }
}

std::string type_name(const ::testing::TestParamInfo<GgmlType>& p) {
  return ggml_type_name(static_cast<uint32_t>(p.param));
}

INSTANTIATE_TEST_SUITE_P(CacheTypes, WeightedSum,
                         ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0), type_name);

}  // namespace
}  // namespace peak::kernels
