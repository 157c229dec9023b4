#include "model/hparams.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "gguf/printable.h"
#include "model/model_error.h"
#include "model/vision.h"

namespace peak::model {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw InvalidModel(message); }
[[noreturn]] void unsupported(const std::string& message) { throw UnsupportedModel(message); }

constexpr int64_t kMaxLayers = 4096;
// Widths and head counts are at most 2^24 (released models stay under 2^18),
// so every product of two of them (n_head * head_dim ...) and the sums of a
// few such products fit int64_t with room to spare.
constexpr int64_t kMaxWidth = int64_t{1} << 24;
// Positions are int32_t (KV cache, rope inputs): a context longer than that
// cannot be addressed.
constexpr int64_t kMaxContext = INT32_MAX;
// An image encoder's input side, in pixels: released ones take at most a few
// thousand, and its square of patches must stay a count attention can hold.
// Also the most a picture's longest edge is resized to before it is tiled.
constexpr int64_t kMaxImageSize = 8192;
// The image tokens of one picture, all its frames: they must fit the language
// model's context beside the text, and a session keeps them per picture
// (SmolVLM-256M's files give at most 17 frames of 64).
constexpr int64_t kMaxPictureTokens = 32768;

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
  // A count that must lie in [min, max], checked before anything is sized by it.
  int64_t count(const std::string& key, int64_t min, int64_t max) const { return in_range(key, integer(key), min, max); }
  int64_t count_or(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
    return in_range(key, integer_or(key, fallback), min, max);
  }
  int64_t in_range(const std::string& key, int64_t v, int64_t min, int64_t max) const {
    if (v < min || v > max) {
      refuse("'" + prefix + key + "' is " + std::to_string(v) + "; it must be between " + std::to_string(min) +
             " and " + std::to_string(max));
    }
    return v;
  }
  double real_or(const std::string& key, double fallback) const {
    const auto v = find(key);
    return v ? v->as_float() : fallback;
  }
  // A factor, cap, scale or epsilon that must be a positive finite float when
  // present (NaN fails every comparison, so it is refused too; a double past
  // the float range would not convert).
  float positive_real_or(const std::string& key, double fallback) const {
    const double v = real_or(key, fallback);
    if (!(v > 0.0 && v <= FLT_MAX) || !(static_cast<float>(v) > 0.0f)) {
      refuse("'" + prefix + key + "' must be positive and finite, not " + std::to_string(v));
    }
    return static_cast<float>(v);
  }
};

// The number of blocks whose tensors the file holds: one more than the
// largest N of a tensor named "<block_prefix>N.*" ("blk.N.*"; 0 when there is none).
int64_t blocks_in_file(const gguf::GgufFile& file, std::string_view block_prefix) {
  constexpr int64_t kLargest = int64_t{1} << 40;  // any bigger N is a block no count can reach
  const size_t start = block_prefix.size();
  int64_t blocks = 0;
  for (size_t i = 0; i < file.n_tensors(); ++i) {
    const std::string_view name = file.tensor(i).name;
    if (name.substr(0, start) != block_prefix) continue;
    int64_t n = 0;
    size_t end = start;
    for (; end < name.size() && name[end] >= '0' && name[end] <= '9' && n < kLargest; ++end) {
      n = n * 10 + (name[end] - '0');
    }
    if (end > start && end < name.size() && name[end] == '.') blocks = std::max(blocks, n + 1);
  }
  return blocks;
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

// The query scale: query_pre_attn_scalar^-1/2 when the architecture reads it
// and the file gives it (llama.cpp writes no such key); else llama.cpp's rule,
// which for every released model gives the same: the 27B variants use
// n_embd / n_head, the others the head size.
void read_query_scale(const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  hp.attention_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hp.head_dim)));
  if (spec.query_scalar_27b_layers == 0) return;
  const bool is_27b = hp.n_layer == spec.query_scalar_27b_layers;
  const double query_scalar = keys.positive_real_or(
      "attention.query_pre_attn_scalar", static_cast<double>(is_27b ? hp.n_embd / hp.n_head : hp.head_dim));
  hp.attention_scale = static_cast<float>(1.0 / std::sqrt(query_scalar));
}

