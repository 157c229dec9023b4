// Sanity checks of the Gemma 3 image-encoder reference (vision_reference.h) on
// hand-written one-layer mmproj files whose answers are worked out by hand: the
// patch embedding's kernel order, the position rows, the residual adds, the
// attention (heads, scale, no mask, matrix orientation), the tanh GELU, the
// pooling blocks and their order, the RMS norm and the projection's orientation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "kernels/float16.h"
#include "kernels/ggml_type.h"
#include "vision_reference.h"

namespace peak::test {
namespace {

using kernels::GgmlType;

constexpr float kEpsF = 1e-6f;  // the file's layer_norm_epsilon
constexpr double kEps = static_cast<double>(kEpsF);

struct TensorSpec {
  std::string name;
  std::vector<int64_t> ne;
  std::vector<float> values;
  bool bf16 = false;  // stored as BF16, which the reference must refuse
};

// A one-layer mmproj file, every tensor zero except the norm weights (one).
struct VisionFile {
  int64_t S = 0, p = 0, E = 0, F = 0, n_head = 0, T = 0;
  int64_t k = 0;  // clip.vision.projector.scale_factor; 0: key absent
  std::string projector = "gemma3";
  std::vector<TensorSpec> tensors;
  float mean[3] = {0.5f, 0.5f, 0.5f};
  float stdev[3] = {0.5f, 0.5f, 0.5f};

  VisionFile(int64_t S_, int64_t p_, int64_t E_, int64_t F_, int64_t n_head_, int64_t T_, int64_t k_)
      : S(S_), p(p_), E(E_), F(F_), n_head(n_head_), T(T_), k(k_) {
    const int64_t n_patches = (S / p) * (S / p);
    add("v.patch_embd.weight", {p, p, 3, E});
    add("v.patch_embd.bias", {E});
    add("v.position_embd.weight", {E, n_patches});
    add("v.blk.0.ln1.weight", {E}, 1.0f);
    add("v.blk.0.ln1.bias", {E});
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      add(std::string("v.blk.0.") + m + ".weight", {E, E});
      add(std::string("v.blk.0.") + m + ".bias", {E});
    }
    add("v.blk.0.ln2.weight", {E}, 1.0f);
    add("v.blk.0.ln2.bias", {E});
    add("v.blk.0.ffn_up.weight", {E, F});
    add("v.blk.0.ffn_up.bias", {F});
    add("v.blk.0.ffn_down.weight", {F, E});
    add("v.blk.0.ffn_down.bias", {E});
    add("v.post_ln.weight", {E}, 1.0f);
    add("v.post_ln.bias", {E});
    add("mm.soft_emb_norm.weight", {E}, 1.0f);
    add("mm.input_projection.weight", {T, E});
  }

