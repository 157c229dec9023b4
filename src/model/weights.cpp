#include "model/weights.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/kernels.h"
#include "model/model_error.h"
#include "model/tensor_check.h"
#include "model/tensor_manifest.h"

namespace peak::model {

using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::TypeKernels;

namespace {

std::string shape_text(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const gguf::GgufFile& file, const HParams& hp, core::TensorArena& arena, bool check_values)
      : file_(file), hp_(hp), arena_(arena), check_values_(check_values) {}

  // The tensor, shape- and type-checked, or null when the file lacks it and it is not required.
  Tensor* bind(const ManifestTensor& t, bool required) {
    Tensor* bound = find(t);
    if (!bound && required) throw InvalidModel("model lacks tensor '" + t.name + "' (" + hp_.spec().name + ")");
    if (bound && t.role == TensorRole::FrequencyFactors) check_frequency_factors(t.name, *bound);
    return bound;
  }

 private:
  Tensor* find(const ManifestTensor& t) {
    const gguf::TensorInfo* info = file_.find_tensor(t.name);
    if (!info) return nullptr;
    const int64_t expected[core::kMaxDims] = {t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
    for (int d = 0; d < core::kMaxDims; ++d) {
      if (info->ne[d] != expected[d]) {
        throw InvalidModel("tensor '" + t.name + "' has shape " + shape_text(info->ne, info->n_dims) + ", expected " +
                           shape_text(expected, t.n_dims));
      }
    }
    const TypeKernels& k = kernels_for(info->type);
    if (!k.to_float || (t.role == TensorRole::Matrix && !k.vec_dot)) {
      throw UnsupportedModel("tensor '" + t.name + "' has type " + ggml_type_name(static_cast<uint32_t>(info->type)) +
                             ", which peak cannot compute with");
    }
    // Vectors (norm weights, biases) are small enough to read at every load.
    if (check_values_ && t.role != TensorRole::Matrix) require_finite(*info);
    Tensor* bound = arena_.new_tensor(info->type, expected);
    bound->data = const_cast<uint8_t*>(info->data);  // weights are read-only; the mapping is PROT_READ
    bound->set_name("%s", t.name.c_str());
    return bound;
  }

  // Per-pair rope frequency divisors: F32, each positive and finite (a zero
  // would turn every angle into infinity).
  void check_frequency_factors(const std::string& name, const Tensor& t) const {
    if (t.type != GgmlType::F32) throw InvalidModel("tensor '" + name + "' must be F32");
    if (!check_values_) return;
    const auto* factors = static_cast<const float*>(t.data);
    for (int64_t i = 0; i < t.ne[0]; ++i) {
      if (!(factors[i] > 0.0f) || !std::isfinite(factors[i])) {
        throw InvalidModel("tensor '" + name + "' holds " + std::to_string(factors[i]) + " at " + std::to_string(i) +
                           "; frequency factors must be positive");
      }
    }
  }

  const gguf::GgufFile& file_;
  const HParams& hp_;
  core::TensorArena& arena_;
  bool check_values_;
};

}  // namespace

ModelWeights bind_weights(const gguf::GgufFile& file, const HParams& hp, bool check_values) {
  ModelWeights w;
  w.descriptors = std::make_unique<core::TensorArena>(file.n_tensors() + 1);
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  Binder b(file, hp, *w.descriptors, check_values);
  for (const ManifestTensor& t : tensor_manifest(hp)) {
    if (t.layer < 0) {
      w.*t.model_slot = b.bind(t, t.presence == Presence::Required);
      continue;
    }
    LayerWeights& l = w.layers[static_cast<size_t>(t.layer)];
    // A layer with a fused QKV matrix needs no separate ones (and ignores them).
    if (t.presence == Presence::SeparateQkv && l.wqkv) continue;
    l.*t.layer_slot = b.bind(t, t.presence == Presence::Required || t.presence == Presence::SeparateQkv);
  }
  w.tied_output = w.output == nullptr && !hp.spec().encoder;  // an encoder has no output head
  if (w.tied_output) w.output = w.token_embd;
  if ((w.rope_factors_long == nullptr) != (w.rope_factors_short == nullptr)) {
    throw InvalidModel("LongRoPE needs both 'rope_factors_long.weight' and 'rope_factors_short.weight'");
  }
  return w;
}

Tensor* rope_factors_for_context(const ModelWeights& w, const HParams& hp, int64_t n_ctx) {
  if (w.rope_factors_long != nullptr) {
    return n_ctx > hp.rope_original_context ? w.rope_factors_long : w.rope_factors_short;
  }
  return w.rope_freqs;
}

}  // namespace peak::model
