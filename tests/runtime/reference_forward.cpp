#include "reference_forward.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace peak::test {
namespace {

void rms_norm(std::vector<double>& x, size_t begin, size_t n, const std::vector<double>& w, double eps) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[begin + i] * x[begin + i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (size_t i = 0; i < n; ++i) x[begin + i] = x[begin + i] * inv * w[i];
}

}  // namespace

ReferenceForward::ReferenceForward(const gguf::GgufFile& file, const model::HParams& hp)
    : file_(file), hp_(hp), k_cache_(static_cast<size_t>(hp.n_layer)), v_cache_(static_cast<size_t>(hp.n_layer)) {}

bool ReferenceForward::has(const char* name) const { return file_.find_tensor(name) != nullptr; }

std::vector<double> ReferenceForward::vec(const char* name) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t || t->type != GgmlType::F32) throw std::runtime_error(std::string("reference needs F32 tensor ") + name);
  const auto* p = reinterpret_cast<const float*>(t->data);
  return std::vector<double>(p, p + t->n_elements());
}

// W stored as ggml [n_in, n_out]: output j is row j · x.
std::vector<double> ReferenceForward::matvec(const char* name, const std::vector<double>& x) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t || t->type != GgmlType::F32) throw std::runtime_error(std::string("reference needs F32 tensor ") + name);
  const auto* w = reinterpret_cast<const float*>(t->data);
  const size_t n_in = static_cast<size_t>(t->ne[0]), n_out = static_cast<size_t>(t->ne[1]);
  std::vector<double> y(n_out);
  for (size_t j = 0; j < n_out; ++j) {
    double s = 0;
    for (size_t i = 0; i < n_in; ++i) s += static_cast<double>(w[j * n_in + i]) * x[i];
    y[j] = s;
  }
  return y;
}

std::vector<double> ReferenceForward::step(int32_t token) {
  const size_t e = static_cast<size_t>(hp_.n_embd), d = static_cast<size_t>(hp_.head_dim);
  const size_t n_head = static_cast<size_t>(hp_.n_head), n_kv_head = static_cast<size_t>(hp_.n_head_kv);
  const std::vector<double> embd = vec("token_embd.weight");
  std::vector<double> x(embd.begin() + static_cast<long>(static_cast<size_t>(token) * e),
                        embd.begin() + static_cast<long>(static_cast<size_t>(token + 1) * e));
  const double eps = hp_.rms_eps;
  const size_t rope_dims = static_cast<size_t>(hp_.rope.n_dims);
  const bool neox = hp_.rope.mode == core::RopeMode::Neox;
  const std::vector<double> factors = has("rope_freqs.weight") ? vec("rope_freqs.weight") : std::vector<double>();

  auto rope = [&](std::vector<double>& v, size_t n_heads) {
    for (size_t h = 0; h < n_heads; ++h) {
      for (size_t i = 0; i < rope_dims / 2; ++i) {
        double theta = pos_ * std::pow(static_cast<double>(hp_.rope.freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims)) * hp_.rope.freq_scale;
        if (!factors.empty()) theta /= factors[i];
        const size_t a = h * d + (neox ? i : 2 * i), b = h * d + (neox ? i + rope_dims / 2 : 2 * i + 1);
        const double x0 = v[a], x1 = v[b];
        v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  };

  for (int64_t il = 0; il < hp_.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    auto name = [&](const char* suffix) { return p + suffix; };
    std::vector<double> h = x;
    rms_norm(h, 0, e, vec(name("attn_norm.weight").c_str()), eps);
    std::vector<double> q = matvec(name("attn_q.weight").c_str(), h);
    std::vector<double> k = matvec(name("attn_k.weight").c_str(), h);
    std::vector<double> v = matvec(name("attn_v.weight").c_str(), h);
    if (has(name("attn_q.bias").c_str())) {
      const auto bq = vec(name("attn_q.bias").c_str()), bk = vec(name("attn_k.bias").c_str()), bv = vec(name("attn_v.bias").c_str());
      for (size_t i = 0; i < q.size(); ++i) q[i] += bq[i];
      for (size_t i = 0; i < k.size(); ++i) k[i] += bk[i], v[i] += bv[i];
    }
    if (has(name("attn_q_norm.weight").c_str())) {
      const auto qn = vec(name("attn_q_norm.weight").c_str()), kn = vec(name("attn_k_norm.weight").c_str());
      for (size_t hh = 0; hh < n_head; ++hh) rms_norm(q, hh * d, d, qn, eps);
      for (size_t hh = 0; hh < n_kv_head; ++hh) rms_norm(k, hh * d, d, kn, eps);
    }
    rope(q, n_head);
    rope(k, n_kv_head);
    auto& kc = k_cache_[static_cast<size_t>(il)];
    auto& vc = v_cache_[static_cast<size_t>(il)];
    kc.insert(kc.end(), k.begin(), k.end());
    vc.insert(vc.end(), v.begin(), v.end());
    const size_t n_pos = kc.size() / (n_kv_head * d);

    std::vector<double> attn(n_head * d, 0.0);
    for (size_t hh = 0; hh < n_head; ++hh) {
      const size_t kvh = hh / (n_head / n_kv_head);
      std::vector<double> scores(n_pos);
      double max_score = -1e300;
      for (size_t t = 0; t < n_pos; ++t) {
        double s = 0;
        for (size_t i = 0; i < d; ++i) s += q[hh * d + i] * kc[(t * n_kv_head + kvh) * d + i];
        scores[t] = s / std::sqrt(static_cast<double>(d));
        max_score = std::max(max_score, scores[t]);
      }
      double sum = 0;
      for (double& s : scores) sum += (s = std::exp(s - max_score));
      for (size_t t = 0; t < n_pos; ++t) {
        for (size_t i = 0; i < d; ++i) attn[hh * d + i] += scores[t] / sum * vc[(t * n_kv_head + kvh) * d + i];
      }
    }
    const std::vector<double> o = matvec(name("attn_output.weight").c_str(), attn);
    for (size_t i = 0; i < e; ++i) x[i] += o[i];

    h = x;
    rms_norm(h, 0, e, vec(name("ffn_norm.weight").c_str()), eps);
    std::vector<double> gate = matvec(name("ffn_gate.weight").c_str(), h);
    const std::vector<double> up = matvec(name("ffn_up.weight").c_str(), h);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    const std::vector<double> down = matvec(name("ffn_down.weight").c_str(), gate);
    for (size_t i = 0; i < e; ++i) x[i] += down[i];
  }
  rms_norm(x, 0, e, vec("output_norm.weight"), eps);
  ++pos_;
  return matvec(has("output.weight") ? "output.weight" : "token_embd.weight", x);
}

}  // namespace peak::test
