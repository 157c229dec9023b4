#include "model/quant_policy.h"

#include <cctype>
#include <stdexcept>

namespace peak::model {

using kernels::ggml_type_from_name;
using kernels::ggml_type_traits;
using kernels::GgmlType;

namespace {

const FileType kFileTypes[] = {
    {"F32", GgmlType::F32, 0},      {"F16", GgmlType::F16, 1},      {"BF16", GgmlType::BF16, 32},
    {"Q4_0", GgmlType::Q4_0, 2},    {"Q4_1", GgmlType::Q4_1, 3},    {"Q8_0", GgmlType::Q8_0, 7},
    {"Q5_0", GgmlType::Q5_0, 8},    {"Q5_1", GgmlType::Q5_1, 9},    {"Q2_K", GgmlType::Q2_K, 10},
    {"Q3_K_S", GgmlType::Q3_K, 11}, {"Q4_K_S", GgmlType::Q4_K, 14}, {"Q4_K_M", GgmlType::Q4_K, 15},
    {"Q5_K_S", GgmlType::Q5_K, 16}, {"Q5_K_M", GgmlType::Q5_K, 17}, {"Q6_K", GgmlType::Q6_K, 18},
    {"IQ4_NL", GgmlType::IQ4_NL, 25}, {"IQ4_XS", GgmlType::IQ4_XS, 30},
};

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every
// third layer between them.
bool use_more_bits(int64_t layer, int64_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

// "blk.12.ffn_down.weight" -> 12; -1 for tensors outside the blocks.
int64_t layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  return std::stoll(name.substr(4, name.find('.', 4) - 4));
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

std::vector<std::string> file_type_names() {
  std::vector<std::string> names;
  for (const FileType& f : kFileTypes) names.push_back(f.name);
  return names;
}

FileType parse_file_type(const std::string& name) {
  // Any case, as llama-quantize reads its type argument: "q4_k_m" is Q4_K_M.
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const FileType& f : kFileTypes) {
    if (f.name == upper) return f;
  }
  // A plain type name quantizes everything to it (the caller asks for --pure).
  GgmlType t;
  if (ggml_type_from_name(upper.c_str(), &t)) return {upper, t, 0};
  std::string known;
  for (const std::string& n : file_type_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown quantization type '" + name + "' (known: " + known + ")");
}

QuantPolicy::QuantPolicy(const FileType& type, const ModelLayout& layout, bool pure)
    : type_(type), layout_(layout), pure_(pure) {}

GgmlType QuantPolicy::file_base_or_fallback(GgmlType wanted, int64_t row_length) const {
  auto fits = [row_length](GgmlType t) {
    return row_length % ggml_type_traits(static_cast<uint32_t>(t))->block_elems == 0;
  };
  if (fits(wanted)) return wanted;
  // Rows that are not whole 256-blocks: llama.cpp's 32-block substitutes, and
  // F16 when even those do not fit.
  GgmlType substitute = GgmlType::F16;
  switch (wanted) {
    case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::IQ4_XS: substitute = GgmlType::IQ4_NL; break;
    case GgmlType::Q4_K: substitute = GgmlType::Q5_0; break;
    case GgmlType::Q5_K: substitute = GgmlType::Q5_1; break;
    case GgmlType::Q6_K: substitute = GgmlType::Q8_0; break;
    default: break;
  }
  return fits(substitute) ? substitute : GgmlType::F16;
}

bool QuantPolicy::stays_float(const std::string& name) {
  return name == "position_embd.weight" || name == "v.position_embd.weight" || name == "token_types.weight";
}

GgmlType QuantPolicy::type_for(const std::string& name, uint32_t n_dims, int64_t row_length) const {
  if (n_dims < 2 || stays_float(name)) return GgmlType::F32;  // norms, biases, BERT's embeddings of place and type
  const GgmlType base = type_.base;
  // An image encoder's patch kernel (rows of one patch side) and projector
  // matrix (Gemma 3's transposed at load): 16-bit floats, as llama.cpp's
  // projector files keep them.
  if (name == "v.patch_embd.weight" || name == "mm.input_projection.weight" || name == "mm.model.fc.weight") {
    return base == GgmlType::F32 ? GgmlType::F32 : GgmlType::F16;
  }
  if (pure_ || base == GgmlType::F32 || base == GgmlType::F16 || base == GgmlType::BF16) {
    return file_base_or_fallback(base, row_length);
  }
  const std::string& ft = type_.name;
  const bool gqa4 = layout_.n_head_kv > 0 && layout_.n_head / layout_.n_head_kv >= 4;
  GgmlType t = base;
  const bool is_output = name == "output.weight" || (!layout_.has_output && name == "token_embd.weight");
  const int64_t layer = layer_of(name);
  if (is_output) {
    if (base != GgmlType::Q8_0) t = row_length % 256 == 0 ? GgmlType::Q6_K : GgmlType::Q8_0;
  } else if (ends_with(name, "attn_v.weight")) {
    if (ft == "Q2_K") {
      t = gqa4 ? GgmlType::Q4_K : GgmlType::Q3_K;
    } else if ((ft == "IQ4_NL" || ft == "IQ4_XS") && gqa4) {
      t = GgmlType::Q5_K;
    } else if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(layer, layout_.n_layer)) {
      t = GgmlType::Q6_K;
    } else if (ft == "Q4_K_S" && layer < 4) {
      t = GgmlType::Q5_K;
    }
  } else if (ends_with(name, "ffn_down.weight")) {
    if (ft == "Q2_K") {
      t = GgmlType::Q3_K;
    } else if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(layer, layout_.n_layer)) {
      t = GgmlType::Q6_K;
    } else if (ft == "Q4_K_S" && layer < layout_.n_layer / 8) {
      t = GgmlType::Q5_K;
    }
  } else if (ends_with(name, "attn_output.weight")) {
    if (ft == "Q2_K") t = GgmlType::Q3_K;
  } else if (ends_with(name, "attn_qkv.weight")) {
    // Phi-3's fused Q, K and V matrix: a step up in the K-quant mixes.
    if (ft == "Q4_K_M") {
      t = GgmlType::Q5_K;
    } else if (ft == "Q5_K_M") {
      t = GgmlType::Q6_K;
    }
  }
  return file_base_or_fallback(t, row_length);
}

}  // namespace peak::model
