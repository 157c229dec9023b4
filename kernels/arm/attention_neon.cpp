// Attention's float kernels on 128-bit NEON vectors (armv8-a): the weighted
// sum of F32, F16, Q8_0 and Q4_0 value rows (a tile of 4 output rows x 16
// columns keeps 16 accumulators in registers), the softmax numerators, the
// SwiGLU and GeGLU gates and soft-capping.
#include <arm_neon.h>

#include <cstring>

#include "kernels/blocks.h"
#include "kernels/exp_poly.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"

namespace peak {
namespace {

struct Vec128 {
  using Reg = float32x4_t;
  static constexpr int kWidth = 4;
  static constexpr int kTileCols = 4;
  // Kept at kTileCols: ARM kernels are measured here in executed instructions,
  // which a wider tile hardly changes, not in their prefetchers.
  static constexpr int kPairTileCols = 4;
  static Reg splat(float x) { return vdupq_n_f32(x); }
  static Reg add(Reg a, Reg b) { return vaddq_f32(a, b); }
  static Reg sub(Reg a, Reg b) { return vsubq_f32(a, b); }
  static Reg mul(Reg a, Reg b) { return vmulq_f32(a, b); }
  static Reg max(Reg a, Reg b) { return vmaxq_f32(a, b); }
  // maxNum: the number when one operand is NaN (vmaxq_f32 would give NaN).
  static Reg max_number(Reg x, Reg m) { return vmaxnmq_f32(x, m); }
  static Reg div(Reg a, Reg b) { return vdivq_f32(a, b); }
  static Reg fma(Reg a, Reg b, Reg acc) { return vfmaq_f32(acc, a, b); }
  static Reg load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Reg v) { vst1q_f32(p, v); }
  static Reg load(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  // Four bytes only: a wider load could run past the end of the last row.
  static uint8x8_t load4(const void* p) {
    uint32_t word;
    std::memcpy(&word, p, sizeof word);
    return vreinterpret_u8_u32(vdup_n_u32(word));
  }
  static Reg load(const int8_t* p) {
    const int16x8_t wide = vmovl_s8(vreinterpret_s8_u8(load4(p)));
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(wide)));
  }
  static Reg load_nibbles(const uint8_t* p, int shift) {
    const uint8x8_t bytes = vand_u8(vshl_u8(load4(p), vdup_n_s8(static_cast<int8_t>(-shift))), vdup_n_u8(0x0f));
    return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(bytes))));
  }
  static float half(uint16_t h) { return fp16_to_fp32(h); }
  static Reg pow2(Reg n) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
  }
  // vmaxq and vminq return NaN when either operand is NaN.
  static Reg clamp(Reg x, float lo, float hi) { return vminq_f32(vmaxq_f32(x, vdupq_n_f32(lo)), vdupq_n_f32(hi)); }
  static Reg zero_below(Reg v, Reg x, float limit) {
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(v), vcltq_f32(x, vdupq_n_f32(limit))));
  }
  static float sum(Reg v) { return vaddvq_f32(v); }
};

}  // namespace

void install_neon_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec128>(table);
  table.floats.scale_max = scale_max<Vec128>;
  table.floats.exp_sum = exp_sum<Vec128>;
  table.floats.swiglu = swiglu<Vec128>;
  table.floats.geglu = geglu<Vec128>;
  table.floats.softcap = softcap<Vec128>;
}

}  // namespace peak
