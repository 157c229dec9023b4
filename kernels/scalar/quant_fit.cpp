#include "kernels/scalar/quant_fit.h"

#include <algorithm>
#include <cmath>

#include "kernels/blocks.h"

namespace peak::kernels {
namespace scalar {
namespace {

// Value of largest magnitude, sign kept (0 for all-zero input).
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  return max;
}

}  // namespace

int round_to_int(float v) { return static_cast<int>(std::nearbyint(v)); }

float fit_symmetric(const float* x, int n, int nmax, int8_t* L) {
  const float max = signed_absmax(x, n);
  if (std::fabs(max) < 1e-15f) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  // Least squares for fixed codes: scale = sum(x L) / sum(L^2), and the error
  // drops by sum(x L)^2 / sum(L^2), the score to maximise.
  float best_score = -1.0f, best_scale = 0.0f;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    float sum_xl = 0.0f, sum_ll = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(round_to_int(iscale * x[i]), -nmax, nmax - 1);
      sum_xl += x[i] * static_cast<float>(l);
      sum_ll += static_cast<float>(l * l);
    }
    if (sum_ll > 0.0f && sum_xl * sum_xl / sum_ll > best_score) {
      best_score = sum_xl * sum_xl / sum_ll;
      best_scale = sum_xl / sum_ll;
    }
  }
  const float inv = best_scale != 0.0f ? 1.0f / best_scale : 0.0f;
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(std::clamp(round_to_int(inv * x[i]), -nmax, nmax - 1));
  return best_scale;
}

float fit_affine(const float* x, int n, int nmax, uint8_t* L, float* neg_min) {
  float min = x[0], max = x[0], sum_x2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_x2 += x[i] * x[i];
  }
  min = std::min(min, 0.0f);
  if (max <= min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *neg_min = 0.0f;
    return 0.0f;
  }
  // Weights favour large values a little (they matter more in a dot product)
  // without letting one outlier decide the scale.
  const float rms = std::sqrt(sum_x2 / static_cast<float>(n));
  float best_err = INFINITY, best_scale = 0.0f, best_min = 0.0f;
  for (int step = 0; step <= 20; ++step) {
    const float iscale = (static_cast<float>(nmax) - 1.0f + 0.1f * static_cast<float>(step)) / (max - min);
    // Weighted least squares for x ~ scale * l + offset with the codes fixed.
    float sw = 0, swl = 0, swll = 0, swx = 0, swlx = 0;
    for (int i = 0; i < n; ++i) {
      const float l = static_cast<float>(std::clamp(round_to_int(iscale * (x[i] - min)), 0, nmax));
      const float w = rms + std::fabs(x[i]);
      sw += w;
      swl += w * l;
      swll += w * l * l;
      swx += w * x[i];
      swlx += w * l * x[i];
    }
    const float det = sw * swll - swl * swl;
    if (det <= 0.0f) continue;
    float scale = (sw * swlx - swl * swx) / det;
    float offset = (swll * swx - swl * swlx) / det;
    if (offset > 0.0f) {  // the format subtracts a non-negative min
      offset = 0.0f;
      scale = swlx / swll;
    }
    if (scale <= 0.0f) continue;
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float l = static_cast<float>(std::clamp(round_to_int((x[i] - offset) / scale), 0, nmax));
      const float diff = scale * l + offset - x[i];
      err += (rms + std::fabs(x[i])) * diff * diff;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = scale;
      best_min = offset;
    }
  }
  if (best_scale <= 0.0f) {  // degenerate input: plain min/max mapping
    best_scale = (max - min) / static_cast<float>(nmax);
    best_min = min;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(std::clamp(round_to_int((x[i] - best_min) / best_scale), 0, nmax));
  *neg_min = -best_min;
  return best_scale;
}

uint8_t nearest_iq4_index(float v) {
  int best = 0;
  float best_dist = std::fabs(v - kIq4Values[0]);
  for (int k = 1; k < 16; ++k) {
    const float dist = std::fabs(v - kIq4Values[k]);
    if (dist < best_dist) {
      best_dist = dist;
      best = k;
    }
  }
  return static_cast<uint8_t>(best);
}

float fit_iq4(const float* x, int n, uint8_t* L) {
  const float max = signed_absmax(x, n);
  if (std::fabs(max) < 1e-15f) {
    for (int i = 0; i < n; ++i) L[i] = nearest_iq4_index(0.0f);
    return 0.0f;
  }
  // Candidates map the extreme value onto -127 (the longest arm of the code
  // book) give or take ten units; least squares then refits the scale.
  float best_score = -1.0f, best_scale = 0.0f;
  for (int step = -10; step <= 10; ++step) {
    const float iscale = (static_cast<float>(kIq4Values[0]) + static_cast<float>(step)) / max;
    float sum_xv = 0.0f, sum_vv = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float v = kIq4Values[nearest_iq4_index(iscale * x[i])];
      sum_xv += x[i] * v;
      sum_vv += v * v;
    }
    if (sum_vv > 0.0f && sum_xv * sum_xv / sum_vv > best_score) {
      best_score = sum_xv * sum_xv / sum_vv;
      best_scale = sum_xv / sum_vv;
    }
  }
  const float inv = best_scale != 0.0f ? 1.0f / best_scale : 0.0f;
  for (int i = 0; i < n; ++i) L[i] = nearest_iq4_index(inv * x[i]);
  return best_scale;
}

}  // namespace scalar
}  // namespace peak::kernels
