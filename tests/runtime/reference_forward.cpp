#include "reference_forward.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/kernels.h"

namespace peak::test {

using kernels::float_kernels;
using kernels::GgmlType;

namespace {

void rms_norm(std::vector<double>& x, size_t begin, size_t n, const std::vector<double>& w, double eps) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[begin + i] * x[begin + i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (size_t i = 0; i < n; ++i) x[begin + i] = x[begin + i] * inv * w[i];
}

double soft_cap(double x, double cap) { return cap > 0.0 ? cap * std::tanh(x / cap) : x; }

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// gelu with the tanh approximation (PyTorch's gelu(approximate="tanh")).
double gelu_tanh(double x) {
  const double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

std::vector<double> slice(const std::vector<double>& v, size_t begin, size_t n) {
  return std::vector<double>(v.begin() + static_cast<long>(begin), v.begin() + static_cast<long>(begin + n));
}

}  // namespace

ReferenceForward::ReferenceForward(const gguf::GgufFile& file, const model::HParams& hp, int64_t n_ctx)
    : file_(file), hp_(hp), k_cache_(static_cast<size_t>(hp.n_layer)), v_cache_(static_cast<size_t>(hp.n_layer)) {
  if (has("rope_factors_long.weight")) {
    rope_factors_ = vec(n_ctx > hp.rope_original_context ? "rope_factors_long.weight" : "rope_factors_short.weight");
  } else if (has("rope_freqs.weight")) {
    rope_factors_ = vec("rope_freqs.weight");
  }
}

bool ReferenceForward::has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

std::vector<double> ReferenceForward::vec(const std::string& name) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t || t->type != GgmlType::F32) throw std::runtime_error("reference needs F32 tensor " + name);
  const auto* p = reinterpret_cast<const float*>(t->data);
  return std::vector<double>(p, p + t->n_elements());
}

// W stored as ggml [n_in, n_out]: output j is row j · x.
std::vector<double> ReferenceForward::matvec(const std::string& name, const std::vector<double>& x) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t || t->type != GgmlType::F32) throw std::runtime_error("reference needs F32 tensor " + name);
  const auto replaced = matrices_.find(name);
  const auto* w = reinterpret_cast<const float*>(t->data);
  const size_t n_in = static_cast<size_t>(t->ne[0]), n_out = static_cast<size_t>(t->ne[1]);
  std::vector<double> y(n_out);
  for (size_t j = 0; j < n_out; ++j) {
    double s = 0;
    if (replaced != matrices_.end()) {
      for (size_t i = 0; i < n_in; ++i) s += replaced->second[j * n_in + i] * x[i];
    } else {
      for (size_t i = 0; i < n_in; ++i) s += static_cast<double>(w[j * n_in + i]) * x[i];
    }
    y[j] = s;
  }
  return y;
}

// Pair i of the first n_dims dimensions turns by pos * base^(-2i/n_dims) *
// freq_scale / factor_i and is scaled by attn_factor; the rest pass through.
// With multimodal rotary positions (M-RoPE, HF's Qwen2-VL:
// apply_multimodal_rotary_pos_emb) pos is t, h or w by the pair's section.
void ReferenceForward::rope(std::vector<double>& v, size_t n_heads, int64_t il, RopePosition place) const {
  const model::LayerAttention& layer = hp_.layer(il);
  if (!layer.rope) return;
  const core::RopeParams& r = layer.rope_params;
  const size_t d = static_cast<size_t>(hp_.head_dim), n_dims = static_cast<size_t>(r.n_dims);
  const bool multi = r.mode == core::RopeMode::Multi;
  const bool neox = r.mode == core::RopeMode::Neox || multi;
  const auto h_from = static_cast<size_t>(r.sections[0]), w_from = h_from + static_cast<size_t>(r.sections[1]);
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t i = 0; i < n_dims / 2; ++i) {
      const double exponent = -2.0 * static_cast<double>(i) / static_cast<double>(n_dims);
      const auto pos = static_cast<double>(!multi || i < h_from ? place.t : i < w_from ? place.h : place.w);
      double theta = pos * std::pow(static_cast<double>(r.freq_base), exponent) * r.freq_scale;
      if (!rope_factors_.empty()) theta /= rope_factors_[i];
      const size_t a = h * d + (neox ? i : 2 * i), b = h * d + (neox ? i + n_dims / 2 : 2 * i + 1);
      const double x0 = v[a], x1 = v[b];
      v[a] = (x0 * std::cos(theta) - x1 * std::sin(theta)) * r.attn_factor;
      v[b] = (x0 * std::sin(theta) + x1 * std::cos(theta)) * r.attn_factor;
    }
  }
}

