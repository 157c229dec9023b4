// The weighted sum of rows (attention's softmax weights times value rows): the
// scalar reference against a double-precision sum, and every SIMD path against
// the scalar reference, for F32 and F16 rows, on shapes that leave partial
// register tiles (rows not a multiple of 4, columns not of any vector width)
// and strides wider than the data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/float16.h"

namespace peak {
namespace {

using testing_util::available_isas;
using testing_util::random_floats;

struct Shape {
  int64_t n, n_rows, n_out;
};
constexpr Shape kShapes[] = {{1, 1, 1}, {7, 3, 2}, {16, 5, 4}, {64, 37, 9}, {100, 8, 5}, {128, 128, 32}, {133, 17, 7}};

// Rows of `n` elements of `type` (F32 or F16), `row_stride` bytes apart.
std::vector<uint8_t> make_rows(GgmlType type, const Shape& s, size_t row_stride, uint32_t seed) {
  const std::vector<float> values = random_floats(static_cast<size_t>(s.n * s.n_rows), seed);
  std::vector<uint8_t> rows(row_stride * static_cast<size_t>(s.n_rows));
  for (int64_t j = 0; j < s.n_rows; ++j) {
    kernels_for_isa(type, Isa::Scalar).from_float(values.data() + j * s.n, rows.data() + static_cast<size_t>(j) * row_stride, s.n);
  }
  return rows;
}

float element_at(GgmlType type, const uint8_t* row, int64_t i) {
  if (type == GgmlType::F32) return reinterpret_cast<const float*>(row)[i];
  return fp16_to_fp32(reinterpret_cast<const uint16_t*>(row)[i]);
}

struct Problem {
  Shape s;
  size_t row_stride, w_stride, out_stride;
  std::vector<uint8_t> rows;
  std::vector<float> weights, initial_out;

  Problem(GgmlType type, const Shape& shape, uint32_t seed)
      : s(shape), row_stride(static_cast<size_t>(shape.n + 3) * (type == GgmlType::F32 ? 4 : 2)),
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
  for (const Shape& shape : kShapes) {
    const Problem p(type, shape, 11);
    const std::vector<float> got = p.run(kernels_for_isa(type, Isa::Scalar).weighted_sum);
    for (int64_t o = 0; o < shape.n_out; ++o) {
      for (int64_t i = 0; i < static_cast<int64_t>(p.out_stride); ++i) {
        const size_t at = static_cast<size_t>(o) * p.out_stride + static_cast<size_t>(i);
        double want = p.initial_out[at];
        if (i < shape.n) {  // columns past n are padding and must stay untouched
          for (int64_t j = 0; j < shape.n_rows; ++j) {
            want += static_cast<double>(p.weights[static_cast<size_t>(o) * p.w_stride + static_cast<size_t>(j)]) *
                    element_at(type, p.rows.data() + static_cast<size_t>(j) * p.row_stride, i);
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
    for (const Shape& shape : kShapes) {
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

INSTANTIATE_TEST_SUITE_P(FloatRows, WeightedSum, ::testing::Values(GgmlType::F32, GgmlType::F16), type_name);

}  // namespace
}  // namespace peak
