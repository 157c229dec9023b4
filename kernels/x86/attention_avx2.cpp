// Attention's float kernels on 256-bit vectors (AVX2 + FMA + F16C): the
// weighted sum of F32, F16, Q8_0 and Q4_0 value rows (a tile of 4 output rows
// x 16 columns keeps 8 accumulators in registers, one of 2 rows x 32 columns
// too), the softmax numerators,
// the SwiGLU and GeGLU gates and soft-capping.
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"
#include "kernels/f32_tiles.inc"
#include "kernels/x86/float_traits_avx2.inc"

namespace peak::kernels {

void install_avx2_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec256>(table);
  table.floats.scale_max = scale_max<Vec256>;
  table.floats.exp_sum = exp_sum<Vec256>;
  table.floats.swiglu = swiglu<Vec256>;
  table.floats.geglu = geglu<Vec256>;
  table.floats.softcap = softcap<Vec256>;
  table.floats.f32_tiles = {transpose_f32_tiles<Vec256>, gemm_f32_tiles<Vec256>};
}

}  // namespace peak::kernels
