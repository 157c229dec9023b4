#include "model/synth.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "gguf/gguf_writer.h"
#include "kernels/kernels.h"
#include "model/synth_random.h"
#include "model/tensor_manifest.h"

namespace peak::model {

using kernels::ggml_row_bytes;
using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::TypeKernels;

namespace {

// NormWeights: ones (or 1 + N(0, 0.1), SynthOptions::varied_norms). The rope
// factors have Llama 3's and LongRoPE's long shape (low-frequency pairs slowed
// by up to 8x), or LongRoPE's short one (by up to 1.25x).
enum class Fill { Normal, NormWeights, SmallNormal, RopeFactors, ShortRopeFactors };

struct PlannedTensor {
  std::string name;
  int64_t ne[4];
  uint32_t n_dims;
  GgmlType type;
  Fill fill;
};

// The hyper-parameters the manifest reads, as read_hparams finds them in the written file.
HParams manifest_hparams(const SynthSpec& s) {
  HParams hp;
  hp.arch = s.arch;
  hp.n_vocab = s.n_vocab;
  hp.n_embd = s.n_embd;
  hp.n_layer = s.n_layer;
  hp.n_head = s.n_head;
  hp.n_head_kv = s.n_head_kv;
  hp.head_dim = s.head_dim;
  hp.n_ff = s.n_ff;
  hp.n_ctx_train = s.n_ctx_train;
  hp.n_token_types = s.n_token_types;
  hp.pooling = s.pooling;  // Rank adds the classification head
  // A decoder reranker's head answers yes or no; an encoder's has one label.
  hp.n_cls_out = s.pooling == Pooling::Rank && !arch_spec(s.arch).encoder ? 2 : 1;
  hp.dense_features = s.dense_features;
  hp.rope.n_dims = static_cast<int32_t>(s.rope_dimensions());
  hp.vision.image_size = s.image_size;
  hp.vision.patch_size = s.patch_size;
  hp.vision.n_embd_out = s.n_embd_out;
  hp.vision.merge = s.merge > 0 ? s.merge : arch_spec(s.arch).default_merge;
  return hp;
}

// Which of the manifest's tensors the file holds: the optional ones the spec
// asks for, and fused QKV matrices where the architecture has them, as its own files do.
bool written(const ManifestTensor& t, const SynthSpec& s) {
  switch (t.presence) {
    case Presence::Required: return true;
    case Presence::UntiedOutput: return !s.tied_output;
    case Presence::RopeFreqs: return s.rope_freqs;
    case Presence::LongRope: return s.rope_original_context > 0;
    case Presence::FusedQkv: return true;
    case Presence::SeparateQkv: return false;
    case Presence::TokenTypes: return true;
  }
  return false;
}

Fill fill_of(const ManifestTensor& t) {
  switch (t.role) {
    case TensorRole::Matrix: return Fill::Normal;
    case TensorRole::NormWeight: return Fill::NormWeights;
    case TensorRole::Bias: return Fill::SmallNormal;
    case TensorRole::FrequencyFactors: break;
  }
  return t.model_slot == &ModelWeights::rope_factors_short ? Fill::ShortRopeFactors : Fill::RopeFactors;
}

std::vector<PlannedTensor> plan_tensors(const SynthSpec& s, const TensorTypeFn& type_of) {
  std::vector<PlannedTensor> out;
  for (const ManifestTensor& t : tensor_manifest(manifest_hparams(s))) {
    if (!written(t, s)) continue;
    const GgmlType type = type_of && t.n_dims > 1 ? type_of(t.name, t.ne[0]) : GgmlType::F32;
    out.push_back(PlannedTensor{t.name, {t.ne[0], t.ne[1], t.ne[2], t.ne[3]}, t.n_dims, type, fill_of(t)});
  }
  return out;
}

// A SentencePiece-style vocabulary: <unk> <s> </s>, the 256 byte tokens, then
// made-up pieces with descending scores.
void write_synthetic_vocab(gguf::GgufWriter& w, int64_t n_vocab) {
  if (n_vocab < 259 + 1) throw std::invalid_argument("a synthetic vocabulary needs at least 260 tokens");
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0.0f, 0.0f, 0.0f};
  std::vector<int32_t> types = {2, 3, 3};  // unknown, control, control
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    scores.push_back(0.0f);
    types.push_back(6);  // byte
  }
  static const char kLetters[] = "etaoinshrdlucmfwypvbgkjqxz";
  for (int64_t i = 0; static_cast<int64_t>(tokens.size()) < n_vocab; ++i) {
    // Base-26 spelling of i, prefixed with U+2581 (the SentencePiece space) on even ids.
    std::string piece;
    for (int64_t v = i;; v = v / 26 - 1) {
      piece.insert(piece.begin(), kLetters[v % 26]);
      if (v < 26) break;
    }
    if (i % 2 == 0) piece = "\xe2\x96\x81" + piece;
    tokens.push_back(piece);
    scores.push_back(-static_cast<float>(i));
    types.push_back(1);  // normal
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_array("tokenizer.ggml.scores", gguf::ValueType::Float32, scores.data(), scores.size());
  w.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, types.data(), types.size());
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
}

