#include "model/control_vector.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "gguf/gguf_reader.h"
#include "model/adapter_file.h"
#include "model/model_error.h"
#include "model/tensor_check.h"

namespace peak::model {

using kernels::ggml_type_name;
using kernels::GgmlType;

std::shared_ptr<const ControlVector> ControlVector::load(const Model& base, const std::string& path) {
  const std::unique_ptr<gguf::GgufFile> file = gguf::GgufFile::open(path);
  const gguf::GgufFile& f = *file;
  require_string_key(f, "general.architecture", "controlvector", "is not a control vector");
  require_architecture(f, "controlvector.model_hint", base, /*optional=*/true);

  const HParams& hp = base.hparams();
  std::shared_ptr<ControlVector> cv(new ControlVector());
  cv->base_ = &base;
  cv->n_embd_ = hp.n_embd;
  cv->directions_.assign(static_cast<size_t>(hp.n_layer * hp.n_embd), 0.0f);
  cv->has_.assign(static_cast<size_t>(hp.n_layer), false);
  constexpr std::string_view kPrefix = "direction.";
  for (size_t i = 0; i < f.n_tensors(); ++i) {
    const gguf::TensorInfo& t = f.tensor(i);
    const std::string name(t.name);
    const std::optional<int64_t> layer =
        t.name.substr(0, kPrefix.size()) == kPrefix ? parse_layer_index(t.name.substr(kPrefix.size())) : std::nullopt;
    if (!layer) throw InvalidModel("control vector tensor '" + name + "' is not named 'direction.N'");
    if (*layer == 0 || *layer >= hp.n_layer) {
      throw InvalidModel("control vector tensor '" + name + "': directions go from layer 1 to " +
                         std::to_string(hp.n_layer - 1) + " of this " + std::to_string(hp.n_layer) + "-layer model");
    }
    if (t.type != GgmlType::F32 || t.n_dims != 1 || t.ne[0] != hp.n_embd) {
      throw InvalidModel("control vector tensor '" + name + "' must be F32 of " + std::to_string(hp.n_embd) +
                         " elements (the model's n_embd); it is " + ggml_type_name(static_cast<uint32_t>(t.type)) +
                         " of " + std::to_string(t.n_elements()) + " in " + std::to_string(t.n_dims) + " dimensions");
    }
    require_finite(t);
    float* dst = &cv->directions_[static_cast<size_t>(*layer * hp.n_embd)];
    for (int64_t j = 0; j < hp.n_embd; ++j) {
      float v;
      std::memcpy(&v, t.data + j * 4, sizeof v);
      dst[j] = v;
    }
    cv->has_[static_cast<size_t>(*layer)] = true;  // tensor names are unique, so once per layer
    cv->first_layer_ = cv->n_directions_ == 0 ? *layer : std::min(cv->first_layer_, *layer);
    cv->last_layer_ = std::max(cv->last_layer_, *layer);
    ++cv->n_directions_;
  }
  if (cv->n_directions_ == 0) throw InvalidModel("'" + path + "' holds no direction tensors");
  return cv;
}

}  // namespace peak::model
