// The AVX-512 path (F, BW, VL, VNNI). Starts from the 256-bit quantized kernels
// rebuilt with EVEX vpdpbusd, then replaces the hot types with 512-bit kernels.
#include "kernels/x86/avx2_kernels.inc"

namespace peak {

void install_avx512_kernels(KernelTable& table) { install_256bit_quant_kernels(table, Isa::Avx512); }

}  // namespace peak
