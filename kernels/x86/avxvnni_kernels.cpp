// The AVX-VNNI path: the 256-bit quantized kernels with VEX vpdpbusd as their
// int8 dot, and the 8-rows-per-ymm Q4_0, Q4_K, Q5_K and Q6_K gemms (x86/avx2_rows8*.inc). Float
// types keep the AVX2 kernels (VNNI adds nothing for them).
#include "kernels/repack.h"
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx2_rows8.inc"
#include "kernels/x86/avx2_rows8_k.inc"

namespace peak {

void install_avxvnni_kernels(KernelTable& table) {
  install_256bit_quant_kernels(table, Isa::AvxVnni);
  table.set_dot(GgmlType::Q4_0, Isa::AvxVnni, vec_dot_blocks<KernelQ4_0>, gemm_q4_0_rows8);
  table[GgmlType::Q4_0].repack = repack_q4_0_lanes;
  table[GgmlType::Q4_0].gemm_repacked = gemm_q4_0_lanes8;
  table.set_dot(GgmlType::Q4_K, Isa::AvxVnni, vec_dot_blocks<KernelQ4_K>, gemm_k_rows8<Rows8Q4_K>);
  table.set_dot(GgmlType::Q5_K, Isa::AvxVnni, vec_dot_blocks<KernelQ5_K>, gemm_k_rows8<Rows8Q5_K>);
  table.set_dot(GgmlType::Q6_K, Isa::AvxVnni, vec_dot_blocks<KernelQ6_K>, gemm_k_rows8<Rows8Q6_K>);
}

}  // namespace peak
