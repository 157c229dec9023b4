// Internal: quantizers of the K types (RowFromFloatFn signatures). Not
// bit-identical to ggml's (the format does not fix the search); their error is
// checked against llama.cpp's output in the tests. Inputs must be finite.
#pragma once

#include <cstdint>

namespace peak::kernels {
namespace scalar {

void quantize_row_q2_k(const float* src, void* dst, int64_t n);
void quantize_row_q3_k(const float* src, void* dst, int64_t n);
void quantize_row_q4_k(const float* src, void* dst, int64_t n);
void quantize_row_q5_k(const float* src, void* dst, int64_t n);
void quantize_row_q6_k(const float* src, void* dst, int64_t n);
// The activation partner: d = amax / 127, q = round(x / d), bsums of 16.
void quantize_row_q8_k(const float* src, void* dst, int64_t n);

}  // namespace scalar
}  // namespace peak::kernels
