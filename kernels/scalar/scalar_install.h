// Internal: each scalar source registers the reference kernels of its types.
#pragma once

#include "kernels/kernel_table.h"

namespace peak::kernels {
namespace scalar {

void install_float_types(KernelTable& table);   // F32, F16, BF16
void install_legacy_quants(KernelTable& table); // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1
void install_k_quants(KernelTable& table);      // Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K
void install_iq4_quants(KernelTable& table);    // IQ4_NL, IQ4_XS
float exp_sum(float* x, int64_t n, float max);  // softmax_exp.cpp
float scale_max(float* x, int64_t n, float scale);  // softmax_exp.cpp
void swiglu(const float* gate, const float* up, float* out, int64_t n);  // softmax_exp.cpp
void geglu(const float* gate, const float* up, float* out, int64_t n);   // softmax_exp.cpp
void softcap(const float* x, float* out, int64_t n, float cap);          // softmax_exp.cpp

}  // namespace scalar
}  // namespace peak::kernels
