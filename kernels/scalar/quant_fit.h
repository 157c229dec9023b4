// Internal: scale searches shared by the K and IQ4 quantizers. Each tries a small
// set of candidate scales around the obvious one (extreme value onto the extreme
// code), refits the scale by least squares for the codes that candidate gives,
// and keeps the candidate with the lowest squared error.
#pragma once

#include <cstdint>

namespace peak::kernels {
namespace scalar {

// Nearest integer, ties to even (the default rounding mode).
int round_to_int(float v);

// Symmetric codes: x ~ scale * L with L in [-nmax, nmax - 1]. The returned
// scale is signed so that the value of largest magnitude lands on -nmax, which
// uses the extra negative code. Writes L (unbiased) and returns the scale;
// all-zero input gives scale 0 and L = 0.
float fit_symmetric(const float* x, int n, int nmax, int8_t* L);

// Affine codes: x ~ scale * L - neg_min with L in [0, nmax], scale >= 0 and
// neg_min >= 0 (the range always includes zero, as the K formats require).
float fit_affine(const float* x, int n, int nmax, uint8_t* L, float* neg_min);

// IQ4 code book: x ~ scale * kIq4Values[L], L in 0..15. Returns the signed scale.
float fit_iq4(const float* x, int n, uint8_t* L);
// Index of the code book value nearest to v.
uint8_t nearest_iq4_index(float v);

}  // namespace scalar
}  // namespace peak::kernels
