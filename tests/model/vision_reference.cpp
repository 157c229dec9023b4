// A naive double-precision reference of Gemma 3's image encoder; see vision_reference.h.
//
// Hugging Face's forward pass, step by step:
//   SiglipVisionEmbeddings: conv2d(3 -> n_embd, kernel p, stride p) + bias, flattened
//     row-major over the (S/p) x (S/p) grid, plus position_embedding(arange(n_patches)).
//   SiglipEncoderLayer (pre-norm): x += out_proj(MHA(layer_norm1(x))), bidirectional
//     softmax attention with scale head_dim^-0.5 and biases on q, k, v, out;
//     x += fc2(gelu_pytorch_tanh(fc1(layer_norm2(x)))).
//   post_layernorm.
//   Gemma3MultiModalProjector: (n_patches, n_embd) -> (n_embd, side, side),
//     AvgPool2d(kernel = stride = k), flatten(2).transpose -> tokens row-major over
//     the pooled grid; Gemma3RMSNorm (x * rsqrt(mean(x^2) + eps) * (1 + w), the
//     vision config's layer_norm_eps); matmul with mm_input_projection_weight
//     (vision_hidden, text_hidden).
#include "vision_reference.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "kernels/float16.h"
#include "kernels/ggml_type.h"

namespace peak::test {

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("gemma3 vision reference: " + what); }

int64_t get_count(const gguf::GgufFile& file, const char* key) {
  const uint64_t v = file.get(key).as_uint();
  if (v == 0 || v > (uint64_t{1} << 30)) fail(std::string(key) + " out of range: " + std::to_string(v));
  return static_cast<int64_t>(v);
}

// A tensor as doubles, its shape checked against `shape` (ne[0] first; missing
// trailing dimensions must be 1).
std::vector<double> load(const gguf::GgufFile& file, const std::string& name, std::initializer_list<int64_t> shape) {
  const gguf::TensorInfo* t = file.find_tensor(name);
  if (t == nullptr) fail("missing tensor " + name);
  size_t d = 0;
  std::string want;
  for (int64_t n : shape) want += (want.empty() ? "" : ", ") + std::to_string(n);
  bool ok = true;
  for (int64_t n : shape) ok = ok && t->ne[d++] == n;
  for (; d < gguf::kMaxTensorDims; ++d) ok = ok && t->ne[d] == 1;
  if (!ok) {
    fail(name + " has shape [" + std::to_string(t->ne[0]) + ", " + std::to_string(t->ne[1]) + ", " +
         std::to_string(t->ne[2]) + ", " + std::to_string(t->ne[3]) + "], expected [" + want + "]");
  }
  const size_t n = static_cast<size_t>(t->n_elements());
  std::vector<double> out(n);
  if (t->type == kernels::GgmlType::F32) {
    if (t->n_bytes != n * 4) fail(name + ": wrong byte count");
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, t->data + 4 * i, 4);
      out[i] = static_cast<double>(f);
    }
  } else if (t->type == kernels::GgmlType::F16) {
    if (t->n_bytes != n * 2) fail(name + ": wrong byte count");
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, t->data + 2 * i, 2);
      out[i] = static_cast<double>(kernels::fp16_to_fp32(h));
    }
  } else {
    fail(name + " has type " + kernels::ggml_type_name(static_cast<uint32_t>(t->type)) +
         "; only F32 and F16 are supported");
  }
  return out;
}

std::vector<double> load_f32_triple(const gguf::GgufFile& file, const char* key) {
  const gguf::ArrayView a = file.get(key).array();
  if (a.size() != 3) fail(std::string(key) + " must hold 3 values");
  std::vector<double> out(3);
  for (uint64_t i = 0; i < 3; ++i) {
    if (a.elem_type() == gguf::ValueType::Float32) {
      out[i] = static_cast<double>(a.at<float>(i));
    } else if (a.elem_type() == gguf::ValueType::Float64) {
      out[i] = a.at<double>(i);
    } else {
      fail(std::string(key) + " must be an array of floats");
    }
  }
  return out;
}