// Sliding layers' own rotation: base `rope.freq_base_swa` (else llama.cpp's
// 10000), without the global layers' scaling.
void rotate_local_layers(const KeyReader& keys, HParams& hp) {
  core::RopeParams local = hp.rope;
  local.freq_base = keys.positive_real_or("rope.freq_base_swa", 10000.0);
  local.freq_scale = 1.0f;
  for (LayerAttention& l : hp.layers) {
    if (l.sliding) l.rope_params = local;
  }
}

void read_sliding_window(const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  const char* key = "attention.sliding_window";
  switch (spec.sliding) {
    case SlidingWindow::None: return;
    case SlidingWindow::Ignored:
      if (keys.integer_or(key, 0) < 0) refuse("'" + keys.prefix + key + "' is negative");
      return;
    case SlidingWindow::Pattern: break;
    case SlidingWindow::Symmetric:
      if (!keys.find(key)) refuse("model metadata lacks '" + keys.prefix + key + "'");
      break;
  }
  const int64_t window = keys.integer_or(key, spec.default_window);
  if (window < 0 || window > kMaxContext || (spec.default_window > 0 && window == 0)) {
    refuse("'" + keys.prefix + key + "' must be positive (at most " + std::to_string(kMaxContext) + "), not " +
           std::to_string(window));
  }
  if (window == 0) return;
  hp.sliding_window = window;
  mark_sliding_layers(keys, spec.sliding_period, hp);
  if (spec.local_rope) rotate_local_layers(keys, hp);
}

// The cap of `key` when the architecture applies one: the file's, else the fallback.
float read_softcap(const KeyReader& keys, const char* key, const SoftcapRule& rule) {
  if (!rule.applies) return 0.0f;
  return keys.find(key) ? keys.positive_real_or(key, 0.0) : rule.fallback;
}

// The dense layers' widths (llama.cpp's keys): dense_2 maps n_embd to
// dense_2_feat_out, dense_3 maps dense_3_feat_in (the same) back to n_embd.
void read_dense_head(const KeyReader& keys, HParams& hp) {
  if (!keys.find("dense_2_feat_out")) {
    for (const char* key : {"dense_2_feat_in", "dense_3_feat_in", "dense_3_feat_out"}) {
      if (keys.find(key)) refuse("'" + keys.prefix + key + "' is given without '" + keys.prefix + "dense_2_feat_out'");
    }
    return;
  }
  hp.dense_features = keys.count("dense_2_feat_out", 1, kMaxWidth);
  const auto must_be = [&](const char* key, int64_t expected) {
    const int64_t v = keys.integer_or(key, expected);
    if (v != expected) {
      refuse("'" + keys.prefix + key + "' is " + std::to_string(v) + "; it must be " + std::to_string(expected));
    }
  };
  must_be("dense_2_feat_in", hp.n_embd);
  must_be("dense_3_feat_in", hp.dense_features);
  must_be("dense_3_feat_out", hp.n_embd);
}

