// Synthetic models: random weights (N(0, 0.02) matrices, unit norms) with the
// exact shapes, tensor names and GGUF metadata of a real architecture, so
// anyone can test and benchmark a model's shape without downloading it. The
// file is written tensor by tensor (quantized on the fly), never held whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::model {

struct SynthSpec {
  std::string name;           // general.name
  Arch arch = Arch::Llama;
  int64_t n_layer = 2;
  int64_t n_embd = 64;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t head_dim = 16;      // written as attention.key_length when != n_embd / n_head
  int64_t n_ff = 128;
  int64_t n_vocab = 512;
  int64_t n_ctx_train = 2048;
  float rope_base = 10000.0f;
  float norm_eps = 1e-5f;  // layer_norm_rms_epsilon, or layer_norm_epsilon for LayerNorm rows (bert)
  // Embedding models: pooling_type, written for every encoder (ArchSpec::encoder)
  // and, when not none, for a decoder (making it one, as Qwen3-Embedding);
  // tokenizer.ggml.token_type_count (ArchSpec::token_types); Pooling::Rank
  // adds the classification head: an encoder's with one label, a decoder's
  // answer rows labelled "yes" and "no" with the prompt in rerank_prompt.
  Pooling pooling = Pooling::None;
  std::string rerank_prompt;  // written as tokenizer.chat_template.rerank when not empty
  int64_t n_token_types = 2;
  // > 0 (ArchSpec::dense_head): dense_2 [n_embd -> dense_features] and dense_3
  // [dense_features -> n_embd], with their dense_*_feat_* keys.
  int64_t dense_features = 0;
  // Written over the vocabulary's when >= 0 / true: Qwen3-Embedding ends every
  // text with <|endoftext|> as its EOS (and keeps <|im_end|> as EOT).
  int64_t eos_token_id = -1;
  int64_t eot_token_id = -1;
  bool add_eos = false;
  bool tied_output = true;    // no output.weight: the head reuses token_embd
  bool rope_freqs = false;    // write a Llama-3 style rope_freqs.weight (per-pair frequency divisors)
  int64_t rope_dims = 0;      // rope.dimension_count; 0: head_dim (Phi-4-mini rotates 96 of 128)
  int64_t sliding_window = 0; // > 0: attention.sliding_window (gemma; phi3 files carry one too)
  float attn_softcap = 0.0f;  // > 0: attn_logit_softcapping (gemma2)
  float final_softcap = 0.0f; // > 0: final_logit_softcapping (gemma2)
  // > 0: LongRoPE (phi3): rope.scaling.original_context_length, the attention
  // factor convert_hf_to_gguf derives from it and n_ctx_train, and the
  // rope_factors_long / rope_factors_short tensors.
  int64_t rope_original_context = 0;

  // Image encoders (ArchSpec::projector_type rows; n_vocab and n_ctx_train
  // unused): the square input's side, the patch side, the language model's
  // width the projector maps to; merge > 0 is written as
  // projector.scale_factor (0: the row's default, unwritten, as Gemma 3's
  // files); longest_edge > 0 as preproc_image_size (SmolVLM's files: the
  // longest edge of a picture its processor cuts into tiles).
  int64_t image_size = 0;
  int64_t patch_size = 0;
  int64_t n_embd_out = 0;
  int64_t merge = 0;
  int64_t longest_edge = 0;
  // Qwen2.5-VL (ArchSpec::window_attention): n_wa_pattern (required there);
  // window_size > 0 written as clip.vision.window_size (pixels; llama.cpp's
  // files have none: 112); max_pixels / min_pixels > 0 as image_max_pixels /
  // image_min_pixels (neither in llama.cpp's files). Merge is written as
  // spatial_merge_size for that row.
  int64_t wa_pattern = 0;
  int64_t window_size = 0;
  int64_t max_pixels = 0;
  int64_t min_pixels = 0;

  int64_t rope_dimensions() const { return rope_dims > 0 ? rope_dims : head_dim; }
};

// The named presets (qwen3-0.6b, qwen3-1.7b, qwen3-4b, qwen2.5-0.5b, llama-3.2-1b, tinyllama-1.1b,
// smollm2-135m, gemma3-1b, gemma3-270m, phi-4-mini, smollm3-3b, the
// embedding models bge-small-en-v1.5, all-minilm-l6-v2, qwen3-embedding-0.6b,
// embeddinggemma-300m and nomic-embed-text-v1.5, the rerankers
// ms-marco-minilm-l6-v2 and qwen3-reranker-0.6b, and the image encoders
// gemma3-4b-mmproj, smolvlm-256m-mmproj and qwen2.5-vl-3b-mmproj);
// throws std::invalid_argument listing them for an unknown name.
SynthSpec synth_preset(const std::string& name);
// Qwen3-Reranker's prompt as llama.cpp's converter writes it
// (tokenizer.chat_template.rerank), with {query} and {document} to fill in.
std::string qwen3_reranker_prompt();
std::vector<std::string> synth_preset_names();

// Picks the stored type of each tensor (e.g. 1-D norms stay F32); given the
// tensor name, its row length and the spec.
using TensorTypeFn = std::function<kernels::GgmlType(const std::string& name, int64_t row_length)>;

struct SynthOptions {
  uint64_t seed = 1;
  // Norm weights 1 + N(0, 0.1) instead of ones, so that tests can tell which
  // norm a graph applied where.
  bool varied_norms = false;
  TensorTypeFn tensor_type;                  // null: F32 everywhere
  // Copy tokenizer.* keys from a real model. One with more tokens than the
  // spec is cut to n_vocab when every token cut is unused padding (type 5,
  // UNUSED): Qwen3-Embedding's vocabulary is Qwen3's without its [PAD] fillers.
  const gguf::GgufFile* vocab_from = nullptr;
  std::function<void(size_t done, size_t total)> progress;  // per tensor written; may throw to cancel
  uint32_t file_type = 0;                    // general.file_type (llama.cpp's LLAMA_FTYPE_*)
};

// Writes the model to `path`. Throws std::invalid_argument for an inconsistent
// spec and io::IoError when the file cannot be written.
void write_synth_model(const SynthSpec& spec, const SynthOptions& options, const std::string& path);

}  // namespace peak::model