  void add(const std::string& name, std::vector<int64_t> ne, float fill = 0.0f) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    tensors.push_back({name, std::move(ne), std::vector<float>(static_cast<size_t>(n), fill)});
  }
  TensorSpec& spec(const std::string& name) {
    for (TensorSpec& t : tensors) {
      if (t.name == name) return t;
    }
    throw std::logic_error("no tensor " + name);
  }
  std::vector<float>& w(const std::string& name) { return spec(name).values; }
  void set(const std::string& name, std::vector<float> values) {
    ASSERT_EQ(values.size(), w(name).size()) << name;
    w(name) = std::move(values);
  }
  void remove(const std::string& name) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].name == name) tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  std::vector<uint8_t> bytes(GgmlType type = GgmlType::F32) const {
    gguf::GgufWriter w;
    w.set_string("general.architecture", "clip");
    w.set_string("clip.projector_type", projector);
    w.set_bool("clip.has_vision_encoder", true);
    w.set_u32("clip.vision.image_size", static_cast<uint32_t>(S));
    w.set_u32("clip.vision.patch_size", static_cast<uint32_t>(p));
    w.set_u32("clip.vision.embedding_length", static_cast<uint32_t>(E));
    w.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(F));
    w.set_u32("clip.vision.block_count", 1);
    w.set_u32("clip.vision.attention.head_count", static_cast<uint32_t>(n_head));
    w.set_f32("clip.vision.attention.layer_norm_epsilon", kEpsF);
    w.set_u32("clip.vision.projection_dim", static_cast<uint32_t>(T));
    w.set_array("clip.vision.image_mean", gguf::ValueType::Float32, mean, 3);
    w.set_array("clip.vision.image_std", gguf::ValueType::Float32, stdev, 3);
    if (k != 0) w.set_u32("clip.vision.projector.scale_factor", static_cast<uint32_t>(k));
    std::vector<std::vector<uint16_t>> halves;  // kept alive until written
    halves.reserve(tensors.size());
    for (const TensorSpec& t : tensors) {
      const uint32_t n_dims = static_cast<uint32_t>(t.ne.size());
      if (type == GgmlType::F32 && !t.bf16) {
        w.add_tensor(t.name, GgmlType::F32, n_dims, t.ne.data(), t.values.data());
        continue;
      }
      std::vector<uint16_t> h(t.values.size());
      for (size_t i = 0; i < h.size(); ++i) {
        h[i] = t.bf16 ? kernels::fp32_to_bf16(t.values[i]) : kernels::fp32_to_fp16(t.values[i]);
      }
      halves.push_back(std::move(h));
      w.add_tensor(t.name, t.bf16 ? GgmlType::BF16 : GgmlType::F16, n_dims, t.ne.data(), halves.back().data());
    }
    return w.write_memory();
  }
};

struct Parsed {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file;
};

Parsed parse(const VisionFile& vf, GgmlType type = GgmlType::F32) {
  Parsed p;
  p.bytes = vf.bytes(type);
  p.file = gguf::GgufFile::parse(p.bytes.data(), p.bytes.size());
  return p;
}

// The by-hand formulas of the tail, for tests whose interest lies earlier.
std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b) {
  double mean = 0.0, var = 0.0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + kEps) * w[i] + b[i];
  return y;
}

std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<double>& w) {
  double ms = 0.0;
  for (double v : x) ms += v * v;
  ms /= static_cast<double>(x.size());
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(ms + kEps) * w[i];
  return y;
}

// m[c][t]: HF's mm_input_projection_weight (vision_hidden, text_hidden).
std::vector<double> project(const std::vector<double>& x, const std::vector<std::vector<double>>& m) {
  std::vector<double> y(m[0].size(), 0.0);
  for (size_t t = 0; t < y.size(); ++t) {
    for (size_t c = 0; c < x.size(); ++c) y[t] += x[c] * m[c][t];
  }
  return y;
}

std::vector<float> flatten(const std::vector<std::vector<double>>& m) {
  std::vector<float> out;
  for (const auto& row : m) {
    for (double v : row) out.push_back(static_cast<float>(v));
  }
  return out;
}

