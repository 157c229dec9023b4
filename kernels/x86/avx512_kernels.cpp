// The AVX-512 path (F, BW, VL, VNNI). Starts from the 256-bit quantized kernels
// rebuilt with EVEX vpdpbusd, then replaces the hot types with 512-bit kernels:
// the 16-rows-per-zmm lane-tile gemms for Q4_0, Q5_0, Q8_0 and IQ4_NL
// (x86/lane_gemm.inc) and for Q4_K, Q5_K and Q6_K (x86/lane_gemm_k.inc, with
// the decode kernels of x86/avx512_gemv_k.inc), on x86/avx512_lanes.inc, and
// the zmm-wide float, Q4_K and Q6_K kernels (x86/avx512_wide.inc). Q4_0
// matrices may be repacked at load time into the lanes, and the KV cache keeps
// Q8_0 keys in lanes (kernels/repack.h).
#include "kernels/repack.h"
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx512_gemv_k.inc"
#include "kernels/x86/avx512_lanes.inc"
#include "kernels/x86/avx512_wide.inc"
#include "kernels/x86/lane_gemm.inc"
#include "kernels/x86/lane_gemm_k.inc"

namespace peak::kernels {

void install_avx512_kernels(KernelTable& table) {
  install_256bit_quant_kernels(table, Isa::Avx512);
  install_512bit_kernels(table);
  table.set_dot(GgmlType::Q4_K, Isa::Avx512, vec_dot_blocks<WideKernelQ4_K>,
                gemm_k_lanes<Lanes512, LaneQ4_K, decode_gemm<DecodeQ4KRows16>>);
  table.set_dot(GgmlType::Q5_K, Isa::Avx512, vec_dot_blocks<KernelQ5_K>,
                gemm_k_lanes<Lanes512, LaneQ5_K, decode_rows_gemm<KernelQ5_K>>);
  table.set_dot(GgmlType::Q6_K, Isa::Avx512, vec_dot_blocks<WideKernelQ6_K>,
                gemm_k_lanes<Lanes512, LaneQ6_K, decode_gemm<DecodeQ6KRows>>);
  table.set_dot(GgmlType::Q4_0, Isa::Avx512, vec_dot_blocks<KernelQ4_0>, gemm_lanes<Lanes512, LaneQ4_0>);
  table[GgmlType::Q4_0].repack = repack_q4_0_lanes;
  table[GgmlType::Q4_0].gemm_repacked = gemm_q4_0_repacked<Lanes512>;
  table.set_dot(GgmlType::Q5_0, Isa::Avx512, vec_dot_blocks<KernelQ5_0>, gemm_lanes<Lanes512, LaneQ5_0>);
  table.set_dot(GgmlType::Q8_0, Isa::Avx512, vec_dot_blocks<KernelQ8_0>, gemm_lanes<Lanes512, LaneQ8_0>);
  table[GgmlType::Q8_0].gemm_key_lanes = gemm_q8_0_key_lanes<Lanes512>;
  table[GgmlType::Q8_0].move_key_lanes = move_q8_0_key_lanes_avx512;
  table.set_dot(GgmlType::IQ4_NL, Isa::Avx512, vec_dot_blocks<KernelIQ4_NL>, gemm_lanes<Lanes512, LaneIQ4_NL>);
}

}  // namespace peak::kernels
