// Quantize-then-dequantize error of every type on Gaussian data with outliers,
// printed (the table a reader wants) and bounded per type.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
namespace {

struct ErrorBound {
  GgmlType type;
  double max_nmse;
};

TEST(RoundTrip, ErrorPerTypeIsWithinBound) {
  // Bounds sit about 25% above the measured values (printed below) so a
  // regression in a quantizer shows up. The data has an outlier every 97
  // values, which is what makes the 256-element Q8_K coarser than Q8_0.
  const ErrorBound bounds[] = {
      {GgmlType::F32, 0.0},      {GgmlType::F16, 2e-7},     {GgmlType::BF16, 5e-6},     {GgmlType::Q8_0, 8e-5},
      {GgmlType::Q8_1, 8e-5},    {GgmlType::Q8_K, 3.5e-4},  {GgmlType::Q6_K, 7e-4},     {GgmlType::Q5_0, 5e-3},
      {GgmlType::Q5_1, 2.5e-3},  {GgmlType::Q5_K, 2.3e-3},  {GgmlType::Q4_0, 2e-2},     {GgmlType::Q4_1, 1.1e-2},
      {GgmlType::Q4_K, 9.5e-3},  {GgmlType::IQ4_NL, 1.2e-2}, {GgmlType::IQ4_XS, 1.25e-2}, {GgmlType::Q3_K, 4e-2},
      {GgmlType::Q2_K, 0.11},
  };

  const int64_t n = 256 * 64;
  const std::vector<float> x = testing_util::random_floats(static_cast<size_t>(n), 7);
  for (const ErrorBound& b : bounds) {
    const std::vector<uint8_t> q = testing_util::quantize_rows(b.type, x, n, 1);
    std::vector<float> back(x.size());
    kernels_for_isa(b.type, Isa::Scalar).to_float(q.data(), back.data(), n);
    const double err = testing_util::nmse(back, x);
    std::printf("[ %-6s ] round-trip NMSE %.3e (bound %.1e), %.3f bits per weight\n",
                ggml_type_name(static_cast<uint32_t>(b.type)), err, b.max_nmse,
                8.0 * static_cast<double>(q.size()) / static_cast<double>(n));
    EXPECT_LE(err, b.max_nmse) << ggml_type_name(static_cast<uint32_t>(b.type));
  }
}

}  // namespace
}  // namespace peak::kernels
