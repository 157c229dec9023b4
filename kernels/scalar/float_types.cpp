// Reference kernels of the plain float types.
//   F32:  partner F32.
//   F16:  partner F16 (activations are rounded to half once; the products and the
//         sum are taken in float, as F16C / NEON fp16 kernels do).
//   BF16: partner F32 (bf16 -> f32 is a shift, so keeping activations in f32
//         costs nothing and loses nothing).
#include <cstring>

#include "kernels/float16.h"
#include "kernels/scalar/block_kernels.h"
#include "kernels/scalar/scalar_install.h"

namespace peak::kernels {
namespace scalar {
namespace {

void f32_to_float(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void f32_from_float(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void f16_to_float(const void* src, float* dst, int64_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}
void f16_from_float(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}

void bf16_to_float(const void* src, float* dst, int64_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}
void bf16_from_float(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

float dot_f32(const float& x, const float& y) { return x * y; }
float dot_f16(const uint16_t& x, const uint16_t& y) { return fp16_to_fp32(x) * fp16_to_fp32(y); }
float dot_bf16(const uint16_t& x, const float& y) { return bf16_to_fp32(x) * y; }
float dot_f16_f32(const uint16_t& x, const float& y) { return fp16_to_fp32(x) * y; }

}  // namespace

void install_float_types(KernelTable& table) {
  table[GgmlType::F32] = {f32_to_float, f32_from_float, GgmlType::F32,
                          vec_dot_blocks<float, float, 1, dot_f32>,
                          gemm_blocks<float, float, 1, dot_f32>, weighted_sum_blocks<float, 1, f32_to_float>};
  table[GgmlType::F16] = {f16_to_float, f16_from_float, GgmlType::F16,
                          vec_dot_blocks<uint16_t, uint16_t, 1, dot_f16>,
                          gemm_blocks<uint16_t, uint16_t, 1, dot_f16>,
                          weighted_sum_blocks<uint16_t, 1, f16_to_float>};
  table[GgmlType::F16].gemm_f32 = gemm_blocks<uint16_t, float, 1, dot_f16_f32>;
  table[GgmlType::BF16] = {bf16_to_float, bf16_from_float, GgmlType::F32,
                           vec_dot_blocks<uint16_t, float, 1, dot_bf16>,
                           gemm_blocks<uint16_t, float, 1, dot_bf16>};
}

}  // namespace scalar
}  // namespace peak::kernels
