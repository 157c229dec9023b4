// The AVX2 path (AVX2 + FMA + F16C): every type's dot products on 256-bit vectors,
// the 8-rows-per-ymm Q4_0, Q4_K, Q5_K and Q6_K gemms (x86/avx2_rows8*.inc) and the
// activation quantizers (x86/avx2_quantize.inc).
#include "kernels/repack.h"
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx2_quantize.inc"
#include "kernels/x86/avx2_rows8.inc"
#include "kernels/x86/avx2_rows8_k.inc"

namespace peak {

void install_avx2_kernels(KernelTable& table) {
  install_256bit_float_kernels(table, Isa::Avx2);
  install_256bit_quant_kernels(table, Isa::Avx2);
  table.set_dot(GgmlType::Q4_0, Isa::Avx2, vec_dot_blocks<KernelQ4_0>, gemm_q4_0_rows8);
  table[GgmlType::Q4_0].repack = repack_q4_0_lanes;
  table[GgmlType::Q4_0].gemm_repacked = gemm_q4_0_lanes8;
  table.set_dot(GgmlType::Q4_K, Isa::Avx2, vec_dot_blocks<KernelQ4_K>, gemm_k_rows8<Rows8Q4_K>);
  table.set_dot(GgmlType::Q5_K, Isa::Avx2, vec_dot_blocks<KernelQ5_K>, gemm_k_rows8<Rows8Q5_K>);
  table.set_dot(GgmlType::Q6_K, Isa::Avx2, vec_dot_blocks<KernelQ6_K>, gemm_k_rows8<Rows8Q6_K>);
  install_256bit_quantizers(table);
}

}  // namespace peak