// y[j] = b[j] + sum_i W[i + n_in * j] * x[i]: ggml_mul_mat with W of ne [n_in, n_out]
// (torch's nn.Linear weight (n_out, n_in), row j contiguous).
void linear(const std::vector<double>& w, const std::vector<double>& b, const double* x, int64_t n_in, int64_t n_out,
            double* y) {
  for (int64_t j = 0; j < n_out; ++j) {
    const double* row = w.data() + n_in * j;
    double sum = 0.0;
    for (int64_t i = 0; i < n_in; ++i) sum += row[i] * x[i];
    y[j] = sum + b[static_cast<size_t>(j)];
  }
}

// torch.nn.LayerNorm: biased variance, eps inside the square root.
void layer_norm(const double* x, const std::vector<double>& w, const std::vector<double>& b, int64_t n, double eps,
                double* y) {
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);
  double var = 0.0;
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = (x[i] - mean) * inv * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
  }
}

// gelu_pytorch_tanh (SigLIP's hidden_act).
double gelu_tanh(double x) {
  const double kSqrt2OverPi = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// A vision block's tensors (v.blk.N.*) as the file stores them: the norms'
// biases with `layer_norm` (SigLIP; RMS norms have none), the gate with `gated`.
struct BlockTensors {
  std::vector<double> ln1_w, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo, ln2_w, ln2_b, w_gate, b_gate, w_up, b_up, w_down,
      b_down;
};

BlockTensors load_block(const gguf::GgufFile& file, int64_t il, int64_t E, int64_t F, bool layer_norm, bool gated) {
  const std::string pre = "v.blk." + std::to_string(il) + ".";
  BlockTensors t;
  t.ln1_w = load(file, pre + "ln1.weight", {E});
  t.wq = load(file, pre + "attn_q.weight", {E, E});
  t.bq = load(file, pre + "attn_q.bias", {E});
  t.wk = load(file, pre + "attn_k.weight", {E, E});
  t.bk = load(file, pre + "attn_k.bias", {E});
  t.wv = load(file, pre + "attn_v.weight", {E, E});
  t.bv = load(file, pre + "attn_v.bias", {E});
  t.wo = load(file, pre + "attn_out.weight", {E, E});
  t.bo = load(file, pre + "attn_out.bias", {E});
  t.ln2_w = load(file, pre + "ln2.weight", {E});
  if (layer_norm) {
    t.ln1_b = load(file, pre + "ln1.bias", {E});
    t.ln2_b = load(file, pre + "ln2.bias", {E});
  }
  if (gated) {
    t.w_gate = load(file, pre + "ffn_gate.weight", {E, F});
    t.b_gate = load(file, pre + "ffn_gate.bias", {F});
  }
  t.w_up = load(file, pre + "ffn_up.weight", {E, F});
  t.b_up = load(file, pre + "ffn_up.bias", {F});
  t.w_down = load(file, pre + "ffn_down.weight", {F, E});
  t.b_down = load(file, pre + "ffn_down.bias", {E});
  return t;
}

// Multi-head attention over n rows of [n][E] (heads of hd): row i's softmax
// of q_i . k_j / sqrt(hd) over the rows j with attends(i, j), times v, into attn.
template <typename Attends>
void attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v, int64_t n,
               int64_t E, int64_t n_head, Attends attends, std::vector<double>& attn) {
  const int64_t hd = E / n_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  std::vector<double> scores(static_cast<size_t>(n));
  for (int64_t head = 0; head < n_head; ++head) {
    const size_t off = static_cast<size_t>(head * hd);
    for (int64_t i = 0; i < n; ++i) {
      double max_score = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        double& s = scores[static_cast<size_t>(j)];
        s = -INFINITY;
        if (!attends(i, j)) continue;
        double dot = 0.0;
        for (int64_t d = 0; d < hd; ++d)
          dot += q[static_cast<size_t>(i * E + d) + off] * k[static_cast<size_t>(j * E + d) + off];
        s = dot * scale;
        max_score = std::max(max_score, s);
      }
      double denom = 0.0;
      for (double& s : scores) {
        s = std::isinf(s) ? 0.0 : std::exp(s - max_score);
        denom += s;
      }
      for (int64_t d = 0; d < hd; ++d) {
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) sum += scores[static_cast<size_t>(j)] * v[static_cast<size_t>(j * E + d) + off];
        attn[static_cast<size_t>(i * E + d) + off] = sum / denom;
      }
    }
  }
}