// Post LN (weight 1, bias 0), no pooling (k = 1), RMS norm (weight 1), projection m.
std::vector<double> plain_tail(const std::vector<std::vector<double>>& h, const std::vector<std::vector<double>>& m) {
  const std::vector<double> ones(h[0].size(), 1.0), zeros(h[0].size(), 0.0);
  std::vector<double> out;
  for (const auto& x : h) {
    const std::vector<double> y = project(rms_norm(layer_norm(x, ones, zeros), ones), m);
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

const std::vector<std::vector<double>> kProj = {{1, 0, -1}, {0.5, 2, 0}, {0, -1, 0.25}, {1, 1, 1}};

// S 8, p 2: a 4 x 4 grid of patches pooled 2 x 2 into 2 x 2 tokens; n_embd 4,
// n_embd_text 3. Every value is exact in half precision too.
VisionFile pass_through_file(int64_t k) {
  VisionFile vf(8, 2, 4, 3, 2, 3, k);
  // Channel o picks pixels (kx, ky, c): o0 <- 1 x (1, 0, red), o1 <- 2 x (0, 1, green),
  // o2 <- -1 x (1, 1, blue) + 0.5 x (0, 0, red); o3 none.
  std::vector<float>& conv = vf.w("v.patch_embd.weight");
  const auto at = [](int64_t kx, int64_t ky, int64_t c, int64_t o) {
    return static_cast<size_t>(kx + 2 * (ky + 2 * (c + 3 * o)));
  };
  conv[at(1, 0, 0, 0)] = 1.0f;
  conv[at(0, 1, 1, 1)] = 2.0f;
  conv[at(1, 1, 2, 2)] = -1.0f;
  conv[at(0, 0, 0, 2)] = 0.5f;
  vf.set("v.patch_embd.bias", {0.125f, -0.25f, 0.375f, 0.0f});
  std::vector<float>& pos = vf.w("v.position_embd.weight");
  for (int64_t i = 0; i < 16; ++i) {
    pos[static_cast<size_t>(4 * i + 0)] = 0.0625f * static_cast<float>(i);
    pos[static_cast<size_t>(4 * i + 3)] = 0.5f * static_cast<float>(i);
  }
  // Attention and FFN matrices zero: each adds its output bias to every patch.
  vf.set("v.blk.0.attn_out.bias", {0.25f, 0.0f, 0.0f, -0.125f});
  vf.set("v.blk.0.ffn_down.bias", {0.0f, 0.5f, 0.0f, 0.0f});
  vf.set("v.post_ln.weight", {1.0f, 2.0f, 0.5f, 1.0f});
  vf.set("v.post_ln.bias", {0.0f, 0.125f, 0.0f, -0.125f});
  vf.set("mm.soft_emb_norm.weight", {1.0f, 0.5f, 2.0f, 1.5f});
  vf.set("mm.input_projection.weight", flatten(kProj));  // W[t + 3c] = m[c][t]
  return vf;
}

double test_pixel(int64_t c, int64_t y, int64_t x) {
  return static_cast<double>(c) - 0.75 + 0.1 * static_cast<double>(y) + 0.013 * static_cast<double>(x);
}

std::vector<double> test_pixels(int64_t S) {
  std::vector<double> px(static_cast<size_t>(3 * S * S));
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < S; ++y) {
      for (int64_t x = 0; x < S; ++x) px[static_cast<size_t>((c * S + y) * S + x)] = test_pixel(c, y, x);
    }
  }
  return px;
}

// The post-LN output of patch (py, px) of pass_through_file, by hand.
std::vector<double> pass_through_patch(int64_t py, int64_t px) {
  const int64_t y0 = 2 * py, x0 = 2 * px;
  const double i = static_cast<double>(4 * py + px);
  const std::vector<double> x = {
      test_pixel(0, y0, x0 + 1) + 0.125 + 0.0625 * i + 0.25,
      2.0 * test_pixel(1, y0 + 1, x0) - 0.25 + 0.5,
      -test_pixel(2, y0 + 1, x0 + 1) + 0.5 * test_pixel(0, y0, x0) + 0.375,
      0.5 * i - 0.125,
  };
  return layer_norm(x, {1.0, 2.0, 0.5, 1.0}, {0.0, 0.125, 0.0, -0.125});
}

std::vector<double> pooled_token(const std::vector<int64_t>& patches) {
  std::vector<double> sum(4, 0.0);
  for (int64_t patch : patches) {
    const std::vector<double> y = pass_through_patch(patch / 4, patch % 4);
    for (size_t e = 0; e < 4; ++e) sum[e] += y[e] / static_cast<double>(patches.size());
  }
  return project(rms_norm(sum, {1.0, 0.5, 2.0, 1.5}), kProj);
}

