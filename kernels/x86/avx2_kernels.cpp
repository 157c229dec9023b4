// The AVX2 path (AVX2 + FMA + F16C): every type's dot products on 256-bit
// vectors, the 8-rows-per-ymm lane-tile gemms (x86/avx2_lane_gemms.inc) and the
// activation quantizers (x86/avx2_quantize.inc).
#include "kernels/x86/avx2_kernels.inc"
#include "kernels/x86/avx2_lane_gemms.inc"
#include "kernels/x86/avx2_quantize.inc"

namespace peak::kernels {

void install_avx2_kernels(KernelTable& table) {
  install_256bit_float_kernels(table, Isa::Avx2);
  install_256bit_quant_kernels(table, Isa::Avx2);
  install_256bit_lane_gemms(table, Isa::Avx2);
  install_256bit_quantizers(table);
}

}  // namespace peak::kernels