// An image encoder's keys, as llama.cpp's converter writes a projector file.
void write_projector_metadata(gguf::GgufWriter& w, const SynthSpec& s) {
  const ArchSpec& spec = arch_spec(s.arch);
  w.set_string("general.architecture", "clip");
  w.set_string("general.name",
               s.name.empty() ? std::string("peak synthetic ") + spec.projector_type + " projector" : s.name);
  w.set_string("clip.projector_type", spec.projector_type);
  w.set_bool("clip.has_vision_encoder", true);
  w.set_bool(spec.activation == FfnActivation::Silu ? "clip.use_silu" : "clip.use_gelu", true);
  const std::string v = "clip.vision.";
  w.set_u32(v + "image_size", static_cast<uint32_t>(s.image_size));
  w.set_u32(v + "patch_size", static_cast<uint32_t>(s.patch_size));
  w.set_u32(v + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32(v + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32(v + "block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32(v + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_f32(v + "attention.layer_norm_epsilon", s.norm_eps);
  w.set_u32(v + "projection_dim", static_cast<uint32_t>(s.n_embd_out));
  const bool smart_resize = spec.tiling == VisionTiling::SmartResize;
  if (s.merge > 0) {
    w.set_u32(v + (smart_resize ? "spatial_merge_size" : "projector.scale_factor"), static_cast<uint32_t>(s.merge));
  }
  if (s.longest_edge > 0) w.set_u32(v + "preproc_image_size", static_cast<uint32_t>(s.longest_edge));
  if (s.wa_pattern > 0) w.set_u32(v + "n_wa_pattern", static_cast<uint32_t>(s.wa_pattern));
  if (s.window_size > 0) w.set_u32(v + "window_size", static_cast<uint32_t>(s.window_size));
  if (s.max_pixels > 0) w.set_u32(v + "image_max_pixels", static_cast<uint32_t>(s.max_pixels));
  if (s.min_pixels > 0) w.set_u32(v + "image_min_pixels", static_cast<uint32_t>(s.min_pixels));
  if (smart_resize) {
    // OpenAI CLIP's normalisation (Qwen2-VL's processor).
    const float mean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
    const float stdev[3] = {0.26862954f, 0.26130258f, 0.27577711f};
    w.set_array(v + "image_mean", gguf::ValueType::Float32, mean, 3);
    w.set_array(v + "image_std", gguf::ValueType::Float32, stdev, 3);
  } else {
    const float half[3] = {0.5f, 0.5f, 0.5f};  // SigLIP's normalisation
    w.set_array(v + "image_mean", gguf::ValueType::Float32, half, 3);
    w.set_array(v + "image_std", gguf::ValueType::Float32, half, 3);
  }
}

void write_metadata(gguf::GgufWriter& w, const SynthSpec& s) {
  if (arch_spec(s.arch).projector_type != nullptr) return write_projector_metadata(w, s);
  const std::string a = arch_name(s.arch);
  w.set_string("general.architecture", a);
  w.set_string("general.name", s.name.empty() ? "peak synthetic " + a : s.name);
  w.set_u32(a + ".context_length", static_cast<uint32_t>(s.n_ctx_train));
  w.set_u32(a + ".embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32(a + ".block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.head_dim * s.n_head != s.n_embd || arch_spec(s.arch).explicit_head_size) {
    w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(s.head_dim));
    w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  const ArchSpec& spec = arch_spec(s.arch);
  if (!spec.absolute_positions) {
    w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(s.rope_dimensions()));
    w.set_f32(a + ".rope.freq_base", s.rope_base);
  }
  if (spec.rope_mode == core::RopeMode::Multi) {
    // Qwen2-VL's split of the rotated pairs, scaled to this head: a quarter
    // turn by t, the rest shared by h and w ({16, 24, 24, 0} of 64 pairs).
    const auto pairs = static_cast<int32_t>(s.rope_dimensions() / 2);
    const int32_t t = pairs / 4, h = (pairs - t) / 2;
    const int32_t sections[4] = {t, h, pairs - t - h, 0};
    w.set_array(a + ".rope.dimension_sections", gguf::ValueType::Int32, sections, 4);
  }
  if (spec.norm == NormKind::Layer) {
    w.set_f32(a + ".attention.layer_norm_epsilon", s.norm_eps);
  } else {
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", s.norm_eps);
  }
  if (spec.encoder) w.set_bool(a + ".attention.causal", false);
  if (spec.encoder || s.pooling != Pooling::None) w.set_u32(a + ".pooling_type", static_cast<uint32_t>(s.pooling));
  // An encoder's one-label head, as convert_hf_to_gguf writes id2label {0:
  // LABEL_0}; a decoder's answer rows, as it writes Qwen3-Reranker's.
  if (s.pooling == Pooling::Rank) {
    w.set_string_array(a + ".classifier.output_labels",
                       spec.encoder ? std::vector<std::string>{"LABEL_0"} : std::vector<std::string>{"yes", "no"});
  }
  if (!s.rerank_prompt.empty()) w.set_string("tokenizer.chat_template.rerank", s.rerank_prompt);
  if (s.dense_features > 0) {
    w.set_u32(a + ".dense_2_feat_in", static_cast<uint32_t>(s.n_embd));
    w.set_u32(a + ".dense_2_feat_out", static_cast<uint32_t>(s.dense_features));
    w.set_u32(a + ".dense_3_feat_in", static_cast<uint32_t>(s.dense_features));
    w.set_u32(a + ".dense_3_feat_out", static_cast<uint32_t>(s.n_embd));
  }
  if (spec.token_types) w.set_u32("tokenizer.ggml.token_type_count", static_cast<uint32_t>(s.n_token_types));
  if (s.sliding_window > 0) w.set_u32(a + ".attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
  if (s.attn_softcap > 0.0f) w.set_f32(a + ".attn_logit_softcapping", s.attn_softcap);
  if (s.final_softcap > 0.0f) w.set_f32(a + ".final_logit_softcapping", s.final_softcap);
  if (s.rope_original_context > 0) {
    // convert_hf_to_gguf's LongRoPE magnitude: sqrt(1 + ln(scale) / ln(original)),
    // scale = context_length / original_context_length (1 when not above 1).
    const double scale = static_cast<double>(s.n_ctx_train) / static_cast<double>(s.rope_original_context);
    const double factor =
        scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(s.rope_original_context))) : 1.0;
    w.set_u32(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(s.rope_original_context));
    w.set_f32(a + ".rope.scaling.attn_factor", static_cast<float>(factor));
  }
}

// The vocabulary file's tokenizer.* keys; its per-token arrays cut to n_vocab
// when it has more tokens and every one cut is unused padding (SynthOptions::vocab_from).
void copy_vocab(gguf::GgufWriter& w, const gguf::GgufFile& v, int64_t n_vocab) {
  const auto tokens = v.find("tokenizer.ggml.tokens");
  const auto types = v.find("tokenizer.ggml.token_type");
  const uint64_t n_file = tokens ? tokens->array().size() : 0;
  const auto n = static_cast<uint64_t>(n_vocab);
  bool cut =
      n_file > n && types && types->array().size() == n_file && types->array().elem_type() == gguf::ValueType::Int32;
  for (uint64_t i = n; cut && i < n_file; ++i) cut = types->array().at<int32_t>(i) == 5;  // LLAMA_TOKEN_TYPE_UNUSED
  if (!tokens || (n_file != n && !cut)) {
    throw std::invalid_argument("the vocabulary file's token count differs from the model's " +
                                std::to_string(n_vocab) + " (the file has " + std::to_string(n_file) +
                                "; only unused padding tokens at its end can be cut)");
  }
  for (size_t i = 0; i < v.n_kv(); ++i) {
    if (v.key(i).rfind("tokenizer.", 0) == 0) w.copy_value(v.value(i));
  }
  if (!cut) return;
  std::vector<std::string> kept;
  std::vector<int32_t> kept_types;
  for (uint64_t i = 0; i < n; ++i) {
    kept.emplace_back(tokens->array().str(i));
    kept_types.push_back(types->array().at<int32_t>(i));
  }
  w.set_string_array("tokenizer.ggml.tokens", kept);
  w.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, kept_types.data(), n);
  if (const auto scores = v.find("tokenizer.ggml.scores")) {
    std::vector<float> kept_scores;
    for (uint64_t i = 0; i < n; ++i) kept_scores.push_back(scores->array().at<float>(i));
    w.set_array("tokenizer.ggml.scores", gguf::ValueType::Float32, kept_scores.data(), n);
  }
}

}  // namespace

