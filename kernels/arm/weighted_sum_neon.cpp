// WeightedSumFn for F32 and F16 rows on 128-bit NEON vectors (armv8-a): a tile
// of 4 output rows x 16 columns keeps 16 accumulators in registers.
#include <arm_neon.h>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

struct Vec128 {
  using Reg = float32x4_t;
  static constexpr int kWidth = 4;
  static constexpr int kTileCols = 4;
  static Reg splat(float x) { return vdupq_n_f32(x); }
  static Reg load(const float* p) { return vld1q_f32(p); }
  static Reg load(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static void store(float* p, Reg v) { vst1q_f32(p, v); }
  static Reg fma(Reg a, Reg b, Reg acc) { return vfmaq_f32(acc, a, b); }
};

#include "kernels/weighted_sum.inc"

}  // namespace

void install_neon_weighted_sums(KernelTable& table) { install_weighted_sums<Vec128>(table); }

}  // namespace peak
