#include "reference_encoder.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "reference_forward.h"

namespace peak::test {

using kernels::GgmlType;

namespace {

using Vector = std::vector<double>;

class Weights {
 public:
  explicit Weights(const gguf::GgufFile& file) : file_(file) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

  // An F32 tensor's values in file order.
  Vector values(const std::string& name) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (!t || t->type != GgmlType::F32) throw std::runtime_error("reference needs F32 tensor " + name);
    const auto* p = reinterpret_cast<const float*>(t->data);
    return Vector(p, p + t->n_elements());
  }

  // Row `row` of a matrix stored as ggml [n, rows].
  Vector row(const std::string& name, int64_t row) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    const Vector all = values(name);
    const auto n = static_cast<size_t>(t->ne[0]);
    return Vector(all.begin() + static_cast<long>(static_cast<size_t>(row) * n),
                  all.begin() + static_cast<long>(static_cast<size_t>(row + 1) * n));
  }

  // W · x for W stored as ggml [n_in, n_out] (row j holds output j's weights).
  Vector product(const std::string& name, const Vector& x) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    const Vector w = values(name);
    const auto n_in = static_cast<size_t>(t->ne[0]), n_out = static_cast<size_t>(t->ne[1]);
    Vector y(n_out, 0.0);
    for (size_t j = 0; j < n_out; ++j) {
      for (size_t i = 0; i < n_in; ++i) y[j] += w[j * n_in + i] * x[i];
    }
    return y;
  }

  // W · x + b, or W · x when the file has no bias.
  Vector linear(const std::string& prefix, const Vector& x) const {
    Vector y = product(prefix + ".weight", x);
    if (!has(prefix + ".bias")) return y;
    const Vector b = values(prefix + ".bias");
    for (size_t j = 0; j < y.size(); ++j) y[j] += b[j];
    return y;
  }

  // (x - mean) / sqrt(variance + eps) * weight + bias.
  Vector layer_norm(const std::string& prefix, const Vector& x, double eps) const {
    const Vector w = values(prefix + ".weight"), b = values(prefix + ".bias");
    double mean = 0.0;
    for (double v : x) mean += v;
    mean /= static_cast<double>(x.size());
    double variance = 0.0;
    for (double v : x) variance += (v - mean) * (v - mean);
    variance /= static_cast<double>(x.size());
    Vector y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(variance + eps) * w[i] + b[i];
    return y;
  }

 private:
  const gguf::GgufFile& file_;
};

