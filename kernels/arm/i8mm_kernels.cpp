// The i8mm path: the SDOT kernels rebuilt for this path, with SMMLA 2x2-tile
// gemms for Q4_0, Q5_0, Q8_0 and the K types (arm/i8mm_gemm.inc, arm/i8mm_k_gemm.inc).
#include "kernels/arm/neon_kernels.inc"
#include "kernels/arm/i8mm_gemm.inc"
#include "kernels/arm/i8mm_k_gemm.inc"

namespace peak::kernels {

void install_i8mm_kernels(KernelTable& table) {
  install_128bit_quant_kernels(table, Isa::I8mm);
  install_i8mm_k_kernels(table);
  install_quads(table);
  table[GgmlType::Q4_0].gemm_repacked = gemm_quads_i8mm<Q4_0Quads>;
  table[GgmlType::Q8_0].gemm_repacked = gemm_quads_i8mm<Q8_0Quads>;
  table.set_dot(GgmlType::Q4_0, Isa::I8mm, vec_dot_in_order<KernelQ4_0>, gemm_i8mm<KernelQ4_0>);
  table.set_dot(GgmlType::Q8_0, Isa::I8mm, vec_dot_in_order<KernelQ8_0>, gemm_i8mm<KernelQ8_0>);
  table.set_dot(GgmlType::Q5_0, Isa::I8mm, vec_dot_in_order<KernelQ5_0>, gemm_i8mm<KernelQ5_0>);
}

}  // namespace peak::kernels