// Scores q·k * scale, soft-capped when the model caps them, over the cached
// positions the layer sees: those up to pos, on a sliding layer the last
// `window` of them (pos included); bidirectional, all of them, on a sliding
// layer those at most window / 2 from pos; a span, all of them, on a sliding
// layer from the window's start before pos.
void ReferenceForward::attend(const std::vector<double>& q, size_t h, int64_t il, int32_t pos, Visibility visibility,
                              std::vector<double>& out) const {
  const bool bidirectional = visibility == Visibility::Bidirectional;
  const size_t d = static_cast<size_t>(hp_.head_dim), n_kv_head = static_cast<size_t>(hp_.n_head_kv);
  const size_t kvh = h / (static_cast<size_t>(hp_.n_head) / n_kv_head);
  const auto& kc = k_cache_[static_cast<size_t>(il)];
  const auto& vc = v_cache_[static_cast<size_t>(il)];
  const auto n_pos = static_cast<int64_t>(kc.size() / (n_kv_head * d));
  const int64_t window = hp_.window(il);
  int64_t first = 0, end = visibility != Visibility::Causal ? n_pos : pos + 1;
  if (window > 0 && bidirectional) {
    first = std::max<int64_t>(0, pos - window / 2);
    end = std::min<int64_t>(n_pos, pos + window / 2 + 1);
  } else if (window > 0) {
    first = std::max<int64_t>(0, pos + 1 - window);
  }
  std::vector<double> scores(static_cast<size_t>(end - first));
  double max_score = -1e300;
  for (int64_t t = first; t < end; ++t) {
    double s = 0;
    for (size_t i = 0; i < d; ++i) s += q[h * d + i] * kc[(static_cast<size_t>(t) * n_kv_head + kvh) * d + i];
    scores[static_cast<size_t>(t - first)] = soft_cap(s * hp_.attention_scale, hp_.attn_softcap);
    max_score = std::max(max_score, scores[static_cast<size_t>(t - first)]);
  }
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - max_score));
  for (int64_t t = first; t < end; ++t) {
    const double weight = scores[static_cast<size_t>(t - first)] / sum;
    for (size_t i = 0; i < d; ++i) out[h * d + i] += weight * vc[(static_cast<size_t>(t) * n_kv_head + kvh) * d + i];
  }
}

std::vector<double> ReferenceForward::logits_of(const std::vector<double>& x) const {
  std::vector<double> logits = matvec(has("output.weight") ? "output.weight" : "token_embd.weight", x);
  for (double& l : logits) l = soft_cap(l, hp_.final_softcap);
  return logits;
}

std::vector<double> ReferenceForward::step(int32_t token) { return logits_of(hidden_states({token}).front()); }

std::vector<double> ReferenceForward::span(const std::vector<std::vector<double>>& rows) {
  return logits_of(forward(rows, Visibility::Span).back());
}

std::vector<double> ReferenceForward::picture(const std::vector<std::vector<double>>& rows, int64_t cols) {
  return logits_of(forward(rows, Visibility::Causal, cols).back());
}

std::vector<std::vector<double>> ReferenceForward::hidden_states(const std::vector<int32_t>& tokens,
                                                                 bool bidirectional) {
  const size_t e = static_cast<size_t>(hp_.n_embd);
  std::vector<std::vector<double>> xs(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    xs[t] = slice(vec("token_embd.weight"), static_cast<size_t>(tokens[t]) * e, e);
    for (double& v : xs[t]) v *= hp_.embedding_scale;
  }
  return forward(std::move(xs), bidirectional ? Visibility::Bidirectional : Visibility::Causal);
}