// gelu with the tanh approximation, as ggml_gelu computes it.
double gelu_tanh(double x) {
  const double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Rotary embedding, NEOX's pairing, of each head of v (n_head heads of d):
// dimension i < n_rot / 2 pairs with i + n_rot / 2, both turned by the angle
// position * base^(-2i / n_rot); dimensions from n_rot on are left alone.
void rotate_neox(Vector& v, size_t d, size_t n_rot, double base, size_t position) {
  const size_t half = n_rot / 2;
  for (size_t head = 0; head < v.size() / d; ++head) {
    double* x = v.data() + head * d;
    for (size_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(position) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
      const double x0 = x[i], x1 = x[i + half];
      x[i] = x0 * std::cos(angle) - x1 * std::sin(angle);
      x[i + half] = x0 * std::sin(angle) + x1 * std::cos(angle);
    }
  }
}

Vector sum(const Vector& a, const Vector& b) {
  Vector y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

}  // namespace

std::vector<Vector> reference_encode(const gguf::GgufFile& file, const model::HParams& hp,
                                     const std::vector<int32_t>& tokens, size_t second_segment, bool rotate) {
  const Weights w(file);
  const size_t n = tokens.size(), d = static_cast<size_t>(hp.head_dim);
  const size_t n_head = static_cast<size_t>(hp.n_head), group = n_head / static_cast<size_t>(hp.n_head_kv);
  const size_t q_size = n_head * d, kv_size = static_cast<size_t>(hp.n_head_kv) * d;
  const double eps = hp.layer_norm_eps;
  const bool positions = w.has("position_embd.weight");  // else rope (nomic-bert)
  std::vector<Vector> x(n);
  for (size_t t = 0; t < n; ++t) {
    Vector e = w.row("token_embd.weight", tokens[t]);
    if (positions) e = sum(e, w.row("position_embd.weight", static_cast<int64_t>(t)));
    if (w.has("token_types.weight")) e = sum(e, w.row("token_types.weight", t < second_segment ? 0 : 1));
    x[t] = w.layer_norm("token_embd_norm", e, eps);
  }
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    std::vector<Vector> q(n), k(n), v(n);
    for (size_t t = 0; t < n; ++t) {
      if (w.has(p + "attn_qkv.weight")) {
        // One product, its rows Q's, then K's, then V's.
        const Vector qkv = w.product(p + "attn_qkv.weight", x[t]);
        q[t] = Vector(qkv.begin(), qkv.begin() + static_cast<long>(q_size));
        k[t] = Vector(qkv.begin() + static_cast<long>(q_size), qkv.begin() + static_cast<long>(q_size + kv_size));
        v[t] = Vector(qkv.begin() + static_cast<long>(q_size + kv_size), qkv.end());
      } else {
        q[t] = w.linear(p + "attn_q", x[t]);
        k[t] = w.linear(p + "attn_k", x[t]);
        v[t] = w.linear(p + "attn_v", x[t]);
      }
      if (!positions && rotate) {
        const auto n_rot = static_cast<size_t>(hp.rope.n_dims);
        rotate_neox(q[t], d, n_rot, hp.rope.freq_base, t);
        rotate_neox(k[t], d, n_rot, hp.rope.freq_base, t);
      }
    }
    for (size_t t = 0; t < n; ++t) {
      // Query t against every key of the sequence (causal: those up to t).
      const size_t seen = hp.causal_attention ? t + 1 : n;
      Vector attended(n_head * d, 0.0);
      for (size_t h = 0; h < n_head; ++h) {
        const size_t kv_head = h / group;
        Vector scores(seen);
        for (size_t u = 0; u < seen; ++u) {
          double s = 0.0;
          for (size_t i = 0; i < d; ++i) s += q[t][h * d + i] * k[u][kv_head * d + i];
          scores[u] = s / std::sqrt(static_cast<double>(d));
        }
        const double max = *std::max_element(scores.begin(), scores.end());
        double total = 0.0;
        for (double& s : scores) total += (s = std::exp(s - max));
        for (size_t u = 0; u < seen; ++u) {
          for (size_t i = 0; i < d; ++i) attended[h * d + i] += scores[u] / total * v[u][kv_head * d + i];
        }
      }
      q[t] = w.linear(p + "attn_output", attended);  // reuses q[t]: query t is done
    }
    for (size_t t = 0; t < n; ++t) {
      const Vector h = w.layer_norm(p + "attn_output_norm", sum(x[t], q[t]), eps);
      Vector up = w.linear(p + "ffn_up", h);
      if (w.has(p + "ffn_gate.weight")) {
        const Vector gate = w.product(p + "ffn_gate.weight", h);
        for (size_t i = 0; i < up.size(); ++i) up[i] *= silu(gate[i]);  // SwiGLU
      } else {
        for (double& u : up) u = gelu_tanh(u);
      }
      x[t] = w.layer_norm(p + "layer_output_norm", sum(h, w.linear(p + "ffn_down", up)), eps);
    }
  }
  return x;
}

Vector reference_classify(const gguf::GgufFile& file, const std::vector<Vector>& hidden) {
  const Weights w(file);
  Vector pooled = w.linear("cls", hidden.front());
  for (double& p : pooled) p = std::tanh(p);
  return w.linear("cls.output", pooled);
}

Vector reference_embed_decoder(const gguf::GgufFile& file, const model::HParams& hp, const std::vector<int32_t>& tokens,
                               model::Pooling pooling, bool normalize) {
  ReferenceForward forward(file, hp, hp.n_ctx_train);
  std::vector<Vector> hidden = forward.hidden_states(tokens, !hp.causal_attention);
  const Weights w(file);
  if (w.has("dense_2.weight")) {
    for (Vector& h : hidden) h = w.product("dense_3.weight", w.product("dense_2.weight", h));
  }
  return reference_pool(hidden, pooling, normalize);
}

double reference_rerank_decoder(const gguf::GgufFile& file, const model::HParams& hp,
                                const std::vector<int32_t>& tokens, size_t answer) {
  ReferenceForward forward(file, hp, hp.n_ctx_train);
  const std::vector<Vector> hidden = forward.hidden_states(tokens);
  const Vector logits = Weights(file).product("cls.output.weight", hidden.back());
  double sum = 0.0;
  for (const double l : logits) sum += std::exp(l);
  return std::exp(logits.at(answer)) / sum;
}

Vector reference_pool(const std::vector<Vector>& hidden, model::Pooling pooling, bool normalize) {
  std::vector<Vector> vectors;
  switch (pooling) {
    case model::Pooling::None: vectors = hidden; break;
    case model::Pooling::Cls:
    case model::Pooling::Rank: vectors = {hidden.front()}; break;  // rank: the state reference_classify reads
    case model::Pooling::Last: vectors = {hidden.back()}; break;
    case model::Pooling::Mean: {
      Vector mean(hidden.front().size(), 0.0);
      for (const Vector& h : hidden) {
        for (size_t i = 0; i < mean.size(); ++i) mean[i] += h[i] / static_cast<double>(hidden.size());
      }
      vectors = {mean};
      break;
    }
  }
  Vector out;
  for (Vector& v : vectors) {
    if (normalize) {
      double length = 0.0;
      for (double e : v) length += e * e;
      length = std::sqrt(length);
      for (double& e : v) e /= length;
    }
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace peak::test
