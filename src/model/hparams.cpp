#include "model/hparams.h"

#include <cmath>
#include <optional>
#include <stdexcept>

#include "gguf/printable.h"
#include "model/model_error.h"

namespace peak::model {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw InvalidModel(message); }
[[noreturn]] void unsupported(const std::string& message) { throw UnsupportedModel(message); }

constexpr int64_t kMaxLayers = 4096;

struct ArchEntry {
  Arch arch;
  const char* name;
};
constexpr ArchEntry kArchs[] = {
    {Arch::Llama, "llama"},   {Arch::Qwen2, "qwen2"}, {Arch::Qwen3, "qwen3"},     {Arch::Gemma2, "gemma2"},
    {Arch::Gemma3, "gemma3"}, {Arch::Phi3, "phi3"},   {Arch::SmolLM3, "smollm3"},
};

struct KeyReader {
  const gguf::GgufFile& file;
  std::string prefix;  // "<arch>."

  std::optional<gguf::Value> find(const std::string& key) const { return file.find(prefix + key); }
  int64_t integer(const std::string& key) const {
    const auto v = find(key);
    if (!v) refuse("model metadata lacks '" + prefix + key + "'");
    if (v->type() == gguf::ValueType::Array) {
      unsupported("'" + prefix + key + "' varies per layer, which peak does not support");
    }
    return v->as_int();
  }
  int64_t integer_or(const std::string& key, int64_t fallback) const { return find(key) ? integer(key) : fallback; }
  double real_or(const std::string& key, double fallback) const {
    const auto v = find(key);
    return v ? v->as_float() : fallback;
  }
  // A factor, cap or scale that must be a positive finite number when present.
  float positive_real_or(const std::string& key, double fallback) const {
    const double v = real_or(key, fallback);
    if (!(v > 0.0) || !std::isfinite(v)) refuse("'" + prefix + key + "' must be positive, not " + std::to_string(v));
    return static_cast<float>(v);
  }
};

Arch parse_arch(std::string_view name) {
  for (const ArchEntry& a : kArchs) {
    if (name == a.name) return a.arch;
  }
  unsupported("unsupported architecture '" + gguf::printable(name) + "' (peak runs " + supported_arch_names() + ")");
}

// Element i of a per-layer flag array (bools, or integers where nonzero is set).
bool layer_flag(const gguf::ArrayView& a, uint64_t i) {
  switch (a.elem_type()) {
    case gguf::ValueType::Bool: return a.at<bool>(i);
    case gguf::ValueType::UInt8: return a.at<uint8_t>(i) != 0;
    case gguf::ValueType::Int8: return a.at<int8_t>(i) != 0;
    case gguf::ValueType::UInt16: return a.at<uint16_t>(i) != 0;
    case gguf::ValueType::Int16: return a.at<int16_t>(i) != 0;
    case gguf::ValueType::UInt32: return a.at<uint32_t>(i) != 0;
    case gguf::ValueType::Int32: return a.at<int32_t>(i) != 0;
    case gguf::ValueType::UInt64: return a.at<uint64_t>(i) != 0;
    case gguf::ValueType::Int64: return a.at<int64_t>(i) != 0;
    default: refuse("'" + std::string(a.key()) + "' must hold one boolean or integer per layer");
  }
}

// Which layers slide, as llama.cpp decides: `attention.sliding_window_pattern`
// when the file has one, either a period p (layer il slides when il % p < p - 1,
// so the last layer of every p attends globally; 0: every layer slides) or one
// flag per layer (set: sliding); else the architecture's period.
void mark_sliding_layers(const KeyReader& keys, int64_t default_period, HParams& hp) {
  const char* key = "attention.sliding_window_pattern";
  const auto pattern = keys.find(key);
  if (pattern && pattern->type() == gguf::ValueType::Array) {
    const gguf::ArrayView flags = pattern->array();
    if (flags.size() != static_cast<uint64_t>(hp.n_layer)) {
      refuse("'" + keys.prefix + key + "' has " + std::to_string(flags.size()) + " entries for " +
             std::to_string(hp.n_layer) + " layers");
    }
    for (int64_t il = 0; il < hp.n_layer; ++il) {
      hp.layers[static_cast<size_t>(il)].sliding = layer_flag(flags, static_cast<uint64_t>(il));
    }
    return;
  }
  const int64_t period = pattern ? pattern->as_int() : default_period;
  if (period < 0) refuse("'" + keys.prefix + key + "' must not be negative");
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    hp.layers[static_cast<size_t>(il)].sliding = period == 0 || il % period < period - 1;
  }
}

