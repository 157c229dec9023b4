// The dotprod path: the 128-bit quantized kernels with SDOT as their int8 dot.
// Float types keep the NEON kernels.
#include "kernels/arm/neon_kernels.inc"
#include "kernels/arm/k_quants.inc"
#include "kernels/arm/quad_gemm.inc"

namespace peak::kernels {

void install_dotprod_kernels(KernelTable& table) {
  install_128bit_quant_kernels(table, Isa::Dotprod);
  install_128bit_k_kernels(table, Isa::Dotprod);
  install_quads(table);
}

}  // namespace peak::kernels