TEST(VisionReference, PassThroughLayerChecksEmbeddingPoolingNormAndProjection) {
  const Parsed f = parse(pass_through_file(2));
  int64_t n_tokens = 0, n_embd_text = 0;
  const std::vector<double> got = image_embeddings_reference(*f.file, test_pixels(8), &n_tokens, &n_embd_text);
  EXPECT_EQ(n_tokens, 4);
  EXPECT_EQ(n_embd_text, 3);
  // Tokens row-major over the pooled grid: top-left, top-right, bottom-left, bottom-right.
  const std::vector<std::vector<int64_t>> blocks = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
  std::vector<double> want;
  for (const auto& block : blocks) {
    const std::vector<double> t = pooled_token(block);
    want.insert(want.end(), t.begin(), t.end());
  }
  expect_near_all(got, want, 1e-12);
}

TEST(VisionReference, ScaleFactorDefaultsToFour) {
  const Parsed f = parse(pass_through_file(0));
  int64_t n_tokens = 0, n_embd_text = 0;
  const std::vector<double> got = image_embeddings_reference(*f.file, test_pixels(8), &n_tokens, &n_embd_text);
  EXPECT_EQ(n_tokens, 1);
  EXPECT_EQ(n_embd_text, 3);
  expect_near_all(got, pooled_token({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}), 1e-12);
}

TEST(VisionReference, HalfPrecisionTensorsGiveTheSameAnswer) {
  const Parsed f32 = parse(pass_through_file(2));
  const Parsed f16 = parse(pass_through_file(2), GgmlType::F16);
  ASSERT_EQ(f16.file->find_tensor("v.patch_embd.weight")->type, GgmlType::F16);
  const std::vector<double> px = test_pixels(8);
  EXPECT_EQ(image_embeddings_reference(*f16.file, px, nullptr, nullptr),
            image_embeddings_reference(*f32.file, px, nullptr, nullptr));
}

// S 2, p 1, k 1: four patches, each its own token; n_embd 4 in two heads of 2.
VisionFile four_patch_file() {
  VisionFile vf(2, 1, 4, 3, 2, 3, 1);
  vf.set("mm.input_projection.weight", flatten(kProj));
  return vf;
}

// Patch embeddings (u, -u, w, -w) with u^2 + w^2 = 2: mean 0, variance 1.
const double kUW[4][2] = {{1.0, 1.0}, {1.4, 0.2}, {-1.0, 1.0}, {0.2, -1.4}};

