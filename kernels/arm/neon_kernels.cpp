// The NEON path (baseline arm64): every kernel of neon_kernels.inc and
// k_quants.inc, and the activation quantizers of neon_quantize.inc.
#include "kernels/arm/neon_kernels.inc"
#include "kernels/arm/k_quants.inc"
#include "kernels/arm/neon_quantize.inc"
#include "kernels/arm/quad_gemm.inc"

namespace peak::kernels {

void install_neon_kernels(KernelTable& table) {
  install_128bit_float_kernels(table, Isa::Neon);
  install_128bit_quant_kernels(table, Isa::Neon);
  install_128bit_k_kernels(table, Isa::Neon);
  install_128bit_quantizers(table);
  install_quads(table);
}

}  // namespace peak::kernels