// An embedding model's pooling, attention direction, token types and dense
// layers (llama.cpp's keys; the token type count is a tokenizer key). A
// decoder is one when its file gives a pooling type, as llama.cpp reads that
// key for every architecture.
void read_encoder_keys(const gguf::GgufFile& file, const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  if (spec.token_types) {
    const auto count = file.find("tokenizer.ggml.token_type_count");
    if (!count)
      refuse("model metadata lacks 'tokenizer.ggml.token_type_count', which " + std::string(spec.name) + " needs");
    hp.n_token_types = count->as_int();
    if (hp.n_token_types < 1 || hp.n_token_types > kMaxWidth) {
      refuse("'tokenizer.ggml.token_type_count' is " + std::to_string(hp.n_token_types) +
             "; it must be between 1 and " + std::to_string(kMaxWidth));
    }
  }
  hp.embeds = spec.encoder || keys.find("pooling_type");
  if (!hp.embeds) return;
  if (spec.encoder) {
    const auto causal = keys.find("attention.causal");
    hp.causal_attention = causal && causal->boolean();
  }
  if (spec.dense_head) read_dense_head(keys, hp);
  if (spec.pooling_required && !keys.find("pooling_type")) {
    refuse("model metadata lacks '" + keys.prefix + "pooling_type', which " + std::string(spec.name) + " needs");
  }
  const int64_t pooling = keys.integer_or("pooling_type", static_cast<int64_t>(Pooling::None));
  switch (pooling) {
    case static_cast<int64_t>(Pooling::None):
    case static_cast<int64_t>(Pooling::Mean):
    case static_cast<int64_t>(Pooling::Cls):
    case static_cast<int64_t>(Pooling::Last):
    case static_cast<int64_t>(Pooling::Rank): hp.pooling = static_cast<Pooling>(pooling); break;
    default:
      refuse("'" + keys.prefix + "pooling_type' is " + std::to_string(pooling) +
             "; peak knows 0 (none), 1 (mean), 2 (cls), 3 (last) and 4 (rank)");
  }
  const auto labels = keys.find("classifier.output_labels");
  if (labels) {
    hp.n_cls_out = static_cast<int64_t>(labels->array().size());
    if (hp.n_cls_out < 1 || hp.n_cls_out > kMaxWidth) {
      refuse("'" + keys.prefix + "classifier.output_labels' has " + std::to_string(hp.n_cls_out) +
             " labels; a classification head has between 1 and " + std::to_string(kMaxWidth));
    }
  }
  if (hp.pooling == Pooling::Rank && !spec.encoder) {
    // A decoder reranker (Qwen3-Reranker) answers "yes" or "no": its head is
    // the output rows of those two tokens, labelled so by llama.cpp's converter.
    int64_t yes = -1;
    const bool strings = labels && labels->array().elem_type() == gguf::ValueType::String;
    for (int64_t i = 0; strings && i < hp.n_cls_out; ++i) {
      if (labels->array().str(static_cast<uint64_t>(i)) == "yes") yes = i;
    }
    if (yes < 0 || hp.n_cls_out < 2) {
      refuse("'" + keys.prefix + "classifier.output_labels' must name the answers \"yes\" and \"no\" of a " +
             std::string(spec.name) + " reranker (pooling_type 4), which scores by the probability of \"yes\"");
    }
    hp.relevance_output = yes;
  }
}

// What the architecture's row decides beyond the keys every model has.
void read_arch_rules(const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  read_query_scale(keys, spec, hp);
  read_sliding_window(keys, spec, hp);
  hp.attn_softcap = read_softcap(keys, "attn_logit_softcapping", spec.attn_softcap);
  hp.final_softcap = read_softcap(keys, "final_logit_softcapping", spec.final_softcap);
  if (spec.nope_period > 0) {
    for (int64_t il = spec.nope_period - 1; il < hp.n_layer; il += spec.nope_period) {
      hp.layers[static_cast<size_t>(il)].rope = false;
    }
  }
  hp.ffn_activation = spec.activation;
  hp.embedding_scale = spec.scaled_embedding ? std::sqrt(static_cast<float>(hp.n_embd)) : 1.0f;
}

