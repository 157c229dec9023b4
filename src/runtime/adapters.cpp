#include "runtime/adapters.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace peak::runtime {

using kernels::GgmlType;

namespace {

void require_finite(float v, const char* what, size_t index) {
  if (!std::isfinite(v)) {
    throw std::invalid_argument(std::string(what) + " of adapter " + std::to_string(index) + " is " +
                                std::to_string(v) + "; it must be a finite number");
  }
}

void require_same_model(const model::Model* base, const model::Model& model, size_t index) {
  if (base != &model) {
    throw std::invalid_argument("adapter " + std::to_string(index) + " was loaded for another model");
  }
}

}  // namespace

BoundAdapters::BoundAdapters(const model::Model& model, const Adapters& adapters) {
  const model::HParams& hp = model.hparams();
  for (size_t i = 0; i < adapters.loras.size(); ++i) {
    const LoraUse& use = adapters.loras[i];
    if (!use.adapter) throw std::invalid_argument("adapter " + std::to_string(i) + " is null");
    require_same_model(use.adapter->base(), model, i);
    require_finite(use.scale, "the scale", i);
    // At scale 0 an adapter adds nothing: leaving it out keeps the model's results bit for bit.
    if (use.scale != 0.0f) decoder_.loras.push_back({use.adapter.get(), use.scale});
  }
  const size_t n_loras = adapters.loras.size();
  for (size_t i = 0; i < adapters.control_vectors.size(); ++i) {
    const ControlVectorUse& use = adapters.control_vectors[i];
    if (!use.vector) throw std::invalid_argument("adapter " + std::to_string(n_loras + i) + " is null");
    require_same_model(use.vector->base(), model, n_loras + i);
    require_finite(use.strength, "the strength", n_loras + i);
  }
  const int64_t first = adapters.control_first;
  const int64_t last = std::min(adapters.control_last, hp.n_layer - 1);
  if (first < 0 || first > last) {
    throw std::invalid_argument("control vector layers " + std::to_string(adapters.control_first) + "-" +
                                std::to_string(adapters.control_last) + " are not a range of this model's layers 0-" +
                                std::to_string(hp.n_layer - 1));
  }

  // Sum strength × direction per layer of the range; a layer no vector moves gets no node.
  const auto n_embd = static_cast<size_t>(hp.n_embd);
  std::vector<bool> moved(static_cast<size_t>(hp.n_layer), false);
  for (const ControlVectorUse& use : adapters.control_vectors) {
    if (use.strength == 0.0f) continue;
    for (int64_t il = first; il <= last; ++il) {
      const float* direction = use.vector->direction(il);
      if (!direction) continue;
      if (offsets_.empty()) offsets_.assign(static_cast<size_t>(hp.n_layer) * n_embd, 0.0f);
      float* sum = &offsets_[static_cast<size_t>(il) * n_embd];
      for (size_t j = 0; j < n_embd; ++j) sum[j] += use.strength * direction[j];
      moved[static_cast<size_t>(il)] = true;
    }
  }
  if (!offsets_.empty()) {
    descriptors_ = std::make_unique<core::TensorArena>(static_cast<size_t>(hp.n_layer));
    decoder_.layer_offsets.assign(static_cast<size_t>(hp.n_layer), nullptr);
    for (int64_t il = 0; il < hp.n_layer; ++il) {
      if (!moved[static_cast<size_t>(il)]) continue;
      core::Tensor* t = descriptors_->new_tensor(GgmlType::F32, {hp.n_embd});
      t->data = &offsets_[static_cast<size_t>(il) * n_embd];
      t->set_name("control_vector.%d", static_cast<int>(il));
      decoder_.layer_offsets[static_cast<size_t>(il)] = t;
    }
  }
  active_ = !decoder_.loras.empty() || !decoder_.layer_offsets.empty();
}

bool same_adapters(const Adapters& a, const Adapters& b) {
  if (a.loras.size() != b.loras.size() || a.control_vectors.size() != b.control_vectors.size()) return false;
  for (size_t i = 0; i < a.loras.size(); ++i) {
    if (a.loras[i].adapter != b.loras[i].adapter || a.loras[i].scale != b.loras[i].scale) return false;
  }
  for (size_t i = 0; i < a.control_vectors.size(); ++i) {
    if (a.control_vectors[i].vector != b.control_vectors[i].vector ||
        a.control_vectors[i].strength != b.control_vectors[i].strength) {
      return false;
    }
  }
  return a.control_vectors.empty() || (a.control_first == b.control_first && a.control_last == b.control_last);
}

}  // namespace peak::runtime