struct Hparams {
  int64_t image_size = 0;
  int64_t patch_size = 0;
  int64_t n_embd = 0;
  int64_t n_ff = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_embd_text = 0;
  bool idefics3 = false;  // the pixel shuffle and fc (SmolVLM), else Gemma 3's pooling, norm and projection
  int64_t kernel = 4;     // the projector's pooling kernel and stride, or the shuffle's factor
  double eps = 0.0;
};

Hparams read_hparams(const gguf::GgufFile& file) {
  const std::string_view arch = file.get("general.architecture").str();
  if (arch != "clip") fail("general.architecture is \"" + std::string(arch) + "\", expected \"clip\"");
  const std::string_view proj = file.get("clip.projector_type").str();
  if (proj != "gemma3" && proj != "idefics3") {
    fail("clip.projector_type is \"" + std::string(proj) + "\", expected \"gemma3\" or \"idefics3\"");
  }
  if (const auto v = file.find("clip.has_vision_encoder"); v && !v->boolean()) fail("the file has no vision encoder");
  Hparams h;
  h.idefics3 = proj == "idefics3";
  if (h.idefics3) h.kernel = 2;  // the converter's default scale_factor
  h.image_size = get_count(file, "clip.vision.image_size");
  h.patch_size = get_count(file, "clip.vision.patch_size");
  h.n_embd = get_count(file, "clip.vision.embedding_length");
  h.n_ff = get_count(file, "clip.vision.feed_forward_length");
  h.n_layer = get_count(file, "clip.vision.block_count");
  h.n_head = get_count(file, "clip.vision.attention.head_count");
  h.n_embd_text = get_count(file, "clip.vision.projection_dim");
  if (file.find("clip.vision.projector.scale_factor")) h.kernel = get_count(file, "clip.vision.projector.scale_factor");
  h.eps = file.get("clip.vision.attention.layer_norm_epsilon").as_float();
  if (!(h.eps >= 0.0)) fail("negative or NaN layer_norm_epsilon");
  if (h.image_size % h.patch_size != 0) fail("image_size is not a multiple of patch_size");
  if ((h.image_size / h.patch_size) % h.kernel != 0) fail("the patch grid is not a multiple of scale_factor");
  if (h.n_embd % h.n_head != 0) fail("embedding_length is not a multiple of head_count");
  return h;
}

}  // namespace

