// The i8mm path: the SDOT kernels rebuilt for this path, with SMMLA 2x2-tile
// gemms for Q4_0, Q8_0 and the K types (arm/i8mm_gemm.inc).
#include "kernels/arm/neon_kernels.inc"
#include "kernels/arm/i8mm_gemm.inc"

namespace peak {

void install_i8mm_kernels(KernelTable& table) {
  install_128bit_quant_kernels(table, Isa::I8mm);
  install_quads(table);
  table[GgmlType::Q4_0].gemm_repacked = gemm_quads_i8mm<Q4_0Quads>;
  table[GgmlType::Q8_0].gemm_repacked = gemm_quads_i8mm<Q8_0Quads>;
  table.set_dot(GgmlType::Q4_0, Isa::I8mm, vec_dot_in_order<KernelQ4_0>, gemm_i8mm<KernelQ4_0>);
  table.set_dot(GgmlType::Q8_0, Isa::I8mm, vec_dot_in_order<KernelQ8_0>, gemm_i8mm<KernelQ8_0>);
  table.set_dot(GgmlType::Q2_K, Isa::I8mm, vec_dot_blocks<KernelQ2_K>, gemm_i8mm_super<KernelQ2_K>);
  table.set_dot(GgmlType::Q3_K, Isa::I8mm, vec_dot_blocks<KernelQ3_K>, gemm_i8mm_super<KernelQ3_K>);
  table.set_dot(GgmlType::Q4_K, Isa::I8mm, vec_dot_blocks<KernelQ4_K>, gemm_i8mm_super<KernelQ4_K>);
  table.set_dot(GgmlType::Q5_K, Isa::I8mm, vec_dot_blocks<KernelQ5_K>, gemm_i8mm_super<KernelQ5_K>);
  table.set_dot(GgmlType::Q6_K, Isa::I8mm, vec_dot_blocks<KernelQ6_K>, gemm_i8mm_super<KernelQ6_K>);
  table.set_dot(GgmlType::IQ4_XS, Isa::I8mm, vec_dot_blocks<KernelIQ4_XS>, gemm_i8mm_super<KernelIQ4_XS>);
}

}  // namespace peak
