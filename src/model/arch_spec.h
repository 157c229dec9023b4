// The architectures peak runs, one row of data each: every fact in which one
// differs from another (its GGUF name, the tensors it has, what its forward
// pass does differently, and llama.cpp's rules for the keys its files leave
// out). Hyper-parameter reading, the tensor manifest, synthetic files and the
// shared decoder and encoder graphs read these fields; a new architecture is a
// new row, plus any op it needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/graph.h"
#include "image/resize.h"

namespace peak::model {

enum class Arch {
  Llama,
  Qwen2,
  Qwen3,
  Gemma2,
  Gemma3,
  Phi3,
  SmolLM3,
  Bert,
  GemmaEmbedding,
  NomicBert,
  Gemma3Vision,
  Idefics3Vision,
  Qwen25Vision,
  Qwen2VL
};

// How an image encoder's patch states become the language model's image
// tokens (model/vision.h); patches enter in token order, each token's k x k
// patches together, row by row.
enum class VisionConnector {
  None,  // a language model
  // Gemma 3: each token the mean of its patches, RMS-normalised
  // (mm.soft_emb_norm), then mm.input_projection, which the file stores
  // transposed ([n_embd_out, n_embd]).
  MeanNormProject,
  // Idefics3 (SmolVLM): each token its patches' states side by side (the
  // pixel shuffle: patch (dy, dx) of the block at dy k n_embd + dx n_embd),
  // then mm.model.fc [k k n_embd, n_embd_out], without a bias.
  ShuffleProject,
  // Qwen2.5-VL (HF's Qwen2_5_VLPatchMerger): each patch RMS-normalised
  // (v.post_ln), a token's k x k patches side by side as the pixel shuffle
  // has them, then mm.0 [k k n_embd -> k k n_embd] + bias, the exact (erf)
  // gelu, mm.2 [k k n_embd -> n_embd_out] + bias.
  MergeMlp,
};

// How an image encoder's processor makes a picture into the encoder's square
// images (model/vision.h: picture_layout).
enum class VisionTiling {
  None,  // one image: the picture resized to the square
  // Idefics3 (SmolVLM), given a longest edge (VisionParams::longest_edge):
  // the picture resized to it, then cut into a grid of squares, then the
  // whole shrunk to one square (the overview), last.
  GridAndOverview,
  // Qwen2.5-VL (HF's smart_resize): one image of variable size, the picture
  // resized to sides that are multiples of patch x merge, near its own, with
  // its pixels between VisionParams::min_pixels and max_pixels.
  SmartResize,
};

// The gate of the gated feed-forward block: silu (SwiGLU) or tanh-approximated
// gelu (GeGLU, Gemma's gelu_pytorch_tanh).
enum class FfnActivation { Silu, GeluTanh };

// The normalisation of every norm the architecture has.
enum class NormKind {
  Rms,    // x / sqrt(mean(x^2) + eps) * w; eps from attention.layer_norm_rms_epsilon
  Layer,  // (x - mean) / sqrt(variance + eps) * w + b; eps from attention.layer_norm_epsilon
};

// What an architecture makes of `attention.sliding_window`.
enum class SlidingWindow {
  None,     // the key is not read; every layer attends to every cell
  Ignored,  // checked (not negative) but unused, as llama.cpp does for Phi-3, whose converters write the pattern wrong
  Pattern,  // the layers `attention.sliding_window_pattern` marks, else ArchSpec::sliding_period's, slide
  // As Pattern, but the key is required and a sliding layer's token sees the
  // tokens at most window / 2 positions away on either side (llama.cpp's
  // symmetric window, for an encoder's bidirectional attention).
  Symmetric,
};

// A soft-cap (x -> cap * tanh(x / cap)) an architecture may apply.
struct SoftcapRule {
  bool applies = false;   // false: the key is not read and nothing is capped
  float fallback = 0.0f;  // the cap when the file has no key; 0: none
};

struct ArchSpec {
  Arch arch = Arch::Llama;
  const char* name = "";  // general.architecture, and the prefix of its keys ("qwen3.")

  // Tensors beyond attn_q/k/v/output, the gated feed-forward and the pre-norms.
  bool qkv_bias = false;       // attn_q/k/v.bias added to the projections (qwen2)
  bool qk_norm = false;        // attn_q_norm / attn_k_norm [head_dim]: RMS norm per head of Q and K
  bool post_norms = false;     // post_attention_norm / post_ffw_norm on each block's outputs before the residual adds
  bool fused_qkv = false;      // attn_qkv [n_embd, q + 2kv] holds Q, K and V (separate matrices are accepted too)
  bool fused_gate_up = false;  // ffn_up [n_embd, 2 n_ff] holds the gate rows, then the up rows; no ffn_gate
  bool long_rope = false;      // rope_factors_long / rope_factors_short (LongRoPE), both or neither
  // Its files give attention.key_length even when it is n_embd / n_head, so
  // synthetic ones do too.
  bool explicit_head_size = false;
  bool output_biases = false;  // attn_output.bias, ffn_up.bias and ffn_down.bias added to their products (bert)
  bool absolute_positions =
      false;  // position_embd [n_embd, context_length]: each position's row added to its token's; no rotation
  bool token_types = false;     // token_types [n_embd, tokenizer.ggml.token_type_count]: each token's type row added (0
                                // but in a pair's second text)
  bool embedding_norm = false;  // token_embd_norm (weight and bias) normalises the summed embeddings