std::vector<double> image_embeddings_reference(const gguf::GgufFile& file, const std::vector<double>& pixels,
                                               int64_t* n_tokens_out, int64_t* n_embd_text_out) {
  const Hparams h = read_hparams(file);
  const int64_t S = h.image_size;
  const int64_t p = h.patch_size;
  const int64_t n_side = S / p;
  const int64_t n_patches = n_side * n_side;
  const int64_t E = h.n_embd;
  const int64_t F = h.n_ff;
  const int64_t n_head = h.n_head;
  const int64_t T = h.n_embd_text;
  if (static_cast<int64_t>(pixels.size()) != 3 * S * S) {
    fail("expected 3 x " + std::to_string(S) + " x " + std::to_string(S) + " pixel values, got " +
         std::to_string(pixels.size()));
  }
  const auto at = [](std::vector<double>& v, int64_t i) -> double& { return v[static_cast<size_t>(i)]; };

  // Patch embedding (a conv2d whose stride is its kernel: one dot product per
  // patch and output channel) and position embedding.
  const std::vector<double> conv_w = load(file, "v.patch_embd.weight", {p, p, 3, E});
  const std::vector<double> conv_b = load(file, "v.patch_embd.bias", {E});
  const std::vector<double> pos = load(file, "v.position_embd.weight", {E, n_patches});
  std::vector<double> x(static_cast<size_t>(n_patches * E));
  for (int64_t py = 0; py < n_side; ++py) {
    for (int64_t px = 0; px < n_side; ++px) {
      const int64_t patch = py * n_side + px;
      for (int64_t o = 0; o < E; ++o) {
        double sum = conv_b[static_cast<size_t>(o)];
        for (int64_t c = 0; c < 3; ++c) {
          for (int64_t ky = 0; ky < p; ++ky) {
            for (int64_t kx = 0; kx < p; ++kx) {
              const double w = conv_w[static_cast<size_t>(kx + p * (ky + p * (c + 3 * o)))];
              const double v = pixels[static_cast<size_t>(c * S * S + (py * p + ky) * S + (px * p + kx))];
              sum += w * v;
            }
          }
        }
        at(x, patch * E + o) = sum + pos[static_cast<size_t>(o + E * patch)];
      }
    }
  }

  // Encoder layers.
  std::vector<double> cur(static_cast<size_t>(n_patches * E));
  std::vector<double> q(cur.size()), k(cur.size()), v(cur.size()), attn(cur.size());
  std::vector<double> up(static_cast<size_t>(F)), down(static_cast<size_t>(E));
  for (int64_t il = 0; il < h.n_layer; ++il) {
    const BlockTensors t = load_block(file, il, E, F, /*layer_norm=*/true, /*gated=*/false);

    // Self-attention over every patch (no mask).
    for (int64_t i = 0; i < n_patches; ++i) {
      layer_norm(&at(x, i * E), t.ln1_w, t.ln1_b, E, h.eps, &at(cur, i * E));
      linear(t.wq, t.bq, &at(cur, i * E), E, E, &at(q, i * E));
      linear(t.wk, t.bk, &at(cur, i * E), E, E, &at(k, i * E));
      linear(t.wv, t.bv, &at(cur, i * E), E, E, &at(v, i * E));
    }
    attention(
        q, k, v, n_patches, E, n_head, [](int64_t, int64_t) { return true; }, attn);
    for (int64_t i = 0; i < n_patches; ++i) {
      linear(t.wo, t.bo, &at(attn, i * E), E, E, down.data());
      for (int64_t e = 0; e < E; ++e) at(x, i * E + e) += at(down, e);
    }

    // Feed-forward.
    for (int64_t i = 0; i < n_patches; ++i) {
      layer_norm(&at(x, i * E), t.ln2_w, t.ln2_b, E, h.eps, &at(cur, i * E));
      linear(t.w_up, t.b_up, &at(cur, i * E), E, F, up.data());
      for (double& u : up) u = gelu_tanh(u);
      linear(t.w_down, t.b_down, up.data(), F, E, down.data());
      for (int64_t e = 0; e < E; ++e) at(x, i * E + e) += at(down, e);
    }
  }

  // Post LayerNorm.
  const auto post_w = load(file, "v.post_ln.weight", {E});
  const auto post_b = load(file, "v.post_ln.bias", {E});
  for (int64_t i = 0; i < n_patches; ++i) layer_norm(&at(x, i * E), post_w, post_b, E, h.eps, &at(cur, i * E));

  const int64_t kk = h.kernel;
  const int64_t t_side = n_side / kk;
  const int64_t n_tokens = t_side * t_side;
  if (h.idefics3) {
    // Idefics3Connector.pixel_shuffle, its views and permutes followed
    // element by element on x [H][W][E] (H = W = n_side, s = kk):
    //   view [H][W/s][E s]:          a[r][cb][ci E + e]        = x[r][cb s + ci][e]
    //   permute -> [W/s][H][E s]:    b[cb][r][ci E + e]        = a[r][cb][ci E + e]
    //   reshape -> [W/s][H/s][E s s]: c[cb][rb][ri E s + ci E + e] = b[cb][rb s + ri][ci E + e]
    //   permute -> [H/s][W/s][E s s], reshape -> [H/s W/s][E s s]: token rb W/s + cb.
    // Then modality_projection: mm.model.fc [E s s, T], no bias.
    const int64_t in = E * kk * kk;
    std::vector<double> shuffled(static_cast<size_t>(n_tokens * in));
    for (int64_t rb = 0; rb < t_side; ++rb) {
      for (int64_t cb = 0; cb < t_side; ++cb) {
        for (int64_t ri = 0; ri < kk; ++ri) {
          for (int64_t ci = 0; ci < kk; ++ci) {
            const int64_t patch = (rb * kk + ri) * n_side + (cb * kk + ci);
            for (int64_t e = 0; e < E; ++e) {
              at(shuffled, (rb * t_side + cb) * in + ri * E * kk + ci * E + e) = at(cur, patch * E + e);
            }
          }
        }
      }
    }
    const auto fc = load(file, "mm.model.fc.weight", {in, T});
    std::vector<double> out(static_cast<size_t>(n_tokens * T), 0.0);
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t j = 0; j < T; ++j) {
        double sum = 0.0;
        for (int64_t i = 0; i < in; ++i) sum += fc[static_cast<size_t>(i + in * j)] * at(shuffled, t * in + i);
        at(out, t * T + j) = sum;
      }
    }
    if (n_tokens_out != nullptr) *n_tokens_out = n_tokens;
    if (n_embd_text_out != nullptr) *n_embd_text_out = T;
    return out;
  }

  // Gemma 3's projector: average pooling over k x k blocks of the patch grid,
  // tokens row-major over the pooled grid.
  std::vector<double> pooled(static_cast<size_t>(n_tokens * E), 0.0);
  for (int64_t ty = 0; ty < t_side; ++ty) {
    for (int64_t tx = 0; tx < t_side; ++tx) {
      const int64_t token = ty * t_side + tx;
      for (int64_t dy = 0; dy < kk; ++dy) {
        for (int64_t dx = 0; dx < kk; ++dx) {
          const int64_t patch = (ty * kk + dy) * n_side + (tx * kk + dx);
          for (int64_t e = 0; e < E; ++e) at(pooled, token * E + e) += at(cur, patch * E + e);
        }
      }
      for (int64_t e = 0; e < E; ++e) at(pooled, token * E + e) /= static_cast<double>(kk * kk);
    }
  }

  // RMS norm times the stored (1 + w), then the projection.
  const auto norm_w = load(file, "mm.soft_emb_norm.weight", {E});
  const auto proj = load(file, "mm.input_projection.weight", {T, E});
  std::vector<double> out(static_cast<size_t>(n_tokens * T), 0.0);
  std::vector<double> normed(static_cast<size_t>(E));
  for (int64_t t = 0; t < n_tokens; ++t) {
    double ms = 0.0;
    for (int64_t e = 0; e < E; ++e) ms += at(pooled, t * E + e) * at(pooled, t * E + e);
    ms /= static_cast<double>(E);
    const double inv = 1.0 / std::sqrt(ms + h.eps);
    for (int64_t e = 0; e < E; ++e) at(normed, e) = at(pooled, t * E + e) * inv * norm_w[static_cast<size_t>(e)];
    for (int64_t c = 0; c < E; ++c) {
      const double xc = at(normed, c);
      for (int64_t j = 0; j < T; ++j) at(out, t * T + j) += xc * proj[static_cast<size_t>(j + T * c)];
    }
  }
  if (n_tokens_out != nullptr) *n_tokens_out = n_tokens;
  if (n_embd_text_out != nullptr) *n_embd_text_out = T;
  return out;
}