// M-RoPE's sections (Qwen2-VL): how many rotated pairs turn by the token's
// t, h, w and fourth position, four integers; they must cover the rotated
// pairs exactly, and the fourth (no model of this row uses it) be 0.
void read_rope_sections(const KeyReader& keys, HParams& hp) {
  const char* key = "rope.dimension_sections";
  const auto v = keys.find(key);
  if (!v) refuse("model metadata lacks '" + keys.prefix + key + "', which its multimodal rotary positions need");
  const std::string name = "'" + keys.prefix + key + "'";
  if (v->type() != gguf::ValueType::Array || v->array().size() != 4 ||
      (v->array().elem_type() != gguf::ValueType::Int32 && v->array().elem_type() != gguf::ValueType::UInt32)) {
    refuse(name + " must hold four 32-bit integers");
  }
  int64_t sections[4];
  for (uint64_t i = 0; i < 4; ++i) {
    sections[i] = v->array().elem_type() == gguf::ValueType::Int32 ? static_cast<int64_t>(v->array().at<int32_t>(i))
                                                                   : static_cast<int64_t>(v->array().at<uint32_t>(i));
    if (sections[i] < 0 || sections[i] > hp.rope.n_dims) refuse(name + " holds " + std::to_string(sections[i]));
  }
  if (sections[3] != 0) unsupported(name + " gives a fourth section, which peak does not support");
  if (sections[0] + sections[1] + sections[2] != hp.rope.n_dims / 2) {
    refuse(name + " covers " + std::to_string(sections[0] + sections[1] + sections[2]) + " pairs, not the " +
           std::to_string(hp.rope.n_dims / 2) + " that rotate");
  }
  hp.rope.sections[0] = static_cast<int32_t>(sections[0]);
  hp.rope.sections[1] = static_cast<int32_t>(sections[1]);
}

void read_rope(const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  hp.rope.mode = spec.rope_mode;
  const int64_t n_dims = keys.integer_or("rope.dimension_count", hp.head_dim);
  if (n_dims <= 0 || n_dims > hp.head_dim || n_dims % 2 != 0) {
    refuse("'" + keys.prefix + "rope.dimension_count' " + std::to_string(n_dims) +
           " must be even and at most the head size " + std::to_string(hp.head_dim));
  }
  hp.rope.n_dims = static_cast<int32_t>(n_dims);
  hp.rope.freq_base = keys.positive_real_or("rope.freq_base", 10000.0);
  // Linear position interpolation: positions are divided by the factor.
  const char* factor_key = "rope.scale_linear";
  if (const auto type = keys.find("rope.scaling.type")) {
    const std::string_view t = type->str();
    if (t == "linear") {
      factor_key = "rope.scaling.factor";
    } else if (t != "none") {
      unsupported("rope scaling '" + std::string(t) + "' is not supported (peak supports linear)");
    }
  }
  const float factor = keys.positive_real_or(factor_key, 1.0);
  hp.rope.freq_scale = 1.0f / factor;
  if (!(hp.rope.freq_scale > 0.0f) || !std::isfinite(hp.rope.freq_scale)) {
    refuse("'" + keys.prefix + factor_key + "' " + std::to_string(factor) + " is out of range");
  }
  // llama.cpp multiplies every rotation by this (LongRoPE's magnitude correction).
  hp.rope.attn_factor = keys.positive_real_or("rope.scaling.attn_factor", 1.0);
  hp.rope_original_context =
      keys.count_or("rope.scaling.original_context_length", hp.n_ctx_train, 1, kMaxContext);
  if (hp.rope.mode == core::RopeMode::Multi) read_rope_sections(keys, hp);
}

void read_transformer(const gguf::GgufFile& file, const KeyReader& keys, const ArchSpec& spec,
                      std::string_view block_prefix, HParams& hp);

// The longest edge of a tiling row's processor (llama.cpp reads the key for
// idefics3 only, and tiles nothing without it): at least one tile, and few
// enough tiles that a picture's image tokens stay within kMaxPictureTokens
// and its grid within kMaxGridSide a side (max_picture_frames: a square
// grid and the overview).
void read_longest_edge(const KeyReader& keys, const ArchSpec& spec, HParams& hp) {
  const char* key = "preproc_image_size";
  if (spec.tiling == VisionTiling::None || !keys.find(key)) return;
  VisionParams& v = hp.vision;
  v.longest_edge = keys.count(key, v.image_size, kMaxImageSize);
  const int64_t frames = max_picture_frames(hp);
  if (frames > kMaxGridSide * kMaxGridSide + 1) {
    refuse("'" + keys.prefix + key + "' " + std::to_string(v.longest_edge) + " cuts a picture into up to " +
           std::to_string(frames - 1) + " tiles of " + std::to_string(v.image_size) + " pixels; peak takes at most " +
           std::to_string(kMaxGridSide) + " x " + std::to_string(kMaxGridSide));
  }
  if (frames * v.n_image_tokens() > kMaxPictureTokens) {
    refuse("'" + keys.prefix + key + "' " + std::to_string(v.longest_edge) + " cuts a picture into up to " +
           std::to_string(frames) + " frames of " + std::to_string(v.n_image_tokens()) +
           " tokens; peak takes at most " + std::to_string(kMaxPictureTokens) + " image tokens a picture");
  }
}

