// Reference softmax numerators (ExpSumFn) and their row maximum (ScaleMaxFn),
// SwiGLU and GeGLU gates (SwiGluFn, GeGluFn) and soft-capping (SoftcapFn), all
// on the polynomial of exp_poly.h.
#include <limits>

#include "kernels/exp_poly.h"
#include "kernels/scalar/scalar_install.h"

namespace peak::kernels {
namespace scalar {

float exp_sum(float* x, int64_t n, float max) {
  float total = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_nonpositive_scalar(x[i] - max);
    total += x[i];
  }
  return total;
}

float scale_max(float* x, int64_t n, float scale) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    x[i] *= scale;
    if (x[i] > max) max = x[i];  // false for NaN
  }
  return max;
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu_scalar(gate[i]) * up[i];
}

void geglu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gelu_tanh_scalar(gate[i]) * up[i];
}

void softcap(const float* x, float* out, int64_t n, float cap) {
  const float inverse = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) out[i] = cap * tanh_scalar(x[i] * inverse);
}

}  // namespace scalar
}  // namespace peak::kernels
