// The AVX-VNNI path: the 256-bit quantized kernels and the 8-rows-per-ymm
// lane-tile gemms (x86/avx2_lane_gemms.inc) with VEX vpdpbusd as their int8
// dot. Float types keep the AVX2 kernels (VNNI adds nothing for them).
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx2_lane_gemms.inc"

namespace peak::kernels {

void install_avxvnni_kernels(KernelTable& table) {
  install_256bit_quant_kernels(table, Isa::AvxVnni);
  install_256bit_lane_gemms(table, Isa::AvxVnni);
}

}  // namespace peak::kernels