std::string qwen3_reranker_prompt() {
  return "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
         "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n<Instruct>: "
         "Given a web search query, retrieve relevant passages that answer the query\n<Query>: {query}\n<Document>: "
         "{document}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
}

std::vector<std::string> synth_preset_names() {
  return {"qwen3-0.6b",
          "qwen3-1.7b",
          "qwen3-4b",
          "qwen2.5-0.5b",
          "llama-3.2-1b",
          "tinyllama-1.1b",
          "smollm2-135m",
          "gemma3-1b",
          "gemma3-270m",
          "phi-4-mini",
          "smollm3-3b",
          "bge-small-en-v1.5",
          "all-minilm-l6-v2",
          "qwen3-embedding-0.6b",
          "embeddinggemma-300m",
          "ms-marco-minilm-l6-v2",
          "nomic-embed-text-v1.5",
          "qwen3-reranker-0.6b",
          "gemma3-4b-mmproj",
          "smolvlm-256m-mmproj",
          "qwen2.5-vl-3b",
          "qwen2.5-vl-3b-mmproj"};
}

SynthSpec synth_preset(const std::string& name) {
  SynthSpec s;
  s.name = name + " (peak synth, random weights)";
  if (name == "qwen3-0.6b") {
    s.arch = Arch::Qwen3;
    s.n_layer = 28, s.n_embd = 1024, s.n_head = 16, s.n_head_kv = 8, s.head_dim = 128, s.n_ff = 3072;
    s.n_vocab = 151936, s.n_ctx_train = 40960, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
  } else if (name == "qwen3-1.7b" || name == "qwen3-4b") {
    // The larger Qwen3 models of the same vocabulary: targets for a
    // qwen3-0.6b draft model (speculative decoding).
    const bool small = name == "qwen3-1.7b";
    s.arch = Arch::Qwen3;
    s.n_layer = small ? 28 : 36, s.n_embd = small ? 2048 : 2560, s.n_head = small ? 16 : 32, s.n_head_kv = 8;
    s.head_dim = 128, s.n_ff = small ? 6144 : 9728;
    s.n_vocab = 151936, s.n_ctx_train = 40960, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
  } else if (name == "qwen2.5-0.5b") {
    s.arch = Arch::Qwen2;
    s.n_layer = 24, s.n_embd = 896, s.n_head = 14, s.n_head_kv = 2, s.head_dim = 64, s.n_ff = 4864;
    s.n_vocab = 151936, s.n_ctx_train = 32768, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
  } else if (name == "qwen2.5-vl-3b") {
    // The language model of Qwen/Qwen2.5-VL-3B-Instruct (llama.cpp's qwen2vl):
    // Qwen2.5-3B's shape with multimodal rotary positions.
    s.arch = Arch::Qwen2VL;
    s.n_layer = 36, s.n_embd = 2048, s.n_head = 16, s.n_head_kv = 2, s.head_dim = 128, s.n_ff = 11008;
    s.n_vocab = 151936, s.n_ctx_train = 128000, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
  } else if (name == "llama-3.2-1b") {
    s.arch = Arch::Llama;
    s.n_layer = 16, s.n_embd = 2048, s.n_head = 32, s.n_head_kv = 8, s.head_dim = 64, s.n_ff = 8192;
    s.n_vocab = 128256, s.n_ctx_train = 131072, s.rope_base = 500000.0f, s.norm_eps = 1e-5f, s.tied_output = true;
  } else if (name == "tinyllama-1.1b") {
    s.arch = Arch::Llama;
    s.n_layer = 22, s.n_embd = 2048, s.n_head = 32, s.n_head_kv = 4, s.head_dim = 64, s.n_ff = 5632;
    s.n_vocab = 32000, s.n_ctx_train = 2048, s.rope_base = 10000.0f, s.norm_eps = 1e-5f, s.tied_output = false;
  } else if (name == "smollm2-135m") {
    // A small real shape for long scripted benchmarks (e.g. peak bench --chat).
    s.arch = Arch::Llama;
    s.n_layer = 30, s.n_embd = 576, s.n_head = 9, s.n_head_kv = 3, s.head_dim = 64, s.n_ff = 1536;
    s.n_vocab = 49152, s.n_ctx_train = 8192, s.rope_base = 100000.0f, s.norm_eps = 1e-5f, s.tied_output = true;
  } else if (name == "gemma3-1b") {
    s.arch = Arch::Gemma3;
    s.n_layer = 26, s.n_embd = 1152, s.n_head = 4, s.n_head_kv = 1, s.head_dim = 256, s.n_ff = 6912;
    s.n_vocab = 262144, s.n_ctx_train = 32768, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
    s.sliding_window = 512;
  } else if (name == "gemma3-270m") {
    s.arch = Arch::Gemma3;
    s.n_layer = 18, s.n_embd = 640, s.n_head = 4, s.n_head_kv = 1, s.head_dim = 256, s.n_ff = 2048;
    s.n_vocab = 262144, s.n_ctx_train = 32768, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
    s.sliding_window = 512;
  } else if (name == "phi-4-mini") {
    // Phi-4-mini-instruct: partial rotary factor 0.75, LongRoPE from 4096 to
    // 131072 positions; its sliding_window (262144) is carried but unused.
    s.arch = Arch::Phi3;
    s.n_layer = 32, s.n_embd = 3072, s.n_head = 24, s.n_head_kv = 8, s.head_dim = 128, s.n_ff = 8192;
    s.n_vocab = 200064, s.n_ctx_train = 131072, s.rope_base = 10000.0f, s.norm_eps = 1e-5f, s.tied_output = true;
    s.rope_dims = 96, s.sliding_window = 262144, s.rope_original_context = 4096;
  } else if (name == "smollm3-3b") {
    s.arch = Arch::SmolLM3;
    s.n_layer = 36, s.n_embd = 2048, s.n_head = 16, s.n_head_kv = 4, s.head_dim = 128, s.n_ff = 11008;
    s.n_vocab = 128256, s.n_ctx_train = 65536, s.rope_base = 5000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
  } else if (name == "bge-small-en-v1.5" || name == "all-minilm-l6-v2") {
    // BAAI/bge-small-en-v1.5 (12 layers, [CLS] pooling) and
    // sentence-transformers/all-MiniLM-L6-v2 (6 layers, mean pooling): BERT
    // with the uncased WordPiece vocabulary, 512 positions, LayerNorm eps 1e-12.
    const bool bge = name == "bge-small-en-v1.5";
    s.arch = Arch::Bert;
    s.n_layer = bge ? 12 : 6, s.n_embd = 384, s.n_head = 12, s.n_head_kv = 12, s.head_dim = 32, s.n_ff = 1536;
    s.n_vocab = 30522, s.n_ctx_train = 512, s.norm_eps = 1e-12f, s.tied_output = true;
    s.pooling = bge ? Pooling::Cls : Pooling::Mean;
  } else if (name == "ms-marco-minilm-l6-v2") {
    // cross-encoder/ms-marco-MiniLM-L6-v2, a reranker: all-MiniLM-L6-v2's
    // shapes (BertForSequenceClassification) with the pooler dense and a
    // one-label classifier as the rank head, two token types.
    s.arch = Arch::Bert;
    s.n_layer = 6, s.n_embd = 384, s.n_head = 12, s.n_head_kv = 12, s.head_dim = 32, s.n_ff = 1536;
    s.n_vocab = 30522, s.n_ctx_train = 512, s.norm_eps = 1e-12f, s.tied_output = true;
    s.pooling = Pooling::Rank;
  } else if (name == "qwen3-embedding-0.6b") {
    // Qwen/Qwen3-Embedding-0.6B as llama.cpp converts it: Qwen3-0.6B's layers,
    // 151669 tokens (Qwen3's, without the [PAD] fillers), 32768 positions,
    // last-token pooling over the <|endoftext|> the tokenizer appends.
    s.arch = Arch::Qwen3;
    s.n_layer = 28, s.n_embd = 1024, s.n_head = 16, s.n_head_kv = 8, s.head_dim = 128, s.n_ff = 3072;
    s.n_vocab = 151669, s.n_ctx_train = 32768, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
    s.pooling = Pooling::Last, s.eos_token_id = 151643, s.eot_token_id = 151645, s.add_eos = true;
  } else if (name == "qwen3-reranker-0.6b") {
    // Qwen/Qwen3-Reranker-0.6B as llama.cpp converts it: Qwen3-Embedding's
    // shapes and 32k positions, rank pooling over the output rows of "yes"
    // and "no" (cls.output [1024, 2]), and the prompt the converter writes.
    s.arch = Arch::Qwen3;
    s.n_layer = 28, s.n_embd = 1024, s.n_head = 16, s.n_head_kv = 8, s.head_dim = 128, s.n_ff = 3072;
    s.n_vocab = 151669, s.n_ctx_train = 32768, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
    s.pooling = Pooling::Rank;
    s.rerank_prompt = qwen3_reranker_prompt();
  } else if (name == "embeddinggemma-300m") {
    // google/embeddinggemma-300m (llama.cpp's gemma-embedding): 24 Gemma 3
    // layers of 768, 3 heads over 1 of 256, windows of 512, 2048 positions,
    // Gemma 3's 262144 tokens, mean pooling, then dense 768 -> 3072 -> 768.
    s.arch = Arch::GemmaEmbedding;
    s.n_layer = 24, s.n_embd = 768, s.n_head = 3, s.n_head_kv = 1, s.head_dim = 256, s.n_ff = 1152;
    s.n_vocab = 262144, s.n_ctx_train = 2048, s.rope_base = 1000000.0f, s.norm_eps = 1e-6f, s.tied_output = true;
    s.sliding_window = 512, s.pooling = Pooling::Mean, s.dense_features = 3072;
  } else if (name == "nomic-embed-text-v1.5") {
    // nomic-ai/nomic-embed-text-v1.5 (llama.cpp's nomic-bert): 12 post-norm
    // layers of 768, 12 heads of 64 rotated with base 1000, SwiGLU of 3072,
    // 2048 positions, BERT's uncased WordPiece vocabulary, mean pooling.
    s.arch = Arch::NomicBert;
    s.n_layer = 12, s.n_embd = 768, s.n_head = 12, s.n_head_kv = 12, s.head_dim = 64, s.n_ff = 3072;
    s.n_vocab = 30522, s.n_ctx_train = 2048, s.rope_base = 1000.0f, s.norm_eps = 1e-12f, s.tied_output = true;
    s.pooling = Pooling::Mean;
  } else if (name == "gemma3-4b-mmproj") {
    // The image encoder of google/gemma-3-4b-it as llama.cpp's converter
    // writes it (also that of 12B and 27B but for n_embd_out): SigLIP so400m,
    // 27 layers of 1152, 16 heads of 72, 4304 wide feed-forward, 896 x 896
    // pixels in patches of 14 (64 x 64), averaged 4 x 4 into 256 tokens of
    // the 4B text model's 2560.
    s.arch = Arch::Gemma3Vision;
    s.n_layer = 27, s.n_embd = 1152, s.n_head = 16, s.n_head_kv = 16, s.head_dim = 72, s.n_ff = 4304;
    s.image_size = 896, s.patch_size = 14, s.n_embd_out = 2560, s.norm_eps = 1e-6f;
  } else if (name == "smolvlm-256m-mmproj") {
    // The image encoder of HuggingFaceTB/SmolVLM-256M-Instruct (and
    // SmolVLM2-256M) as llama.cpp's converter writes it: SigLIP base, 12
    // layers of 768, 12 heads of 64, 3072 wide feed-forward, 512 x 512 pixels
    // in patches of 16 (32 x 32), pixel-shuffled 4 x 4 into 64 tokens of the
    // SmolLM2-135M text model's 576; a picture resized to a longest edge of
    // 2048, then cut into tiles of 512 (at most 4 x 4 and the overview).
    s.arch = Arch::Idefics3Vision;
    s.n_layer = 12, s.n_embd = 768, s.n_head = 12, s.n_head_kv = 12, s.head_dim = 64, s.n_ff = 3072;
    s.image_size = 512, s.patch_size = 16, s.n_embd_out = 576, s.merge = 4, s.norm_eps = 1e-6f;
    s.longest_edge = 2048;
  } else if (name == "qwen2.5-vl-3b-mmproj") {
    // The image encoder of Qwen/Qwen2.5-VL-3B-Instruct as llama.cpp's
    // converter writes it (the 7B's but for n_embd_out 3584): 32 layers of
    // 1280, 16 heads of 80, a 3420 wide SiLU-gated feed-forward, patches of
    // 14 merged 2 x 2 into tokens of the 3B text model's 2048; full attention
    // on layers 7, 15, 23 and 31 (n_wa_pattern 8), windows of 112 pixels
    // elsewhere; image_size 560 as the converter writes it (unused).
    s.arch = Arch::Qwen25Vision;
    s.n_layer = 32, s.n_embd = 1280, s.n_head = 16, s.n_head_kv = 16, s.head_dim = 80, s.n_ff = 3420;
    s.image_size = 560, s.patch_size = 14, s.n_embd_out = 2048, s.norm_eps = 1e-6f;
    s.wa_pattern = 8;
  } else {
    std::string known;
    for (const std::string& n : synth_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown preset '" + name + "' (known: " + known + ")");
  }
  return s;
}

void write_synth_model(const SynthSpec& s, const SynthOptions& options, const std::string& path) {
  if (s.n_layer <= 0 || s.n_embd <= 0 || s.n_head <= 0 || s.n_head_kv <= 0 || s.head_dim <= 0 || s.n_ff <= 0 ||
      s.n_head % s.n_head_kv != 0 || s.head_dim % 2 != 0 || s.rope_dims < 0 || s.rope_dimensions() > s.head_dim ||
      s.rope_dimensions() % 2 != 0) {
    throw std::invalid_argument("synthetic model spec is inconsistent (sizes must be positive, head_count a "
                                "multiple of head_count_kv, head size and rope dimensions even, rope dimensions "
                                "at most the head size)");
  }
  const bool image_encoder = arch_spec(s.arch).projector_type != nullptr;
  if (image_encoder && (s.patch_size <= 0 || s.image_size % s.patch_size != 0 || s.n_embd_out <= 0 ||
                        s.n_embd != s.n_head * s.head_dim)) {
    throw std::invalid_argument(
        "synthetic image encoder spec is inconsistent (the image size must be a multiple of "
        "the patch size, the width n_head x head_dim, the output width positive)");
  }
  gguf::GgufWriter w;
  write_metadata(w, s);
  w.set_u32("general.file_type", options.file_type);
  w.set_u32("general.quantization_version", 2);
  // An image encoder has no vocabulary: the language model beside it has one.
  if (!image_encoder && options.vocab_from) {
    copy_vocab(w, *options.vocab_from, s.n_vocab);
  } else if (!image_encoder) {
    write_synthetic_vocab(w, s.n_vocab);
  }
  if (s.eos_token_id >= 0) w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(s.eos_token_id));
  if (s.eot_token_id >= 0) w.set_u32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(s.eot_token_id));
  if (s.add_eos) w.set_bool("tokenizer.ggml.add_eos_token", true);

  const std::vector<PlannedTensor> tensors = plan_tensors(s, options.tensor_type);
  for (const PlannedTensor& t : tensors) w.add_tensor(t.name, t.type, t.n_dims, t.ne);

  std::vector<float> row;
  w.write_file(path, [&](size_t index, uint8_t* dst, uint64_t) {
    const PlannedTensor& t = tensors[index];
    SplitMix64 rng{options.seed * 0x100000001b3ull + index};
    const TypeKernels& k = kernels_for(t.type);
    if (t.type != GgmlType::F32 && !k.from_float) {
      throw std::invalid_argument(std::string("cannot write tensors of type ") +
                                  ggml_type_name(static_cast<uint32_t>(t.type)));
    }
    row.resize(static_cast<size_t>(t.ne[0]));
    const size_t row_bytes = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(t.type), static_cast<uint64_t>(t.ne[0])));
    for (int64_t r = 0; r < t.ne[1] * t.ne[2] * t.ne[3]; ++r) {
      for (size_t i = 0; i < row.size(); ++i) {
        const float fraction = static_cast<float>(i) / static_cast<float>(row.size());
        switch (t.fill) {
          case Fill::NormWeights: row[i] = options.varied_norms ? 1.0f + 0.1f * rng.normal() : 1.0f; break;
          case Fill::Normal: row[i] = 0.02f * rng.normal(); break;
          case Fill::SmallNormal: row[i] = 0.002f * rng.normal(); break;
          case Fill::RopeFactors: row[i] = 1.0f + 7.0f * fraction; break;
          case Fill::ShortRopeFactors: row[i] = 1.0f + 0.25f * fraction; break;
        }
      }
      uint8_t* out = dst + static_cast<size_t>(r) * row_bytes;
      if (t.type == GgmlType::F32) {
        std::memcpy(out, row.data(), row_bytes);
      } else {
        k.from_float(row.data(), out, t.ne[0]);
      }
    }
    if (options.progress) options.progress(index + 1, tensors.size());
  });
}

}  // namespace peak::model