// Qwen2.5-VL's processor limits (HF's smart_resize): a picture is resized to
// between min_pixels and max_pixels, multiples of f = patch x merge a side.
// llama.cpp's converter writes neither key; without them, the defaults of HF's
// Qwen2VLImageProcessor class, 4 f^2 (56 x 56) and 1280 f^2 (1280 image
// tokens: 28 x 28 x 1280 pixels). (The released preprocessor_config.json says
// 12845056; llama.cpp's mtmd takes 8 to 4096 tokens.) Every picture's tokens
// must stay within kMaxPictureTokens.
void read_smart_resize(const KeyReader& keys, HParams& hp) {
  VisionParams& v = hp.vision;
  const int64_t f = v.patch_size * v.merge, token = f * f;
  v.max_pixels = keys.count_or("image_max_pixels", 1280 * token, token, kMaxPictureTokens * token);
  v.min_pixels = keys.count_or("image_min_pixels", std::min(4 * token, v.max_pixels), 1, v.max_pixels);
  // The largest picture's patches (the context the tower's attention spans);
  // clip.vision.image_size is read but unused (pictures keep their own size).
  hp.n_ctx_train = v.max_pixels / token * v.merge * v.merge;
}

// Qwen2.5-VL's window attention (llama.cpp's clip.cpp: n_wa_pattern required
// for qwen2.5vl_merger, windows of 112 pixels): layer il slides (attends
// within its window) unless (il + 1) % n_wa_pattern == 0. The encoders'
// builder reads a sliding layer's key ranges, so sliding_window is set to a
// whole window's patches; the windows themselves are model/vision.h's.
void read_window_attention(const KeyReader& keys, HParams& hp) {
  VisionParams& v = hp.vision;
  v.wa_pattern = keys.count("n_wa_pattern", 1, kMaxLayers);
  const int64_t f = v.patch_size * v.merge;
  const int64_t window = keys.count_or("window_size", 112, 1, kMaxImageSize);
  if (window % f != 0) {
    refuse("'" + keys.prefix + "window_size' " + std::to_string(window) + " is not a multiple of " + std::to_string(f) +
           " pixels (patch_size x spatial_merge_size)");
  }
  v.window_tokens = window / f;
  hp.sliding_window = v.window_tokens * v.window_tokens * v.merge * v.merge;
  for (int64_t il = 0; il < hp.n_layer; ++il) hp.layers[static_cast<size_t>(il)].sliding = (il + 1) % v.wa_pattern != 0;
}

// A processor's per-channel constant: three finite floats (positive ones for a divisor).
void read_channel_constants(const KeyReader& keys, const std::string& key, float (&out)[3], bool divisor) {
  const auto v = keys.find(key);
  if (!v) refuse("projector metadata lacks '" + keys.prefix + key + "'");
  if (v->type() != gguf::ValueType::Array || v->array().size() != 3 ||
      v->array().elem_type() != gguf::ValueType::Float32) {
    refuse("'" + keys.prefix + key + "' must hold 3 floats, one per colour channel");
  }
  for (uint64_t c = 0; c < 3; ++c) {
    const float f = v->array().at<float>(c);
    if (!std::isfinite(f) || (divisor && !(f > 0.0f))) {
      refuse("'" + keys.prefix + key + "' holds " + std::to_string(f) + "; it must be " +
             (divisor ? "positive and finite" : "finite"));
    }
    out[c] = f;
  }
}

}  // namespace

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::None: return "none";
    case Pooling::Mean: return "mean";
    case Pooling::Cls: return "cls";
    case Pooling::Last: return "last";
    case Pooling::Rank: return "rank";
  }
  return "?";
}