  // An encoder (bert, gemma-embedding): attention within each sequence of a
  // batch, both ways unless `attention.causal` says otherwise, no KV cache and
  // no output head; its last hidden states are pooled into one embedding per
  // sequence (`pooling_type`, model/encoder.h). Decoders run through
  // model/decoder.h; one whose file gives `pooling_type` (Qwen3-Embedding) is
  // an embedding model too (HParams::embeds).
  bool encoder = false;
  // sentence-transformers' dense layers after pooling (llama.cpp's dense_2 and
  // dense_3), present when the file's `dense_2_feat_out` says so.
  bool dense_head = false;
  // `pooling_type` must be in the file (llama.cpp reads it as required for nomic-bert).
  bool pooling_required = false;
  // An image encoder (llama.cpp's mmproj files, general.architecture "clip";
  // model/vision.h): a vision transformer over an image's patches, whose
  // layers the encoders' builder runs, then the projector into the language
  // model's embeddings. Found by `projector_type` (clip.projector_type), never
  // by name; keys are clip.vision.*, tensors v.* and mm.*. Null: a language model.
  const char* projector_type = nullptr;
  VisionConnector connector = VisionConnector::None;
  // The processor's resampling of an image to the encoder's size.
  image::ResizeFilter resize = image::ResizeFilter::Bilinear;
  VisionTiling tiling = VisionTiling::None;
  // > 0: the tower's k x k neighbouring patches are averaged into one image
  // token (Gemma 3: 4); clip.vision.projector.scale_factor overrides it.
  int64_t default_merge = 0;
  // How the language model takes the image tokens (its processor's text
  // around them, special tokens included; a tiled picture's texts are
  // picture_layout's), and whether they attend to each other both ways
  // (runtime::Context::eval_embeddings).
  const char* image_prefix = "";
  const char* image_suffix = "";
  bool image_bidirectional = false;
  // Qwen2.5-VL's window attention: clip.vision.n_wa_pattern is required;
  // layer il attends among all the patches iff (il + 1) % n_wa_pattern == 0,
  // else within its window of VisionParams::window_tokens x window_tokens
  // image tokens (model/vision.h).
  bool window_attention = false;
  // The patch embedding is a Conv3D over two frames, stored as two kernels
  // (v.patch_embd.weight and .weight.1) without a bias; a still picture is
  // both frames, so the two products are summed.
  bool two_frame_patches = false;

  // The forward pass.
  core::RopeMode rope_mode = core::RopeMode::Normal;  // Normal rotates adjacent pairs, Neox the two halves
  FfnActivation activation = FfnActivation::Silu;
  // w_down · (act(gate · x) * (up · x)); false: w_down · gelu_tanh(up · x), no
  // ffn_gate (bert; such a row's activation is GeluTanh).
  bool gated_ffn = true;
  NormKind norm = NormKind::Rms;
  // Post-norm blocks (BERT): x = norm(x + attention(x)), then x = norm(x + ffn(x)),
  // with the norms attn_output_norm and layer_output_norm; else pre-norm
  // (x + attention(norm(x)) ...) with attn_norm and ffn_norm.
  bool post_norm_block = false;
  bool scaled_embedding = false;  // token embeddings are multiplied by sqrt(n_embd)
  int64_t nope_period = 0;        // > 0: layers nope_period - 1, 2 nope_period - 1 ... do not rotate (NoPE)

  // Attention hyper-parameters and llama.cpp's defaults for them.
  // > 0: scores are scaled by attention.query_pre_attn_scalar^-1/2, which
  // defaults to n_embd / n_head in a model of this many layers (the 27B
  // variant) and to head_dim in others. 0: 1/sqrt(head_dim), the key unread.
  int64_t query_scalar_27b_layers = 0;
  SoftcapRule attn_softcap;   // attn_logit_softcapping, on the scores before the softmax
  SoftcapRule final_softcap;  // final_logit_softcapping, on the logits
  SlidingWindow sliding = SlidingWindow::None;
  // Pattern: the window when the file has none (0: no layer slides). A
  // nonzero default means the architecture always slides: a window of 0 is refused.
  int64_t default_window = 0;
  int64_t sliding_period = 0;  // Pattern without a pattern key: layer il slides when il % period < period - 1
  bool local_rope = false;     // Pattern: sliding layers rotate with rope.freq_base_swa (else 10000), unscaled
};

const ArchSpec& arch_spec(Arch arch);
// The language model row named `name` (general.architecture), or null when
// peak has none (vision towers are not found by name).
const ArchSpec* find_arch(std::string_view name);
const char* arch_name(Arch arch);
// The image encoder row of clip.projector_type `type`, or null when peak has none.
const ArchSpec* find_projector(std::string_view type);
// "gemma3, ..." : every projector type peak runs, for messages.
std::string supported_projector_types();
// "llama, qwen2, ..." : every language model architecture peak runs, for messages.
std::string supported_arch_names();

}  // namespace peak::model
