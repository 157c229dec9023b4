// WeightedSumFn for F32, F16, Q8_0 and Q4_0 rows on 128-bit NEON vectors (armv8-a): a tile
// of 4 output rows x 16 columns keeps 16 accumulators in registers.
#include <arm_neon.h>

#include <cstring>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

struct Vec128 {
  using Reg = float32x4_t;
  static constexpr int kWidth = 4;
  static constexpr int kTileCols = 4;
  static Reg splat(float x) { return vdupq_n_f32(x); }
  static Reg mul(Reg a, Reg b) { return vmulq_f32(a, b); }
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
};

#include "kernels/weighted_sum.inc"

}  // namespace

void install_neon_weighted_sums(KernelTable& table) { install_weighted_sums<Vec128>(table); }

}  // namespace peak