TEST(VisionReference, AttentionIsBidirectionalPerHeadAndScaled) {
  VisionFile vf = four_patch_file();
  std::vector<float>& pos = vf.w("v.position_embd.weight");
  for (size_t i = 0; i < 4; ++i) {
    const float u = static_cast<float>(kUW[i][0]), w = static_cast<float>(kUW[i][1]);
    pos[4 * i + 0] = u, pos[4 * i + 1] = -u, pos[4 * i + 2] = w, pos[4 * i + 3] = -w;
  }
  // k[j] = y[pk[j]], v[j] = y[pv[j]] (W[i + 4j] = 1 for i = p[j]): permutations
  // whose transposes differ from them.
  const int pk[4] = {2, 0, 3, 1}, pv[4] = {1, 2, 3, 0};
  std::vector<float>& wk = vf.w("v.blk.0.attn_k.weight");
  std::vector<float>& wv = vf.w("v.blk.0.attn_v.weight");
  std::vector<float>& wo = vf.w("v.blk.0.attn_out.weight");
  for (size_t j = 0; j < 4; ++j) {
    wk[static_cast<size_t>(pk[j]) + 4 * j] = 1.0f;
    wv[static_cast<size_t>(pv[j]) + 4 * j] = 1.0f;
    wo[j + 4 * j] = 2.0f;
  }
  vf.set("v.blk.0.attn_q.bias", {3.0f, 0.0f, -2.0f, 0.0f});  // W_q zero: every patch asks the same
  vf.set("v.blk.0.attn_v.bias", {0.5f, 0.0f, 0.0f, 0.0f});
  vf.set("v.blk.0.attn_out.bias", {0.1f, 0.2f, 0.3f, 0.4f});
  const Parsed f = parse(vf);
  std::vector<double> pixels = test_pixels(2);  // the zero kernel ignores them
  int64_t n_tokens = 0, n_embd_text = 0;
  const std::vector<double> got = image_embeddings_reference(*f.file, pixels, &n_tokens, &n_embd_text);
  EXPECT_EQ(n_tokens, 4);
  EXPECT_EQ(n_embd_text, 3);

  // LN1 of (u, -u, w, -w): itself over sqrt((u^2 + w^2) / 2 + eps), nearly sqrt(1 + eps). Head 0 (dims 0, 1): q (3, 0),
  // k_j (y_j[2], y_j[0]), so the score is 3 y_j[2] / sqrt(2); head 1 (dims 2, 3):
  // q (-2, 0), k_j (y_j[3], y_j[1]), score -2 y_j[3] / sqrt(2). v_j = (y_j[1] + 0.5,
  // y_j[2], y_j[3], y_j[0]). Every patch gets the same attention output.
  std::vector<std::vector<double>> x(4), y(4);
  for (size_t i = 0; i < 4; ++i) {
    const double u = static_cast<float>(kUW[i][0]), w = static_cast<float>(kUW[i][1]);  // as stored
    x[i] = {u, -u, w, -w};
    for (double v : x[i]) y[i].push_back(v / std::sqrt((u * u + w * w) / 2.0 + kEps));
  }
  double s0[4], s1[4], z0 = 0.0, z1 = 0.0;
  for (size_t j = 0; j < 4; ++j) {
    s0[j] = std::exp(3.0 * y[j][2] / std::sqrt(2.0));
    s1[j] = std::exp(-2.0 * y[j][3] / std::sqrt(2.0));
    z0 += s0[j], z1 += s1[j];
  }
  double a[4] = {0.0, 0.0, 0.0, 0.0};
  for (size_t j = 0; j < 4; ++j) {
    a[0] += s0[j] / z0 * (y[j][1] + 0.5);
    a[1] += s0[j] / z0 * y[j][2];
    a[2] += s1[j] / z1 * y[j][3];
    a[3] += s1[j] / z1 * y[j][0];
  }
  const double bo[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  std::vector<std::vector<double>> h(4);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t e = 0; e < 4; ++e) h[i].push_back(x[i][e] + 2.0 * a[e] + bo[e]);
  }
  expect_near_all(got, plain_tail(h, kProj), 1e-12);
}

double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
}

