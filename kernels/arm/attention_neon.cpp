// Attention's float kernels on 128-bit NEON vectors (armv8-a): the weighted
// sum of F32, F16, Q8_0 and Q4_0 value rows (a tile of 4 output rows x 16
// columns keeps 16 accumulators in registers), the softmax numerators, the
// SwiGLU and GeGLU gates and soft-capping.
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"
#include "kernels/arm/float_traits_neon.inc"

namespace peak::kernels {

void install_neon_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec128>(table);
  table.floats.scale_max = scale_max<Vec128>;
  table.floats.exp_sum = exp_sum<Vec128>;
  table.floats.swiglu = swiglu<Vec128>;
  table.floats.geglu = geglu<Vec128>;
  table.floats.softcap = softcap<Vec128>;
}

}  // namespace peak::kernels