HParams read_hparams(const gguf::GgufFile& file) {
  const auto arch_value = file.find("general.architecture");
  if (!arch_value) refuse("model metadata lacks 'general.architecture'");
  const ArchSpec* spec = find_arch(arch_value->str());
  if (!spec && arch_value->str() == "clip") {
    refuse(
        "this is a vision projector (an mmproj file, 'clip'), not a language model: give it beside its model, "
        "as --mmproj");
  }
  if (!spec) {
    unsupported("unsupported architecture '" + gguf::printable(arch_value->str()) + "' (peak runs " +
                supported_arch_names() + ")");
  }
  HParams hp;
  const KeyReader keys{file, std::string(spec->name) + "."};
  hp.n_ctx_train = keys.count("context_length", 1, kMaxContext);
  read_transformer(file, keys, *spec, "blk.", hp);
  read_encoder_keys(file, keys, *spec, hp);

  // The vocabulary size is the token list's length (cross-checked against the
  // embedding matrix when the weights are bound).
  if (const auto tokens = file.find("tokenizer.ggml.tokens")) {
    hp.n_vocab = static_cast<int64_t>(tokens->array().size());
  } else {
    hp.n_vocab = keys.count_or("vocab_size", 0, 0, kMaxContext);
  }
  if (hp.n_vocab <= 0) refuse("model has no vocabulary (tokenizer.ggml.tokens)");
  if (hp.n_vocab > INT32_MAX)
    refuse("the vocabulary has " + std::to_string(hp.n_vocab) + " tokens; token ids are 32-bit");
  return hp;
}

HParams read_projector_hparams(const gguf::GgufFile& file) {
  const auto arch_value = file.find("general.architecture");
  if (!arch_value || arch_value->str() != "clip") {
    refuse("not a vision projector: general.architecture is '" +
           (arch_value ? gguf::printable(arch_value->str()) : std::string()) + "', not 'clip'");
  }
  const auto has_vision = file.find("clip.has_vision_encoder");
  if (has_vision && !has_vision->boolean()) refuse("the projector has no vision encoder (clip.has_vision_encoder)");
  const auto type = file.find("clip.projector_type");
  if (!type) refuse("projector metadata lacks 'clip.projector_type'");
  const ArchSpec* spec = find_projector(type->str());
  if (!spec) {
    unsupported("unsupported projector type '" + gguf::printable(type->str()) + "' (peak runs " +
                supported_projector_types() + ")");
  }
  HParams hp;
  hp.arch = spec->arch;  // read_longest_edge tiles as the row does
  const KeyReader keys{file, "clip.vision."};
  VisionParams& v = hp.vision;
  v.image_size = keys.count("image_size", 1, kMaxImageSize);
  v.patch_size = keys.count("patch_size", 1, v.image_size);
  if (v.image_size % v.patch_size != 0) {
    refuse("'clip.vision.image_size' " + std::to_string(v.image_size) +
           " is not a multiple of 'clip.vision.patch_size' " + std::to_string(v.patch_size));
  }
  const bool smart_resize = spec->tiling == VisionTiling::SmartResize;
  v.merge = smart_resize ? keys.count_or("spatial_merge_size", spec->default_merge, 1, 64)
                         : keys.count_or("projector.scale_factor", spec->default_merge, 1, v.patches_per_side());
  if (!smart_resize && v.patches_per_side() % v.merge != 0) {
    refuse("the image's " + std::to_string(v.patches_per_side()) + " patches a side cannot be merged " +
           std::to_string(v.merge) + " by " + std::to_string(v.merge) + " ('clip.vision.projector.scale_factor')");
  }
  v.n_embd_out = keys.count("projection_dim", 1, kMaxWidth);
  read_longest_edge(keys, *spec, hp);
  read_channel_constants(keys, "image_mean", v.image_mean, false);
  read_channel_constants(keys, "image_std", v.image_std, true);
  hp.n_ctx_train = v.n_patches();
  if (smart_resize) read_smart_resize(keys, hp);
  read_transformer(file, keys, *spec, "v.blk.", hp);
  hp.causal_attention = false;
  if (spec->norm == NormKind::Rms) {
    // clip files give one epsilon for either kind of norm.
    if (!keys.find("attention.layer_norm_epsilon"))
      refuse("projector metadata lacks '" + keys.prefix + "attention.layer_norm_epsilon'");
    hp.rms_eps = keys.positive_real_or("attention.layer_norm_epsilon", 0.0);
  }
  if (hp.rope.mode == core::RopeMode::Vision && hp.rope.n_dims % 4 != 0) {
    refuse("the vision tower's head size " + std::to_string(hp.head_dim) +
           " is not a multiple of 4, which its 2D rotary positions need");
  }
  if (spec->window_attention) read_window_attention(keys, hp);
  return hp;
}

