// Hyper-parameters of a decoder-only transformer, read from GGUF metadata
// (`general.architecture` and the `<arch>.*` keys), with the architecture's
// rules (model/arch_spec.h) for what a file leaves out (sliding-window
// patterns, local rope bases ...).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "gguf/gguf_reader.h"
#include "model/arch_spec.h"

namespace peak::model {

// How an encoder turns a sequence's last hidden states into its output, with
// llama.cpp's numbers for `<arch>.pooling_type`.
enum class Pooling {
  None = 0,  // every token's hidden state
  Mean = 1,  // their mean
  Cls = 2,   // the first token's ([CLS])
  Last = 3,  // the last token's
  // A reranker's scores, HParams::n_cls_out values (the relevance is
  // HParams::relevance_output's). An encoder (a cross-encoder) passes the
  // first token's state through the classification head,
  // cls_output · tanh(cls · h + b) + b_out; a decoder (Qwen3-Reranker) the
  // last token's through cls_output alone, the output rows of its answer
  // tokens "yes" and "no", whose softmax gives the probability of "yes".
  Rank = 4,
};
const char* pooling_name(Pooling pooling);

// What one layer's attention does that its neighbours may not.
struct LayerAttention {
  bool sliding = false;   // attends to the last HParams::sliding_window cells only
  bool rope = true;       // false: no rotary position embedding (SmolLM3's NoPE layers)
  core::RopeParams rope_params;  // base and scaling: Gemma 3's local layers differ from its global ones
};

// An image encoder's input and output (ArchSpec::projector_type rows): a square
// image of image_size pixels a side, cut into patches of patch_size, whose
// states are averaged `merge` x `merge` into the image tokens handed to the
// language model, n_embd_out wide. A picture is one such image, or several
// (model/vision.h: picture_layout).
struct VisionParams {
  int64_t image_size = 0;  // clip.vision.image_size
  int64_t patch_size = 0;  // clip.vision.patch_size
  int64_t merge = 1;       // clip.vision.projector.scale_factor, else the row's default_merge
  int64_t n_embd_out = 0;  // clip.vision.projection_dim: the language model's n_embd
  // VisionTiling::GridAndOverview rows: the longest edge a picture is resized
  // to before it is cut into tiles of image_size (clip.vision.preproc_image_size);
  // 0: the file has none, and a picture is one image.
  int64_t longest_edge = 0;
  // VisionTiling::SmartResize rows (Qwen2.5-VL): a picture is one image of
  // its own size, resized to sides that are multiples of patch_size x merge
  // with between min_pixels and max_pixels pixels (clip.vision.image_min_pixels
  // and image_max_pixels, else HF's processor defaults); image_size is then
  // unused. 0 in other rows.
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
  // ArchSpec::window_attention rows: clip.vision.n_wa_pattern, and the side
  // of an attention window in image tokens (clip.vision.window_size pixels,
  // else llama.cpp's and HF's 112, over patch_size x merge).
  int64_t wa_pattern = 0;
  int64_t window_tokens = 0;
  // The processor's normalisation of each channel's value v in [0, 1]: (v - mean) / std.
  float image_mean[3] = {0.0f, 0.0f, 0.0f};
  float image_std[3] = {1.0f, 1.0f, 1.0f};

  int64_t patches_per_side() const { return image_size / patch_size; }
  int64_t n_patches() const { return patches_per_side() * patches_per_side(); }
  int64_t tokens_per_side() const { return patches_per_side() / merge; }
  int64_t n_image_tokens() const { return tokens_per_side() * tokens_per_side(); }
};

struct HParams {
  Arch arch = Arch::Llama;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;   // context length the model was trained with
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;     // grouped-query attention: n_head % n_head_kv == 0
  int64_t head_dim = 0;      // `attention.key_length`, else n_embd / n_head
  int64_t n_ff = 0;
  float rms_eps = 1e-5f;
  float layer_norm_eps = 1e-12f;  // NormKind::Layer rows: attention.layer_norm_epsilon
  core::RopeParams rope;     // the global layers': n_dims, mode (normal for llama, neox for qwen ...), base, scaling

  float attention_scale = 1.0f;  // scores are q·k times this: 1/sqrt(head_dim) unless the model says otherwise
  float attn_softcap = 0.0f;     // > 0: scores -> cap * tanh(scores / cap) before the softmax (Gemma 2)
  float final_softcap = 0.0f;    // > 0: logits -> cap * tanh(logits / cap) (Gemma 2)
  float embedding_scale = 1.0f;  // token embeddings are multiplied by it (Gemma: sqrt(n_embd))
  FfnActivation ffn_activation = FfnActivation::Silu;
  int64_t sliding_window = 0;    // > 0: cells a sliding layer's query sees, itself included
  // LongRoPE (Phi-3): a context longer than this uses rope_factors_long, else
  // rope_factors_short (`rope.scaling.original_context_length`, else n_ctx_train).
  int64_t rope_original_context = 0;
  std::vector<LayerAttention> layers;  // n_layer entries

  // Embedding models: an encoder (ArchSpec::encoder), or a decoder whose file
  // gives `pooling_type` (Qwen3-Embedding: causal, last-token pooling), which
  // still loads as a decoder too. runtime::Encoder runs them.
  bool embeds = false;
  Pooling pooling = Pooling::None;  // `pooling_type`; none when the file has no key, as in llama.cpp
  bool causal_attention = true;     // encoders: `attention.causal`, false when absent; decoders: true
  int64_t n_token_types = 0;        // ArchSpec::token_types: tokenizer.ggml.token_type_count
  // Pooling::Rank: the classification head's outputs, the length of
  // `classifier.output_labels`, else 1 (llama.cpp's n_cls_out).
  int64_t n_cls_out = 1;
  // Pooling::Rank: the head output that is the relevance: the first, or the
  // one labelled "yes" in a decoder's (runtime::Reranker).
  int64_t relevance_output = 0;
  // ArchSpec::dense_head: the width between dense_2 [n_embd -> this] and
  // dense_3 [this -> n_embd] (`dense_2_feat_out`); 0: the file has no dense layers.
  int64_t dense_features = 0;

  // Image encoders only (n_ctx_train is then the number of patches).
  VisionParams vision;

  int64_t n_embd_q() const { return n_head * head_dim; }    // rows of attn_q
  int64_t n_embd_kv() const { return n_head_kv * head_dim; }  // rows of attn_k / attn_v
  const LayerAttention& layer(int64_t il) const { return layers[static_cast<size_t>(il)]; }
  // The attention window of layer il: sliding_window on sliding layers, 0 (all
  // cells) elsewhere; symmetric (SlidingWindow::Symmetric) or the last cells.
  int64_t window(int64_t il) const { return layer(il).sliding ? sliding_window : 0; }
  const ArchSpec& spec() const { return arch_spec(arch); }
};

// Reads and checks the hyper-parameters; throws InvalidModel or UnsupportedModel
// (model_error.h) naming the architecture or key that is missing or inconsistent.
HParams read_hparams(const gguf::GgufFile& file);
// An image encoder's (a projector file, general.architecture "clip"): its row
// by clip.projector_type, the vision transformer from the clip.vision.* keys
// (blocks named v.blk.N.*), and VisionParams. Throws as read_hparams does.
HParams read_projector_hparams(const gguf::GgufFile& file);

}  // namespace peak::model
