// Reference softmax numerators (ExpSumFn) with the polynomial of exp_poly.h.
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

}  // namespace scalar
}  // namespace peak
