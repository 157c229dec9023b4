// Run-time choice of the kernel path. The path is picked once, on first use, from
// the CPU's features (cpuid/xgetbv on x86, getauxval HWCAP bits on Linux/Android
// arm64). PEAK_ISA=scalar|avx2|avxvnni|avx512|avx512bf16|neon|dotprod|i8mm asks for a lower
// path; asking for one the CPU lacks (or an unknown name) logs a warning
// (log/log.h: stderr by default) and keeps the best available path.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace peak::kernels {

// Paths in increasing order within each architecture family. A path includes
// the kernels of the lower paths of its family (AVX-512 tables keep AVX2 kernels
// for types that have no AVX-512 one).
enum class Isa : uint8_t {
  Scalar,
  Avx2,     // AVX2 + FMA + F16C
  AvxVnni,  // AVX2 + AVX-VNNI (256-bit vpdpbusd)
  Avx512,   // AVX-512 F, BW, VL and VNNI
  Avx512Bf16,  // Avx512 + AVX512_BF16: attention's prefill products in bf16
  Neon,     // arm64 Advanced SIMD (always present on arm64)
  Dotprod,  // arm64 SDOT/UDOT
  I8mm,     // arm64 SMMLA
};
constexpr int kIsaCount = 8;

const char* isa_name(Isa isa);
// Parses a PEAK_ISA value; false for unknown names.
bool isa_from_name(const char* name, Isa* out);

// True when this CPU (and this build) can run kernels of `isa`.
bool cpu_has_isa(Isa isa);
// The best path this CPU supports, ignoring PEAK_ISA.
Isa best_cpu_isa();
// The path in use: best_cpu_isa() lowered by PEAK_ISA (read once).
Isa active_isa();
// What a PEAK_ISA value selects on this CPU: null or empty gives the best path;
// an unknown name or a path the CPU lacks gives the best path and a warning
// (log::warn).
Isa resolve_isa_request(const char* request);

// Kernels of a given path (tests and benchmarks compare paths); `isa` must
// satisfy cpu_has_isa(isa).
const TypeKernels& kernels_for_isa(GgmlType type, Isa isa);
const FloatKernels& float_kernels_for_isa(Isa isa);
const KernelTuning& kernel_tuning_for_isa(Isa isa);
// Which path actually serves `type`'s vec_dot in the table of `isa` (a type
// without a SIMD kernel on that path reports the lower path it falls back to).
Isa kernel_path_for(GgmlType type, Isa isa);
// Same for the active table: what `peak inspect --cpu` prints per type.
Isa kernel_path_for(GgmlType type);

}  // namespace peak::kernels