// Gemma's local/global attention (llama.cpp's gemma2 and gemma3 loaders).
void read_gemma_attention(const KeyReader& keys, HParams& hp) {
  hp.ffn_activation = FfnActivation::GeluTanh;
  hp.embedding_scale = std::sqrt(static_cast<float>(hp.n_embd));
  // The query scale: query_pre_attn_scalar^-1/2 when the file gives it (llama.cpp
  // writes no such key); else llama.cpp's rule, which for every released model
  // gives the same: the 27B variants (46 layers in Gemma 2, 62 in Gemma 3) use
  // n_embd / n_head, the others the head size.
  const bool is_27b = hp.n_layer == (hp.arch == Arch::Gemma2 ? 46 : 62);
  const double query_scalar = keys.positive_real_or(
      "attention.query_pre_attn_scalar", static_cast<double>(is_27b ? hp.n_embd / hp.n_head : hp.head_dim));
  hp.attention_scale = static_cast<float>(1.0 / std::sqrt(query_scalar));

  const int64_t window = keys.integer_or("attention.sliding_window", hp.arch == Arch::Gemma2 ? 4096 : 0);
  if (window < 0 || (hp.arch == Arch::Gemma2 && window == 0)) {
    refuse("'" + keys.prefix + "attention.sliding_window' must be positive, not " + std::to_string(window));
  }
  if (hp.arch == Arch::Gemma2) {
    // Every other layer slides; both kinds rotate alike.
    hp.attn_softcap = keys.positive_real_or("attn_logit_softcapping", 50.0);
    hp.final_softcap = keys.positive_real_or("final_logit_softcapping", 30.0);
    hp.sliding_window = window;
    mark_sliding_layers(keys, 2, hp);
    return;
  }
  // Gemma 3: five local layers to one global one, when the file has a window
  // (a window of 0 or none: every layer global). The local layers rotate with
  // their own base (`rope.freq_base_swa`, else llama.cpp's 10000) and without
  // the global layers' scaling.
  if (keys.find("final_logit_softcapping")) hp.final_softcap = keys.positive_real_or("final_logit_softcapping", 0.0);
  if (window == 0) return;
  hp.sliding_window = window;
  mark_sliding_layers(keys, 6, hp);
  core::RopeParams local = hp.rope;
  local.freq_base = keys.positive_real_or("rope.freq_base_swa", 10000.0);
  local.freq_scale = 1.0f;
  for (LayerAttention& l : hp.layers) {
    if (l.sliding) l.rope_params = local;
  }
}

void read_rope(const KeyReader& keys, HParams& hp) {
  hp.rope.mode = hp.arch == Arch::Llama || hp.arch == Arch::SmolLM3 ? core::RopeMode::Normal : core::RopeMode::Neox;
  const int64_t n_dims = keys.integer_or("rope.dimension_count", hp.head_dim);
  if (n_dims <= 0 || n_dims > hp.head_dim || n_dims % 2 != 0) {
    refuse("rope.dimension_count " + std::to_string(n_dims) + " must be even and at most the head size " +
           std::to_string(hp.head_dim));
  }
  hp.rope.n_dims = static_cast<int32_t>(n_dims);
  hp.rope.freq_base = keys.positive_real_or("rope.freq_base", 10000.0);
  // Linear position interpolation: positions are divided by the factor.
  double factor = keys.real_or("rope.scale_linear", 1.0);
  if (const auto type = keys.find("rope.scaling.type")) {
    const std::string_view t = type->str();
    if (t == "linear") {
      factor = keys.real_or("rope.scaling.factor", 1.0);
    } else if (t != "none") {
      unsupported("rope scaling '" + std::string(t) + "' is not supported (peak supports linear)");
    }
  }
  if (!(factor > 0.0) || !std::isfinite(factor)) refuse("rope scaling factor must be positive");
  hp.rope.freq_scale = static_cast<float>(1.0 / factor);
  // llama.cpp multiplies every rotation by this (LongRoPE's magnitude correction).
  hp.rope.attn_factor = keys.positive_real_or("rope.scaling.attn_factor", 1.0);
  hp.rope_original_context = keys.integer_or("rope.scaling.original_context_length", hp.n_ctx_train);
  if (hp.rope_original_context <= 0) refuse("rope.scaling.original_context_length must be positive");
}

}  // namespace