namespace {

// The transformer's shape, norms, rotation and the row's rules, from the keys
// after `keys.prefix`, with its blocks' tensors named "<block_prefix>N.*":
// what language models and vision towers share. hp.n_ctx_train is set.
void read_transformer(const gguf::GgufFile& file, const KeyReader& keys, const ArchSpec& spec,
                      std::string_view block_prefix, HParams& hp) {
  hp.arch = spec.arch;
  // Every count is checked before anything is sized or multiplied by it, and
  // each refusal names its key.
  hp.n_embd = keys.count("embedding_length", 1, kMaxWidth);
  // Per-layer tables are sized by the block count (the deepest released models
  // have under 200 layers), so it must not exceed the blocks whose tensors the
  // file holds. A file without any tensor (a vocabulary) is refused for its
  // first missing tensor when the weights are bound.
  hp.n_layer = keys.count("block_count", 1, kMaxLayers);
  const int64_t blocks = blocks_in_file(file, block_prefix);
  if (file.n_tensors() > 0 && hp.n_layer > blocks) {
    refuse("'" + keys.prefix + "block_count' is " + std::to_string(hp.n_layer) + " but the file holds tensors of " +
           std::to_string(blocks) + " blocks");
  }
  hp.n_ff = keys.count("feed_forward_length", 1, kMaxWidth);
  hp.n_head = keys.count("attention.head_count", 1, kMaxWidth);
  hp.n_head_kv = keys.count_or("attention.head_count_kv", hp.n_head, 1, kMaxWidth);
  if (hp.n_head % hp.n_head_kv != 0) {
    refuse("'" + keys.prefix + "attention.head_count' " + std::to_string(hp.n_head) +
           " is not a multiple of 'attention.head_count_kv' " + std::to_string(hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0 && !keys.find("attention.key_length")) {
    refuse("'" + keys.prefix + "embedding_length' is not a multiple of 'attention.head_count' and '" + keys.prefix +
           "attention.key_length' is missing");
  }
  hp.head_dim = keys.count_or("attention.key_length", hp.n_embd / hp.n_head, 1, kMaxWidth);
  if (hp.head_dim % 2 != 0) refuse("'" + keys.prefix + "attention.key_length' " + std::to_string(hp.head_dim) + " must be even");
  const int64_t value_dim = keys.count_or("attention.value_length", hp.head_dim, 1, kMaxWidth);
  if (value_dim != hp.head_dim) unsupported("attention.value_length differs from key_length, which peak does not support");
  if (spec.norm == NormKind::Layer) {
    if (!keys.find("attention.layer_norm_epsilon"))
      refuse("model metadata lacks '" + keys.prefix + "attention.layer_norm_epsilon'");
    hp.layer_norm_eps = keys.positive_real_or("attention.layer_norm_epsilon", 0.0);
  } else {
    hp.rms_eps = keys.positive_real_or("attention.layer_norm_rms_epsilon", 1e-5);
  }
  read_rope(keys, spec, hp);
  hp.layers.assign(static_cast<size_t>(hp.n_layer), LayerAttention{false, !spec.absolute_positions, hp.rope});
  read_arch_rules(keys, spec, hp);
}

}  // namespace
}  // namespace peak::model
