#include "model/arch_spec.h"

#include <cstddef>

namespace peak::model {
namespace {

// A row with the fields every architecture sets; the rest keep their defaults
// (llama's: separate matrices, no biases or extra norms, silu, every layer global).
constexpr ArchSpec row(Arch arch, const char* name, core::RopeMode rope_mode) {
  ArchSpec s;
  s.arch = arch;
  s.name = name;
  s.rope_mode = rope_mode;
  return s;
}

constexpr ArchSpec qwen2() {
  ArchSpec s = row(Arch::Qwen2, "qwen2", core::RopeMode::Neox);
  s.qkv_bias = true;
  return s;
}

// Qwen2-VL's and Qwen2.5-VL's language model (llama.cpp's qwen2vl): qwen2's
// layers with multimodal rotary positions (M-RoPE, rope.dimension_sections):
// an image token's rotation follows its row and column in the picture.
constexpr ArchSpec qwen2vl() {
  ArchSpec s = qwen2();
  s.arch = Arch::Qwen2VL;
  s.name = "qwen2vl";
  s.rope_mode = core::RopeMode::Multi;
  return s;
}

constexpr ArchSpec qwen3() {
  ArchSpec s = row(Arch::Qwen3, "qwen3", core::RopeMode::Neox);
  s.qk_norm = true;
  s.explicit_head_size = true;
  return s;
}

// Gemma 2 and 3 (llama.cpp's loaders): post-norms, GeGLU, embeddings scaled
// by sqrt(n_embd), the query scale of query_pre_attn_scalar, local layers
// sliding by a pattern. Their RMS norms scale by (1 + w), but llama.cpp's
// converter stores 1 + w, so the weights apply as everyone else's.
constexpr ArchSpec gemma(Arch arch, const char* name, int64_t layers_27b) {
  ArchSpec s = row(arch, name, core::RopeMode::Neox);
  s.post_norms = true;
  s.activation = FfnActivation::GeluTanh;
  s.scaled_embedding = true;
  s.query_scalar_27b_layers = layers_27b;
  s.sliding = SlidingWindow::Pattern;
  return s;
}

// Every other layer slides (4096 cells unless the file says); both kinds
// rotate alike; scores and logits are soft-capped.
constexpr ArchSpec gemma2() {
  ArchSpec s = gemma(Arch::Gemma2, "gemma2", 46);
  s.attn_softcap = {true, 50.0f};
  s.final_softcap = {true, 30.0f};
  s.default_window = 4096;
  s.sliding_period = 2;
  return s;
}

// Five local layers to one global one when the file has a window (none: every
// layer global); the local ones rotate with their own base; per-head Q/K norms
// instead of soft-capped scores; logits capped only when the file says.
constexpr ArchSpec gemma3() {
  ArchSpec s = gemma(Arch::Gemma3, "gemma3", 62);
  s.qk_norm = true;
  s.final_softcap = {true, 0.0f};
  s.sliding_period = 6;
  s.local_rope = true;
  return s;
}

constexpr ArchSpec phi3() {
  ArchSpec s = row(Arch::Phi3, "phi3", core::RopeMode::Neox);
  s.fused_qkv = true;
  s.fused_gate_up = true;
  s.long_rope = true;
  s.sliding = SlidingWindow::Ignored;
  return s;
}

// No rotation in every fourth layer (3, 7, 11 ...), llama.cpp's fixed step.
constexpr ArchSpec smollm3() {
  ArchSpec s = row(Arch::SmolLM3, "smollm3", core::RopeMode::Normal);
  s.nope_period = 4;
  return s;
}

// BERT encoders (BGE, all-MiniLM, E5), as llama.cpp's loader and graph have
// them: token, type-0 and absolute position embeddings summed and normalised,
// post-norm blocks with LayerNorms and biases on every product, an ungated
// feed-forward with ggml_gelu (the tanh approximation). The rope mode is unused.
constexpr ArchSpec bert() {
  ArchSpec s = row(Arch::Bert, "bert", core::RopeMode::Normal);
  s.qkv_bias = true;
  s.output_biases = true;
  s.absolute_positions = true;
  s.token_types = true;
  s.embedding_norm = true;
  s.encoder = true;
  s.activation = FfnActivation::GeluTanh;
  s.gated_ffn = false;
  s.norm = NormKind::Layer;
  s.post_norm_block = true;
  return s;
}

// EmbeddingGemma (llama.cpp's gemma-embedding): Gemma 3's layers made an
// encoder: bidirectional attention, its local layers (five in six) seeing a
// symmetric window, the final norm then mean pooling (the file's), then the
// sentence-transformers dense layers; scores scaled by 1/sqrt(head_dim) always.
constexpr ArchSpec gemma_embedding() {
  ArchSpec s = gemma(Arch::GemmaEmbedding, "gemma-embedding", 0);
  s.qk_norm = true;
  s.sliding = SlidingWindow::Symmetric;
  s.sliding_period = 6;
  s.local_rope = true;
  s.encoder = true;
  s.dense_head = true;
  return s;
}

// nomic-bert (nomic-embed-text-v1.5), as llama.cpp's loader and graph have it:
// bert's post-norm blocks with LayerNorms, the token and type-0 embeddings
// normalised, but no position table: NEOX rope over the whole head instead,
// one fused QKV matrix, a SwiGLU feed-forward and no biases on any product.
constexpr ArchSpec nomic_bert() {
  ArchSpec s = row(Arch::NomicBert, "nomic-bert", core::RopeMode::Neox);
  s.fused_qkv = true;
  s.token_types = true;
  s.embedding_norm = true;
  s.encoder = true;
  s.pooling_required = true;
  s.norm = NormKind::Layer;
  s.post_norm_block = true;
  return s;
}

// Gemma 3's image encoder: SigLIP's vision transformer (pre-norm blocks with
// LayerNorms, biases on every product, an ungated tanh-gelu feed-forward,
// learned absolute positions, one row per patch, so no rotation; attention
// among all the patches), its states averaged 4 x 4 patches per token, then
// the projector: an RMS norm (soft_emb_norm) and one matrix into the text
// model's width. The processor resizes to the square input with PIL's
// bilinear filter and puts the image tokens between <start_of_image> and
// <end_of_image>, each after or before a blank line (HF's Gemma3Processor);
// the model attends among an image's tokens both ways (as llama.cpp runs it).
constexpr ArchSpec gemma3_vision() {
  ArchSpec s = row(Arch::Gemma3Vision, "clip", core::RopeMode::Normal);
  s.projector_type = "gemma3";
  s.connector = VisionConnector::MeanNormProject;
  s.resize = image::ResizeFilter::Bilinear;
  s.default_merge = 4;
  s.image_prefix = "\n\n<start_of_image>";
  s.image_suffix = "<end_of_image>\n\n";
  s.image_bidirectional = true;
  s.qkv_bias = true;
  s.output_biases = true;
  s.absolute_positions = true;
  s.encoder = true;
  s.activation = FfnActivation::GeluTanh;
  s.gated_ffn = false;
  s.norm = NormKind::Layer;
  return s;
}

// SmolVLM's image encoder (Idefics3's connector): the same SigLIP tower, its
// states regrouped k x k patches per token by the pixel shuffle (the
// converter's default k is 2; SmolVLM's files give 4 or 3) and projected by
// one matrix without a bias. Pictures resized with PIL's Lanczos filter, as
// HF's SmolVLM processor resizes them, and cut into tiles with an overview
// when the file gives a longest edge (clip.vision.preproc_image_size); an
// image it does not split is framed between
// <fake_token_around_image><global-img> and <fake_token_around_image>. The
// language model (llama) reads the image tokens causally.
constexpr ArchSpec idefics3_vision() {
  ArchSpec s = gemma3_vision();
  s.arch = Arch::Idefics3Vision;
  s.projector_type = "idefics3";
  s.connector = VisionConnector::ShuffleProject;
  s.default_merge = 2;
  s.resize = image::ResizeFilter::Lanczos;
  s.tiling = VisionTiling::GridAndOverview;
  s.image_prefix = "<fake_token_around_image><global-img>";
  s.image_suffix = "<fake_token_around_image>";
  s.image_bidirectional = false;
  return s;
}

// Qwen2.5-VL's image encoder (HF's Qwen2_5_VisionTransformerPretrainedModel,
// llama.cpp's qwen2.5vl_merger): pictures of any size (smart_resize, PIL's
// bicubic filter) cut into 14-pixel patches embedded by a two-frame Conv3D
// without bias; pre-norm blocks with RMS norms, biases on Q, K, V and every
// product, a SiLU-gated feed-forward with biases, 2D rotary positions (a
// patch's row and column, RopeMode::Vision); window attention on all but
// every n_wa_pattern-th layer; then the patch merger (MergeMlp). The language
// model (qwen2vl) reads the image tokens causally between <|vision_start|>
// and <|vision_end|>.
constexpr ArchSpec qwen25_vision() {
  ArchSpec s = row(Arch::Qwen25Vision, "clip", core::RopeMode::Vision);
  s.projector_type = "qwen2.5vl_merger";
  s.connector = VisionConnector::MergeMlp;
  s.resize = image::ResizeFilter::Bicubic;
  s.tiling = VisionTiling::SmartResize;
  s.default_merge = 2;
  s.image_prefix = "<|vision_start|>";
  s.image_suffix = "<|vision_end|>";
  s.image_bidirectional = false;
  s.window_attention = true;
  s.two_frame_patches = true;
  s.qkv_bias = true;
  s.output_biases = true;
  s.encoder = true;
  s.activation = FfnActivation::Silu;
  s.gated_ffn = true;
  s.norm = NormKind::Rms;
  return s;
}

// In the order of enum Arch, which indexes it.
constexpr ArchSpec kArchSpecs[] = {
    row(Arch::Llama, "llama", core::RopeMode::Normal),
    qwen2(),
    qwen3(),
    gemma2(),
    gemma3(),
    phi3(),
    smollm3(),
    bert(),
    gemma_embedding(),
    nomic_bert(),
    gemma3_vision(),
    idefics3_vision(),
    qwen25_vision(),
    qwen2vl(),
};

constexpr bool rows_follow_the_enum() {
  for (size_t i = 0; i < sizeof(kArchSpecs) / sizeof(kArchSpecs[0]); ++i) {
    if (static_cast<size_t>(kArchSpecs[i].arch) != i) return false;
  }
  return true;
}
static_assert(rows_follow_the_enum(), "kArchSpecs must list the architectures in the order of enum Arch");

// What the graphs assume of a row: the ungated feed-forward has gelu alone
// (there is no lone silu op), and post-norm blocks normalise with LayerNorms
// (model/encoder.cpp).
constexpr bool rows_fit_the_graphs() {
  for (const ArchSpec& s : kArchSpecs) {
    if (!s.gated_ffn && s.activation != FfnActivation::GeluTanh) return false;
    if (s.post_norm_block && s.norm != NormKind::Layer) return false;
  }
  return true;
}
static_assert(rows_fit_the_graphs(),
              "rows with gated_ffn = false need FfnActivation::GeluTanh, and post_norm_block rows NormKind::Layer");

}  // namespace

const ArchSpec& arch_spec(Arch arch) { return kArchSpecs[static_cast<size_t>(arch)]; }

const ArchSpec* find_arch(std::string_view name) {
  for (const ArchSpec& s : kArchSpecs) {
    if (s.projector_type == nullptr && name == s.name) return &s;
  }
  return nullptr;
}

const char* arch_name(Arch arch) { return arch_spec(arch).name; }

const ArchSpec* find_projector(std::string_view type) {
  for (const ArchSpec& s : kArchSpecs) {
    if (s.projector_type != nullptr && type == s.projector_type) return &s;
  }
  return nullptr;
}

std::string supported_projector_types() {
  std::string types;
  for (const ArchSpec& s : kArchSpecs) {
    if (s.projector_type != nullptr) types += (types.empty() ? "" : ", ") + std::string(s.projector_type);
  }
  return types;
}

std::string supported_arch_names() {
  std::string names;
  for (const ArchSpec& s : kArchSpecs) {
    if (s.projector_type == nullptr) names += (names.empty() ? "" : ", ") + std::string(s.name);
  }
  return names;
}

}  // namespace peak::model