std::vector<double> normalise_reference(const gguf::GgufFile& file, const uint8_t* rgb, int64_t width, int64_t height) {
  if (width <= 0 || height <= 0 || rgb == nullptr) fail("no pixels");
  const std::vector<double> mean = load_f32_triple(file, "clip.vision.image_mean");
  const std::vector<double> stdev = load_f32_triple(file, "clip.vision.image_std");
  const int64_t n = width * height;
  std::vector<double> out(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < 3; ++c) {
      const double v = static_cast<double>(rgb[3 * i + c]) / 255.0;
      out[static_cast<size_t>(c * n + i)] = (v - mean[static_cast<size_t>(c)]) / stdev[static_cast<size_t>(c)];
    }
  }
  return out;
}

namespace {

// Qwen2RMSNorm: x * rsqrt(mean(x^2) + eps) * w.
void rms_norm(const double* x, const std::vector<double>& w, int64_t n, double eps, double* y) {
  double ms = 0.0;
  for (int64_t i = 0; i < n; ++i) ms += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ms / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv * w[static_cast<size_t>(i)];
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

}  // namespace

std::vector<double> qwen25vl_embeddings_reference(const gguf::GgufFile& file, const std::vector<double>& pixels,
                                                  int64_t width, int64_t height, int64_t* n_tokens_out,
                                                  int64_t* n_embd_text_out) {
  if (file.get("general.architecture").str() != "clip") fail("not a clip file");
  if (file.get("clip.projector_type").str() != "qwen2.5vl_merger") fail("clip.projector_type is not qwen2.5vl_merger");
  const int64_t p = get_count(file, "clip.vision.patch_size");
  const int64_t E = get_count(file, "clip.vision.embedding_length");
  const int64_t F = get_count(file, "clip.vision.feed_forward_length");
  const int64_t n_layer = get_count(file, "clip.vision.block_count");
  const int64_t n_head = get_count(file, "clip.vision.attention.head_count");
  const int64_t T = get_count(file, "clip.vision.projection_dim");
  const int64_t pattern = get_count(file, "clip.vision.n_wa_pattern");
  const int64_t m = file.find("clip.vision.spatial_merge_size") ? get_count(file, "clip.vision.spatial_merge_size") : 2;
  const int64_t window_px = file.find("clip.vision.window_size") ? get_count(file, "clip.vision.window_size") : 112;
  const double eps = file.get("clip.vision.attention.layer_norm_epsilon").as_float();
  if (m != 2) fail("the reference merges 2 x 2 only");
  if (width % (p * m) != 0 || height % (p * m) != 0) fail("the picture's sides must be multiples of 2 p");
  if (window_px % (p * m) != 0) fail("window_size must be a multiple of 2 p");
  if (static_cast<int64_t>(pixels.size()) != 3 * width * height) fail("wrong pixel count");
  const int64_t window = window_px / (p * m);  // tokens a side
  const int64_t nx = width / p, ny = height / p, n = nx * ny;
  const int64_t hd = E / n_head;
  if (hd % 4 != 0) fail("head size must be a multiple of 4");
  const auto at = [](std::vector<double>& v, int64_t i) -> double& { return v[static_cast<size_t>(i)]; };

  // Conv3D over the picture taken twice in time: both frames' kernels over the same pixels.
  const std::vector<double> w0 = load(file, "v.patch_embd.weight", {p, p, 3, E});
  const std::vector<double> w1 = load(file, "v.patch_embd.weight.1", {p, p, 3, E});
  if (file.find_tensor("v.patch_embd.bias") != nullptr) fail("Qwen2.5-VL's patch embedding has no bias");
  std::vector<double> x(static_cast<size_t>(n * E));
  for (int64_t py = 0; py < ny; ++py) {
    for (int64_t px = 0; px < nx; ++px) {
      for (int64_t o = 0; o < E; ++o) {
        double sum = 0.0;
        for (int64_t c = 0; c < 3; ++c) {
          for (int64_t ky = 0; ky < p; ++ky) {
            for (int64_t kx = 0; kx < p; ++kx) {
              const size_t wi = static_cast<size_t>(kx + p * (ky + p * (c + 3 * o)));
              const double v = pixels[static_cast<size_t>(c * width * height + (py * p + ky) * width + px * p + kx)];
              sum += w0[wi] * v + w1[wi] * v;
            }
          }
        }
        at(x, (py * nx + px) * E + o) = sum;
      }
    }
  }

  // Window membership of patches a and b: their tokens in the same window.
  const auto same_window = [&](int64_t a, int64_t b) {
    const int64_t ay = a / nx / m / window, ax = a % nx / m / window;
    const int64_t by = b / nx / m / window, bx = b % nx / m / window;
    return ay == by && ax == bx;
  };
  // HF's rotary: inv_freq[k] = 10000^(-2k / (hd/2)), k < hd/4; the angle of
  // pair i (dims i and i + hd/2) is row * inv_freq[i] for i < hd/4, col * inv_freq[i - hd/4] after.
  const auto rotate = [&](double* v, int64_t patch) {
    const int64_t half = hd / 2, quarter = hd / 4;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t k = i < quarter ? i : i - quarter;
      const double pos = static_cast<double>(i < quarter ? patch / nx : patch % nx);
      const double angle = pos * std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(half));
      const double a = v[i], b = v[i + half];
      v[i] = a * std::cos(angle) - b * std::sin(angle);
      v[i + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  };

  std::vector<double> cur(x.size()), q(x.size()), k(x.size()), v(x.size()), attn(x.size());
  std::vector<double> gate(static_cast<size_t>(F)), up(static_cast<size_t>(F)), down(static_cast<size_t>(E));
  for (int64_t il = 0; il < n_layer; ++il) {
    const bool full = (il + 1) % pattern == 0;
    const BlockTensors t = load_block(file, il, E, F, /*layer_norm=*/false, /*gated=*/true);

    for (int64_t i = 0; i < n; ++i) {
      rms_norm(&at(x, i * E), t.ln1_w, E, eps, &at(cur, i * E));
      linear(t.wq, t.bq, &at(cur, i * E), E, E, &at(q, i * E));
      linear(t.wk, t.bk, &at(cur, i * E), E, E, &at(k, i * E));
      linear(t.wv, t.bv, &at(cur, i * E), E, E, &at(v, i * E));
      for (int64_t head = 0; head < n_head; ++head) {
        rotate(&at(q, i * E + head * hd), i);
        rotate(&at(k, i * E + head * hd), i);
      }
    }
    attention(
        q, k, v, n, E, n_head, [&](int64_t i, int64_t j) { return full || same_window(i, j); }, attn);
    for (int64_t i = 0; i < n; ++i) {
      linear(t.wo, t.bo, &at(attn, i * E), E, E, down.data());
      for (int64_t e = 0; e < E; ++e) at(x, i * E + e) += at(down, e);
    }
    for (int64_t i = 0; i < n; ++i) {
      rms_norm(&at(x, i * E), t.ln2_w, E, eps, &at(cur, i * E));
      linear(t.w_gate, t.b_gate, &at(cur, i * E), E, F, gate.data());
      linear(t.w_up, t.b_up, &at(cur, i * E), E, F, up.data());
      for (int64_t f = 0; f < F; ++f) at(up, f) *= silu(at(gate, f));
      linear(t.w_down, t.b_down, up.data(), F, E, down.data());
      for (int64_t e = 0; e < E; ++e) at(x, i * E + e) += at(down, e);
    }
  }

  // The merger: ln_q per patch, each token's 2 x 2 patches side by side in
  // (0,0), (0,1), (1,0), (1,1) order, mlp.0, GELU, mlp.2.
  const auto post = load(file, "v.post_ln.weight", {E});
  for (int64_t i = 0; i < n; ++i) rms_norm(&at(x, i * E), post, E, eps, &at(cur, i * E));
  const int64_t wide = m * m * E, cols = nx / m, rows = ny / m, n_tokens = cols * rows;
  const auto mm0 = load(file, "mm.0.weight", {wide, wide});
  const auto mm0_b = load(file, "mm.0.bias", {wide});
  const auto mm2 = load(file, "mm.2.weight", {wide, T});
  const auto mm2_b = load(file, "mm.2.bias", {T});
  std::vector<double> grouped(static_cast<size_t>(wide)), hidden(static_cast<size_t>(wide));
  std::vector<double> out(static_cast<size_t>(n_tokens * T));
  for (int64_t ty = 0; ty < rows; ++ty) {
    for (int64_t tx = 0; tx < cols; ++tx) {
      for (int64_t dy = 0; dy < m; ++dy) {
        for (int64_t dx = 0; dx < m; ++dx) {
          const int64_t patch = (ty * m + dy) * nx + tx * m + dx;
          for (int64_t e = 0; e < E; ++e) at(grouped, (dy * m + dx) * E + e) = at(cur, patch * E + e);
        }
      }
      linear(mm0, mm0_b, grouped.data(), wide, wide, hidden.data());
      for (double& h : hidden) h = gelu_erf(h);
      linear(mm2, mm2_b, hidden.data(), wide, T, &at(out, (ty * cols + tx) * T));
    }
  }
  if (n_tokens_out != nullptr) *n_tokens_out = n_tokens;
  if (n_embd_text_out != nullptr) *n_embd_text_out = T;
  return out;
}

}  // namespace peak::test