std::vector<std::vector<double>> ReferenceForward::forward(std::vector<std::vector<double>> xs, Visibility visibility,
                                                           int64_t picture_cols) {
  const size_t e = static_cast<size_t>(hp_.n_embd), d = static_cast<size_t>(hp_.head_dim);
  const size_t n_head = static_cast<size_t>(hp_.n_head), n_kv_head = static_cast<size_t>(hp_.n_head_kv);
  const size_t q_rows = n_head * d, kv_rows = n_kv_head * d, ff = static_cast<size_t>(hp_.n_ff);
  const size_t n = xs.size();
  const double eps = hp_.rms_eps;

  for (int64_t il = 0; il < hp_.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    // Every token's query, key and value first: a bidirectional token sees later ones.
    std::vector<std::vector<double>> qs(n);
    for (size_t t = 0; t < n; ++t) {
      std::vector<double> h = xs[t];
      rms_norm(h, 0, e, vec(p + "attn_norm.weight"), eps);
      std::vector<double> q, k, v;
      if (has(p + "attn_qkv.weight")) {
        const std::vector<double> qkv = matvec(p + "attn_qkv.weight", h);  // Q rows, then K, then V
        q = slice(qkv, 0, q_rows);
        k = slice(qkv, q_rows, kv_rows);
        v = slice(qkv, q_rows + kv_rows, kv_rows);
      } else {
        q = matvec(p + "attn_q.weight", h);
        k = matvec(p + "attn_k.weight", h);
        v = matvec(p + "attn_v.weight", h);
      }
      if (has(p + "attn_q.bias")) {
        const auto bq = vec(p + "attn_q.bias"), bk = vec(p + "attn_k.bias"), bv = vec(p + "attn_v.bias");
        for (size_t i = 0; i < q.size(); ++i) q[i] += bq[i];
        for (size_t i = 0; i < k.size(); ++i) k[i] += bk[i], v[i] += bv[i];
      }
      if (has(p + "attn_q_norm.weight")) {
        const auto qn = vec(p + "attn_q_norm.weight"), kn = vec(p + "attn_k_norm.weight");
        for (size_t hh = 0; hh < n_head; ++hh) rms_norm(q, hh * d, d, qn, eps);
        for (size_t hh = 0; hh < n_kv_head; ++hh) rms_norm(k, hh * d, d, kn, eps);
      }
      const auto i = static_cast<int64_t>(t);
      const RopePosition place =
          picture_cols > 0
              ? RopePosition{next_rotation_, next_rotation_ + i / picture_cols, next_rotation_ + i % picture_cols}
              : RopePosition{next_rotation_ + i, next_rotation_ + i, next_rotation_ + i};
      rope(q, n_head, il, place);
      rope(k, n_kv_head, il, place);
      qs[t] = q;
      auto& kc = k_cache_[static_cast<size_t>(il)];
      auto& vc = v_cache_[static_cast<size_t>(il)];
      kc.insert(kc.end(), k.begin(), k.end());
      vc.insert(vc.end(), v.begin(), v.end());
    }

    for (size_t t = 0; t < n; ++t) {
      std::vector<double>& x = xs[t];
      std::vector<double> attn(q_rows, 0.0);
      const auto pos = static_cast<int32_t>(pos_ + static_cast<int32_t>(t));
      for (size_t hh = 0; hh < n_head; ++hh) attend(qs[t], hh, il, pos, visibility, attn);
      std::vector<double> o = matvec(p + "attn_output.weight", attn);
      if (has(p + "post_attention_norm.weight")) rms_norm(o, 0, e, vec(p + "post_attention_norm.weight"), eps);
      for (size_t i = 0; i < e; ++i) x[i] += o[i];

      std::vector<double> h = x;
      rms_norm(h, 0, e, vec(p + "ffn_norm.weight"), eps);
      std::vector<double> gate, up;
      if (has(p + "ffn_gate.weight")) {
        gate = matvec(p + "ffn_gate.weight", h);
        up = matvec(p + "ffn_up.weight", h);
      } else {
        const std::vector<double> gate_up = matvec(p + "ffn_up.weight", h);  // gate rows, then up rows
        gate = slice(gate_up, 0, ff);
        up = slice(gate_up, ff, ff);
      }
      const bool gelu = hp_.ffn_activation == model::FfnActivation::GeluTanh;
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = (gelu ? gelu_tanh(gate[i]) : silu(gate[i])) * up[i];
      std::vector<double> down = matvec(p + "ffn_down.weight", gate);
      if (has(p + "post_ffw_norm.weight")) rms_norm(down, 0, e, vec(p + "post_ffw_norm.weight"), eps);
      for (size_t i = 0; i < e; ++i) x[i] += down[i];
      const auto offset = layer_offsets_.find(il);
      if (offset != layer_offsets_.end() && !offset->second.empty()) {
        for (size_t i = 0; i < e; ++i) x[i] += offset->second[i];
      }
    }
  }
  for (std::vector<double>& x : xs) rms_norm(x, 0, e, vec("output_norm.weight"), eps);
  pos_ += static_cast<int32_t>(n);
  const auto count = static_cast<int64_t>(n);
  next_rotation_ += picture_cols > 0 ? std::max(count / picture_cols, picture_cols) : count;
  return xs;
}

void ReferenceDeviation::add(const std::vector<double>& expected, const float* logits) {
  for (size_t v = 0; v < expected.size(); ++v) {
    max_diff = std::max(max_diff, std::abs(expected[v] - static_cast<double>(logits[v])));
    max_ref = std::max(max_ref, std::abs(expected[v]));
  }
}

double prefill_tolerance(const model::Model& m, double fp32_tolerance) {
  const bool bf16 = float_kernels().bf16.gemm != nullptr && m.hparams().head_dim % 32 == 0;
  return bf16 ? std::max(fp32_tolerance, 4.0 / 256) : fp32_tolerance;
}

}  // namespace peak::test
