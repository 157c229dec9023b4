// Rotary position embedding, llama.cpp semantics: pair i of a head rotates by
// theta_i = pos * freq_base^(-2i/n_dims) * freq_scale / freq_factor_i (factors 1
// unless given) and is scaled by attn_factor (1 unless given). Normal mode pairs
// neighbours (x[2i], x[2i+1]); neox mode pairs halves (x[i], x[i + n_dims/2]).
// Dimensions past n_dims pass through unchanged. Vision mode (RopeMode::Vision)
// pairs halves as neox does; the first half of the pairs turn by the token's
// row, the rest by its column, each half's frequencies from k = 0 again.
// Multimodal mode (RopeMode::Multi) pairs halves with neox's frequencies, each
// pair turned by the token's t, h or w position as its section says.
#include <cmath>

#include "core/graph.h"
#include "core/ops.h"

namespace peak::core {

namespace {

size_t rope_cache_bytes(const Tensor& node) {
  return round_up_to_cache_line(static_cast<size_t>(node.params.i[0]) * sizeof(float));
}

// Rotates the `half` pairs of a row: (x[i], x[i + half]) in neox mode,
// (x[2i], x[2i + 1]) otherwise. The mode is a template argument so that over a
// plain pointer the compiler vectorizes either loop.
template <bool kNeox, class Row>
void rotate_pairs(const Row& x, int64_t half, const float* cos_theta, const float* sin_theta, float* out) {
  for (int64_t i = 0; i < half; ++i) {
    const int64_t first = kNeox ? i : 2 * i;
    const int64_t second = kNeox ? i + half : 2 * i + 1;
    const float x0 = x[first], x1 = x[second];
    out[first] = x0 * cos_theta[i] - x1 * sin_theta[i];
    out[second] = x0 * sin_theta[i] + x1 * cos_theta[i];
  }
}

}  // namespace

size_t rope_work_size(const Tensor& node, int n_threads) {
  return rope_cache_bytes(node) * static_cast<size_t>(n_threads);
}

// node, src0 [head_dim, n_head, n_tokens, ...]; src1 I32 positions [n_tokens];
// src2 F32 freq_factors [n_dims / 2] or null. params: i[0] n_dims, i[1] mode,
// i[2] and i[3] the multimodal sections of t and h, f[0] freq_base,
// f[1] freq_scale, f[2] attn_factor.
void compute_rope(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const auto* positions = static_cast<const int32_t*>(node.src[1]->data);
  const auto* freq_factors = node.src[2] != nullptr ? static_cast<const float*>(node.src[2]->data) : nullptr;
  const int64_t n_dims = node.params.i[0];
  const int64_t half = n_dims / 2;
  const bool vision = node.params.i[1] == static_cast<int32_t>(RopeMode::Vision);
  const bool multi = node.params.i[1] == static_cast<int32_t>(RopeMode::Multi);
  const bool neox = vision || multi || node.params.i[1] == static_cast<int32_t>(RopeMode::Neox);
  // Multimodal: pairs [0, h_from) turn by t, [h_from, w_from) by h, the rest by w.
  const int64_t h_from = node.params.i[2];
  const int64_t w_from = h_from + node.params.i[3];
  const int64_t n_tokens = node.ne[2];
  const float freq_base = node.params.f[0];
  const float freq_scale = node.params.f[1];
  const float attn_factor = node.params.f[2];
  const int64_t head_dim = node.ne[0];

  // Per-thread cos/sin of each pair for the current token: [half cos, half sin].
  float* cache = reinterpret_cast<float*>(static_cast<char*>(params.work) +
                                          rope_cache_bytes(node) * static_cast<size_t>(params.thread_index));
  float* cos_theta = cache;
  float* sin_theta = cache + half;
  int64_t cached_token = -1;

  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    if (r.i2 != cached_token) {
      cached_token = r.i2;
      // pos * base^(-2i/n_dims) as a running product, then divided by the
      // pair's factor and scaled, in llama.cpp's order of float operations:
      // one powf per token instead of one per pair.
      if (vision) {
        // ggml's vision mode: theta_scale base^(-2 / (n_dims/2)), the
        // running product restarted at the second section with x.
        const int64_t section = half / 2;
        const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(half));
        float unscaled = 0.0f;
        for (int64_t i = 0; i < half; ++i, unscaled *= theta_scale) {
          if (i == 0) unscaled = static_cast<float>(positions[r.i2]);
          if (i == section) unscaled = static_cast<float>(positions[n_tokens + r.i2]);
          const float theta = freq_scale * unscaled;
          cos_theta[i] = std::cos(theta) * attn_factor;
          sin_theta[i] = std::sin(theta) * attn_factor;
        }
      } else if (multi) {
        // ggml's multimodal mode: one running product of base^(-2/n_dims)
        // per position, each pair taking the one of its section.
        const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_dims));
        float unscaled[3] = {static_cast<float>(positions[r.i2]), static_cast<float>(positions[n_tokens + r.i2]),
                             static_cast<float>(positions[2 * n_tokens + r.i2])};
        for (int64_t i = 0; i < half; ++i) {
          const float p = unscaled[i < h_from ? 0 : i < w_from ? 1 : 2];
          const float theta = freq_scale * (freq_factors != nullptr ? p / freq_factors[i] : p);
          cos_theta[i] = std::cos(theta) * attn_factor;
          sin_theta[i] = std::sin(theta) * attn_factor;
          for (float& u : unscaled) u *= theta_scale;
        }
      } else {
        const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_dims));
        float unscaled = static_cast<float>(positions[r.i2]);
        for (int64_t i = 0; i < half; ++i, unscaled *= theta_scale) {
          const float theta = freq_scale * (freq_factors != nullptr ? unscaled / freq_factors[i] : unscaled);
          cos_theta[i] = std::cos(theta) * attn_factor;
          sin_theta[i] = std::sin(theta) * attn_factor;
        }
      }
    }
    with_row_reader(source_row(a, r), [&](const auto& x) {
      if (neox) {
        rotate_pairs<true>(x, half, cos_theta, sin_theta, out);
      } else {
        rotate_pairs<false>(x, half, cos_theta, sin_theta, out);
      }
      for (int64_t i = n_dims; i < head_dim; ++i) out[i] = x[i];
    });
  });
}

}  // namespace peak::core
