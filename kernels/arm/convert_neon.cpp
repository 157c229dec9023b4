// F16 rows to and from float with NEON's half-precision conversions, four
// values per instruction (see x86/convert_avx2.cpp for why these matter). The
// conversions are exact / round to nearest even (the default FPCR mode) like
// the scalar reference, so bytes do not depend on the path.
#include <arm_neon.h>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak::kernels {
namespace {

void f16_to_float(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h + i))));
  for (; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}

void f16_from_float(const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(h + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
  for (; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}

}  // namespace

void install_neon_conversions(KernelTable& table) {
  table[GgmlType::F16].to_float = f16_to_float;
  table.set_from_float(GgmlType::F16, f16_from_float);
}

}  // namespace peak::kernels
