// The i8mm path: the SDOT kernels rebuilt for this path, with the SMMLA 2x2-tile
// gemm for Q4_0 and Q8_0 (arm/i8mm_gemm.inc).
#include "kernels/arm/neon_kernels.inc"
#include "kernels/arm/i8mm_gemm.inc"

namespace peak {

void install_i8mm_kernels(KernelTable& table) {
  install_128bit_quant_kernels(table, Isa::I8mm);
  table.set_dot(GgmlType::Q4_0, Isa::I8mm, vec_dot_blocks<KernelQ4_0>, gemm_i8mm<KernelQ4_0>);
  table.set_dot(GgmlType::Q8_0, Isa::I8mm, vec_dot_blocks<KernelQ8_0>, gemm_i8mm<KernelQ8_0>);
}

}  // namespace peak
