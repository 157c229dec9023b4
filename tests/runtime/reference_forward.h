// A naive double-precision forward pass over a GGUF model's F32 weights, written
// straight from the maths (no graph, no kernels), to check the engine's graphs
// against: llama, qwen2 and qwen3's pre-norm block; gemma's embedding scale,
// GeGLU, post-norms, soft-caps and local/global layers; phi3's fused matrices,
// partial rotation and LongRoPE; smollm3's layers without rotation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/model.h"

namespace peak::test {

class ReferenceForward {
 public:
  // n_ctx: the context size the engine runs with, which picks LongRoPE's
  // long (n_ctx > HParams::rope_original_context) or short factors.
  ReferenceForward(const gguf::GgufFile& file, const model::HParams& hp, int64_t n_ctx);
  // Feeds one token at the next position; returns its logits.
  std::vector<double> step(int32_t token);
  // Feeds `tokens` at the next positions, layer by layer; returns their last
  // hidden states after output_norm ([n_tokens][n_embd]). Each token sees the
  // earlier positions and itself, or with `bidirectional` every one of
  // `tokens` (an encoder's sequence), and on a sliding layer then those at
  // most window / 2 positions away either side (llama.cpp's symmetric window).
  std::vector<std::vector<double>> hidden_states(const std::vector<int32_t>& tokens, bool bidirectional = false);
  // Feeds `rows` (n_embd each, taken as they are: an image's tokens) at the
  // next positions; each sees every earlier position and every one of `rows`
  // (Gemma 3's image tokens), on a sliding layer the earlier ones within the
  // window. Returns the last row's logits.
  std::vector<double> span(const std::vector<std::vector<double>>& rows);
  // Feeds `rows` (n_embd each) as a picture's tokens, `cols` across, row by
  // row, causally (Qwen2-VL): with multimodal rotary positions each rotates
  // by the picture's position t, t + its row and t + its column, and the
  // next token comes at t + max(rows, cols) (HF's get_rope_index). Returns
  // the last row's logits.
  std::vector<double> picture(const std::vector<std::vector<double>>& rows, int64_t cols);
  // From the next step on, the matrix `name` is `w` (ggml [n_in, n_out]: row j
  // holds output j's n_in weights) instead of the file's: a merged adapter.
  void set_matrix(const std::string& name, std::vector<double> w) { matrices_[name] = std::move(w); }
  // From the next step on, `offset` (n_embd) is added to the residual stream
  // after layer il (a control vector); empty removes it.
  void set_layer_offset(int64_t il, std::vector<double> offset) { layer_offsets_[il] = std::move(offset); }

 private:
  std::vector<double> matvec(const std::string& name, const std::vector<double>& x) const;
  std::vector<double> vec(const std::string& name) const;
  bool has(const std::string& name) const;
  // A token's rotation positions: t, h, w (all three the same but in a picture).
  struct RopePosition {
    int64_t t, h, w;
  };
  // Rotates every head of v [n_heads * d] in place as layer il does at `pos`.
  void rope(std::vector<double>& v, size_t n_heads, int64_t il, RopePosition pos) const;
  // Which positions a fed position sees besides the earlier ones.
  enum class Visibility {
    Causal,         // none later
    Bidirectional,  // every one fed with it (a symmetric window on sliding layers)
    Span,           // every one fed with it (span())
  };
  // The layers over input rows xs at the next positions; the last hidden
  // states after output_norm.
  // picture_cols > 0: the rows are a picture's tokens that many across (picture()).
  std::vector<std::vector<double>> forward(std::vector<std::vector<double>> xs, Visibility visibility,
                                           int64_t picture_cols = 0);
  std::vector<double> logits_of(const std::vector<double>& x) const;
  // Softmax attention of query head h at position pos over the cached
  // positions of layer il it sees (forward).
  void attend(const std::vector<double>& q, size_t h, int64_t il, int32_t pos, Visibility visibility,
              std::vector<double>& out) const;

  const gguf::GgufFile& file_;
  const model::HParams& hp_;
  std::vector<double> rope_factors_;  // per-pair divisors, empty for none
  int32_t pos_ = 0;                   // tokens fed so far: the next one's place in the cache
  int64_t next_rotation_ = 0;         // the next text token's rotation position (pos_ but after a picture)
  std::vector<std::vector<double>> k_cache_, v_cache_;  // per layer, [pos][n_embd_kv]
  std::map<std::string, std::vector<double>> matrices_;
  std::map<int64_t, std::vector<double>> layer_offsets_;
};

// How far an engine's logits are from the reference's.
struct ReferenceDeviation {
  double max_diff = 0;  // largest |engine - reference| over every logit
  double max_ref = 0;   // largest |reference| logit

  void add(const std::vector<double>& expected, const float* logits);
};

// Logit tolerance where a prefill takes attention's bf16 products (the qwen3
// tiny model: heads of 32; a path with bf16 kernels). bf16 keeps an 8-bit
// significand (u = 2^-8): rounding the scores' operands, the weights and the
// values moves an attention output by up to about 2u of its values' scale;
// the tiny models' logits are of order 1 and their 2 layers add two such
// moves, so 4u. ctest runs the architecture tests again with PEAK_ISA=avx512,
// where the fp32 products keep 1e-4.
double prefill_tolerance(const model::Model& m, double fp32_tolerance);

}  // namespace peak::test
