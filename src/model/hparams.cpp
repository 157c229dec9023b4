#include "model/hparams.h"

#include <stdexcept>

#include "model/model_error.h"

namespace peak::model {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw InvalidModel(message); }
[[noreturn]] void unsupported(const std::string& message) { throw UnsupportedModel(message); }

struct KeyReader {
  const gguf::GgufFile& file;
  std::string prefix;  // "<arch>."

  int64_t integer(const std::string& key) const {
    const auto v = file.find(prefix + key);
    if (!v) refuse("model metadata lacks '" + prefix + key + "'");
    if (v->type() == gguf::ValueType::Array) {
      unsupported("'" + prefix + key + "' varies per layer, which peak does not support");
    }
    return v->as_int();
  }
  int64_t integer_or(const std::string& key, int64_t fallback) const {
    return file.find(prefix + key) ? integer(key) : fallback;
  }
  double real_or(const std::string& key, double fallback) const {
    const auto v = file.find(prefix + key);
    return v ? v->as_float() : fallback;
  }
};

Arch parse_arch(std::string_view name) {
  if (name == "llama") return Arch::Llama;
  if (name == "qwen2") return Arch::Qwen2;
  if (name == "qwen3") return Arch::Qwen3;
  unsupported("unsupported architecture '" + std::string(name) + "' (peak runs llama, qwen2 and qwen3)");
}

}  // namespace

const char* arch_name(Arch arch) {
  switch (arch) {
    case Arch::Llama: return "llama";
    case Arch::Qwen2: return "qwen2";
    case Arch::Qwen3: return "qwen3";
  }
  return "unknown";
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
  if (hp.n_head % hp.n_head_kv != 0) {
    refuse("attention.head_count " + std::to_string(hp.n_head) + " is not a multiple of head_count_kv " +
           std::to_string(hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0 && !file.find(keys.prefix + "attention.key_length")) {
    refuse("embedding_length is not a multiple of head_count and attention.key_length is missing");
  }
  hp.head_dim = keys.integer_or("attention.key_length", hp.n_embd / hp.n_head);
  const int64_t value_dim = keys.integer_or("attention.value_length", hp.head_dim);
  if (value_dim != hp.head_dim) unsupported("attention.value_length differs from key_length, which peak does not support");
  if (hp.head_dim <= 0 || hp.head_dim % 2 != 0) refuse("attention head size must be positive and even");
  hp.rms_eps = static_cast<float>(keys.real_or("attention.layer_norm_rms_epsilon", 1e-5));

  hp.rope.mode = hp.arch == Arch::Llama ? core::RopeMode::Normal : core::RopeMode::Neox;
  hp.rope.n_dims = static_cast<int32_t>(keys.integer_or("rope.dimension_count", hp.head_dim));
  if (hp.rope.n_dims <= 0 || hp.rope.n_dims > hp.head_dim || hp.rope.n_dims % 2 != 0) {
    refuse("rope.dimension_count " + std::to_string(hp.rope.n_dims) + " must be even and at most the head size");
  }
  hp.rope.freq_base = static_cast<float>(keys.real_or("rope.freq_base", 10000.0));
  // Linear position interpolation: positions are divided by the factor.
  double factor = keys.real_or("rope.scale_linear", 1.0);
  if (const auto type = file.find(keys.prefix + "rope.scaling.type")) {
    const std::string_view t = type->str();
    if (t == "linear") {
      factor = keys.real_or("rope.scaling.factor", 1.0);
    } else if (t != "none") {
      unsupported("rope scaling '" + std::string(t) + "' is not supported (peak supports linear)");
    }
  }
  if (!(factor > 0.0)) refuse("rope scaling factor must be positive");
  hp.rope.freq_scale = static_cast<float>(1.0 / factor);

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
