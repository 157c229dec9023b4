// Internal to kernels/: the per-path table every ISA source fills in. A table
// for a path starts from the scalar kernels and lets each path of the family,
// lowest first, replace the entries it speeds up.
#pragma once

#include "kernels/dispatch.h"
#include "kernels/kernels.h"

namespace peak::kernels {

struct KernelTable {
  TypeKernels types[kGgmlTypeIdCount];
  FloatKernels floats;
  Isa dot_path[kGgmlTypeIdCount] = {};  // path that provides vec_dot, per type

  // Defined out of line (dispatch.cpp, baseline flags): an inline member used
  // by several per-ISA sources could be merged by the linker into one copy built
  // for the wrong instruction set.
  TypeKernels& operator[](GgmlType t);
  // Replaces the dot product kernels of `t` (the dot partner does not change).
  void set_dot(GgmlType t, Isa isa, VecDotFn vec_dot, GemmFn gemm);
  // Replaces the quantizer of `t`; it must write exactly the scalar
  // quantizer's bytes (tests check), so files and results do not depend on
  // the path.
  void set_from_float(GgmlType t, RowFromFloatFn from_float);
};

void install_scalar_kernels(KernelTable& table);
#if defined(__x86_64__) || defined(_M_X64)
void install_avx2_kernels(KernelTable& table);
void install_avx2_attention_kernels(KernelTable& table);    // x86/attention_avx2.cpp
void install_avx2_conversions(KernelTable& table);      // x86/convert_avx2.cpp
void install_avxvnni_kernels(KernelTable& table);
void install_avx512_kernels(KernelTable& table);
void install_avx512_attention_kernels(KernelTable& table);  // x86/attention_avx512.cpp
void install_avx512bf16_attention_kernels(KernelTable& table);  // x86/attention_bf16.cpp
#endif
#if defined(__aarch64__)
void install_neon_kernels(KernelTable& table);
void install_neon_attention_kernels(KernelTable& table);    // arm/attention_neon.cpp
void install_neon_conversions(KernelTable& table);      // arm/convert_neon.cpp
void install_dotprod_kernels(KernelTable& table);
void install_i8mm_kernels(KernelTable& table);
#endif

}  // namespace peak::kernels
