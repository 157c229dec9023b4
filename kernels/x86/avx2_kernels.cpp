// The AVX2 path (AVX2 + FMA + F16C): every type's dot products on 256-bit vectors.
#include "kernels/x86/avx2_kernels.inc"

namespace peak {

void install_avx2_kernels(KernelTable& table) {
  install_256bit_float_kernels(table, Isa::Avx2);
  install_256bit_quant_kernels(table, Isa::Avx2);
}

}  // namespace peak