TEST(VisionReference, FeedForwardUsesTanhGelu) {
  VisionFile vf = four_patch_file();
  std::vector<float>& pos = vf.w("v.position_embd.weight");
  for (size_t i = 0; i < 4; ++i) {
    const float fi = static_cast<float>(i);
    pos[4 * i + 0] = fi, pos[4 * i + 1] = 0.5f, pos[4 * i + 2] = -fi * fi, pos[4 * i + 3] = 1.0f;
  }
  // LN2 weight zero: its output is its bias c for every patch.
  vf.set("v.blk.0.ln2.weight", {0.0f, 0.0f, 0.0f, 0.0f});
  vf.set("v.blk.0.ln2.bias", {1.0f, -0.5f, 0.25f, 2.0f});
  // up: u = (c0, c1 - 0.5, c3) = (1, -1, 2).
  std::vector<float>& up = vf.w("v.blk.0.ffn_up.weight");  // ne [4, 3]: W[i + 4j]
  up[0 + 4 * 0] = 1.0f;
  up[1 + 4 * 1] = 1.0f;
  up[3 + 4 * 2] = 1.0f;
  vf.set("v.blk.0.ffn_up.bias", {0.0f, -0.5f, 0.0f});
  // down: f = (g0, g1 + g2, 0.75, -g2).
  std::vector<float>& down = vf.w("v.blk.0.ffn_down.weight");  // ne [3, 4]: W[i + 3j]
  down[0 + 3 * 0] = 1.0f;
  down[1 + 3 * 1] = 1.0f;
  down[2 + 3 * 1] = 1.0f;
  down[2 + 3 * 3] = -1.0f;
  vf.set("v.blk.0.ffn_down.bias", {0.0f, 0.0f, 0.75f, 0.0f});
  const Parsed f = parse(vf);
  const std::vector<double> got = image_embeddings_reference(*f.file, test_pixels(2), nullptr, nullptr);

  const double g0 = gelu_tanh(1.0), g1 = gelu_tanh(-1.0), g2 = gelu_tanh(2.0);
  std::vector<std::vector<double>> h(4);
  for (size_t i = 0; i < 4; ++i) {
    const double di = static_cast<double>(i);
    h[i] = {di + g0, 0.5 + g1 + g2, -di * di + 0.75, 1.0 - g2};
  }
  expect_near_all(got, plain_tail(h, kProj), 1e-12);
}

TEST(VisionReference, RefusesWhatItCannotRead) {
  const std::vector<double> px = test_pixels(8);
  {
    VisionFile vf = pass_through_file(2);
    vf.spec("v.blk.0.ln1.bias").bf16 = true;
    const Parsed f = parse(vf);
    EXPECT_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr), std::runtime_error);
  }
  {
    VisionFile vf = pass_through_file(2);
    vf.remove("v.blk.0.ffn_down.bias");
    const Parsed f = parse(vf);
    EXPECT_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr), std::runtime_error);
  }
  {
    VisionFile vf = pass_through_file(2);
    vf.spec("v.position_embd.weight").ne = {16, 4};  // transposed
    const Parsed f = parse(vf);
    EXPECT_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr), std::runtime_error);
  }
  {
    VisionFile vf = pass_through_file(2);
    vf.projector = "idefics3";
    const Parsed f = parse(vf);
    EXPECT_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr), std::runtime_error);
  }
  {
    VisionFile vf = pass_through_file(3);  // a 4 x 4 grid does not pool by 3
    const Parsed f = parse(vf);
    EXPECT_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr), std::runtime_error);
  }
  const Parsed f = parse(pass_through_file(2));
  EXPECT_THROW(image_embeddings_reference(*f.file, test_pixels(4), nullptr, nullptr), std::runtime_error);
  EXPECT_NO_THROW(image_embeddings_reference(*f.file, px, nullptr, nullptr));
}

TEST(VisionReference, NormaliseIsChannelMajorWithTheFileMeanAndStd) {
  VisionFile vf = four_patch_file();
  const float mean[3] = {0.5f, 0.25f, 0.75f}, stdev[3] = {0.5f, 0.125f, 0.25f};
  std::memcpy(vf.mean, mean, sizeof mean);
  std::memcpy(vf.stdev, stdev, sizeof stdev);
  const Parsed f = parse(vf);
  // 2 x 2 pixels, RGB interleaved.
  const uint8_t rgb[12] = {255, 0, 51, 128, 128, 128, 0, 0, 0, 0, 255, 204};
  const std::vector<double> got = normalise_reference(*f.file, rgb, 2, 2);
  const std::vector<double> want = {
      1.0,  (128.0 / 255 - 0.5) / 0.5,    -1.0, -1.0,  // red: pixels 0..3
      -2.0, (128.0 / 255 - 0.25) / 0.125, -2.0, 6.0,   // green
      -2.2, (128.0 / 255 - 0.75) / 0.25,  -3.0, 0.2,   // blue
  };
  expect_near_all(got, want, 1e-12);
}

}  // namespace
}  // namespace peak::test
