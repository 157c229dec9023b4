// The weighted sum of rows (attention's softmax weights times value rows): the
// scalar reference against a double-precision sum, and every SIMD path against
// the scalar reference, for the KV cache types (F32, F16, Q8_0, Q4_0), on
// shapes that leave partial register tiles (rows not a multiple of 4, columns
// not a multiple of the widest tile, and for the float types not of any vector
// width) and strides wider than the data.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace peak {
namespace {

using testing_util::available_isas;
using testing_util::random_floats;
using testing_util::row_bytes;

struct Shape {
  int64_t n, n_rows, n_out;
};
constexpr Shape kFloatShapes[] = {{1, 1, 1},     {7, 3, 2},   {16, 5, 4},      {64, 37, 9},
                                  {100, 8, 5}, {128, 128, 32}, {133, 17, 7}};
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
        ASSERT_NEAR(got[at], want[at], 2e-5 * (1.0 + std::abs(want[at])))
            << isa_name(isa) << " n " << shape.n << " rows " << shape.n_rows << " out " << shape.n_out << " at " << at;
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
}  // namespace peak
