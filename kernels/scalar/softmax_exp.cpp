// Reference softmax numerators (ExpSumFn) and SwiGLU gate (SwiGluFn) with the
// polynomial of exp_poly.h.
#include "kernels/exp_poly.h"
#include "kernels/scalar/scalar_install.h"

namespace peak {
namespace scalar {

float exp_sum(float* x, int64_t n, float max) {
  float total = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_nonpositive_scalar(x[i] - max);
    total += x[i];
  }
  return total;
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu_scalar(gate[i]) * up[i];
}

}  // namespace scalar
}  // namespace peak