const char* arch_name(Arch arch) {
  for (const ArchEntry& a : kArchs) {
    if (a.arch == arch) return a.name;
  }
  return "unknown";
}

std::string supported_arch_names() {
  std::string names;
  for (const ArchEntry& a : kArchs) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names;
}

HParams read_hparams(const gguf::GgufFile& file) {
  const auto arch_value = file.find("general.architecture");
  if (!arch_value) refuse("model metadata lacks 'general.architecture'");
  HParams hp;
  hp.arch = parse_arch(arch_value->str());
  const KeyReader keys{file, std::string(arch_name(hp.arch)) + "."};

  hp.n_ctx_train = keys.integer("context_length");
  hp.n_embd = keys.integer("embedding_length");
  hp.n_layer = keys.integer("block_count");
  hp.n_ff = keys.integer("feed_forward_length");
  hp.n_head = keys.integer("attention.head_count");
  hp.n_head_kv = keys.integer_or("attention.head_count_kv", hp.n_head);
  if (hp.n_embd <= 0 || hp.n_layer <= 0 || hp.n_ff <= 0 || hp.n_head <= 0 || hp.n_head_kv <= 0 ||
      hp.n_ctx_train <= 0) {
    refuse("model hyper-parameters must be positive (embedding_length, block_count, feed_forward_length, "
           "head counts, context_length)");
  }
  // Per-layer tables are sized by the block count, so a bogus one is refused
  // before it allocates (the deepest released models have under 200 layers).
  if (hp.n_layer > kMaxLayers) {
    refuse("block_count " + std::to_string(hp.n_layer) + " exceeds peak's limit of " + std::to_string(kMaxLayers));
  }
  if (hp.n_head % hp.n_head_kv != 0) {
    refuse("attention.head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
           std::to_string(hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0 && !keys.find("attention.key_length")) {
    refuse("embedding_length is not a multiple of head_count and attention.key_length is missing");
  }
  hp.head_dim = keys.integer_or("attention.key_length", hp.n_embd / hp.n_head);
  const int64_t value_dim = keys.integer_or("attention.value_length", hp.head_dim);
  if (value_dim != hp.head_dim) unsupported("attention.value_length differs from key_length, which peak does not support");
  if (hp.head_dim <= 0 || hp.head_dim % 2 != 0) refuse("attention head size must be positive and even");
  hp.rms_eps = static_cast<float>(keys.real_or("attention.layer_norm_rms_epsilon", 1e-5));
  hp.attention_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hp.head_dim)));

  read_rope(keys, hp);
  hp.layers.assign(static_cast<size_t>(hp.n_layer), LayerAttention{false, true, hp.rope});
  switch (hp.arch) {
    case Arch::Gemma2: case Arch::Gemma3:
      read_gemma_attention(keys, hp);
      break;
    case Arch::Phi3:
      // llama.cpp turns Phi-3's sliding window off (its converters do not write
      // the pattern right), so every layer attends globally; the key is still
      // checked.
      if (keys.integer_or("attention.sliding_window", 0) < 0) {
        refuse("'" + keys.prefix + "attention.sliding_window' is negative");
      }
      break;
    case Arch::SmolLM3:
      // No rotation in every fourth layer (3, 7, 11 ...), llama.cpp's fixed step.
      for (int64_t il = 3; il < hp.n_layer; il += 4) hp.layers[static_cast<size_t>(il)].rope = false;
      break;
    case Arch::Llama: case Arch::Qwen2: case Arch::Qwen3:
      break;
  }

  // The vocabulary size is the token list's length (cross-checked against the
  // embedding matrix when the weights are bound).
  if (const auto tokens = file.find("tokenizer.ggml.tokens")) {
    hp.n_vocab = static_cast<int64_t>(tokens->array().size());
  } else {
    hp.n_vocab = keys.integer_or("vocab_size", 0);
  }
  if (hp.n_vocab <= 0) refuse("model has no vocabulary (tokenizer.ggml.tokens)");
  return hp;
}

}  // namespace peak::model
