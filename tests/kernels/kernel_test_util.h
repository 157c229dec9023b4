// Helpers shared by the kernel tests: random data, quantization through the
// scalar reference, error measures.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"

namespace peak::kernels {
namespace testing_util {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  // A few outliers, as real weights have.
  for (size_t i = 0; i < n; i += 97) v[i] *= 6.0f;
  return v;
}

inline size_t row_bytes(GgmlType type, int64_t n) {
  return static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(type), static_cast<uint64_t>(n)));
}

// `rows` rows of `n` floats quantized to `type` with the scalar reference.
inline std::vector<uint8_t> quantize_rows(GgmlType type, const std::vector<float>& x, int64_t n, int64_t rows) {
  const size_t rb = row_bytes(type, n);
  std::vector<uint8_t> out(rb * static_cast<size_t>(rows));
  const TypeKernels& k = kernels_for_isa(type, Isa::Scalar);
  for (int64_t r = 0; r < rows; ++r) k.from_float(x.data() + r * n, out.data() + static_cast<size_t>(r) * rb, n);
  return out;
}

// Normalised mean squared error of `got` against `want`.
inline double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return ref > 0.0 ? err / ref : err;
}

// Every type with kernels, in the order reports print them.
inline std::vector<GgmlType> all_kernel_types() {
  return {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,  GgmlType::Q4_1,  GgmlType::Q5_0,
          GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q2_K,  GgmlType::Q3_K,  GgmlType::Q4_K,
          GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};
}

// The paths this CPU can run, scalar first.
inline std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (int i = 0; i < kIsaCount; ++i) {
    if (cpu_has_isa(static_cast<Isa>(i))) out.push_back(static_cast<Isa>(i));
  }
  return out;
}

}  // namespace testing_util
}  // namespace peak::kernels
