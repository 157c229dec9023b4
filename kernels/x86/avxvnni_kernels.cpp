// The AVX-VNNI path: the 256-bit quantized kernels with VEX vpdpbusd as their
// int8 dot. Float types keep the AVX2 kernels (VNNI adds nothing for them).
#include "kernels/x86/avx2_kernels.inc"

namespace peak {

void install_avxvnni_kernels(KernelTable& table) { install_256bit_quant_kernels(table, Isa::AvxVnni); }

}  // namespace peak
