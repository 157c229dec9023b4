// The AVX-512 path (F, BW, VL, VNNI). Starts from the 256-bit quantized kernels
// rebuilt with EVEX vpdpbusd, then replaces the hot types with 512-bit kernels:
// the 16-rows-per-zmm gemm for Q4_0, Q8_0 and IQ4_NL (x86/avx512_rows16.inc) and the
// zmm-wide float, Q4_K and Q6_K kernels (x86/avx512_wide.inc), and the row-lane
// Q4_K, Q5_K and Q6_K prefill gemms (x86/avx512_rows16_k.inc). Q4_0 matrices may
// be repacked at load time into the rows16 lanes (kernels/repack.h).
#include "kernels/repack.h"
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx512_rows16.inc"
#include "kernels/x86/avx512_wide.inc"
#include "kernels/x86/avx512_rows16_k.inc"

namespace peak {

void install_avx512_kernels(KernelTable& table) {
  install_256bit_quant_kernels(table, Isa::Avx512);
  install_512bit_kernels(table);
  table.set_dot(GgmlType::Q4_K, Isa::Avx512, vec_dot_blocks<WideKernelQ4_K>, gemm_k_rows16<RowsQ4_K>);
  table.set_dot(GgmlType::Q5_K, Isa::Avx512, vec_dot_blocks<KernelQ5_K>, gemm_k_rows16<RowsQ5_K>);
  table.set_dot(GgmlType::Q6_K, Isa::Avx512, vec_dot_blocks<WideKernelQ6_K>, gemm_k_rows16<RowsQ6_K>);
  table.set_dot(GgmlType::Q4_0, Isa::Avx512, vec_dot_blocks<KernelQ4_0>, gemm_rows16<RowsQ4_0>);
  table[GgmlType::Q4_0].repack = repack_q4_0_lanes;
  table[GgmlType::Q4_0].gemm_repacked = gemm_q4_0_lanes;
  table.set_dot(GgmlType::Q8_0, Isa::Avx512, vec_dot_blocks<KernelQ8_0>, gemm_rows16<RowsQ8_0>);
  table.set_dot(GgmlType::IQ4_NL, Isa::Avx512, vec_dot_blocks<KernelIQ4_NL>, gemm_rows16<RowsIQ4_NL>);
}

}  // namespace peak
