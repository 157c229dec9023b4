// The adapters a context runs its model with: LoRA adapters, each with its
// own scale, and control vectors, each with its own strength, added over one
// range of layers. Shared, immutable adapters (model/lora_adapter.h,
// model/control_vector.h) are held by shared ownership, so an adapter lives
// as long as some context still uses it.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/graph.h"
#include "model/control_vector.h"
#include "model/decoder.h"
#include "model/lora_adapter.h"
#include "model/model.h"

namespace peak::runtime {

struct LoraUse {
  std::shared_ptr<const model::LoraAdapter> adapter;
  float scale = 1.0f;  // times alpha / rank; 0 leaves the model as it is, bit for bit
};

struct ControlVectorUse {
  std::shared_ptr<const model::ControlVector> vector;
  float strength = 1.0f;
};

struct Adapters {
  std::vector<LoraUse> loras;
  std::vector<ControlVectorUse> control_vectors;
  // The control vectors act after layers [control_first, control_last] (0-based,
  // inclusive; llama.cpp's --control-vector-layer-range); a last layer past the
  // model's is its last.
  int64_t control_first = 0;
  int64_t control_last = std::numeric_limits<int64_t>::max();

  bool empty() const { return loras.empty() && control_vectors.empty(); }
};

// Both hold the same adapter objects at the same scales and strengths, over
// the same layers.
bool same_adapters(const Adapters& a, const Adapters& b);

// Adapters checked against one model and laid out for its forward graph: the
// decoder's view, and the control vectors' per-layer sum (strength times
// direction, summed over the vectors), computed once here.
class BoundAdapters {
 public:
  // Throws std::invalid_argument for an adapter loaded for another model, a
  // scale or strength that is not finite, or a layer range that is empty.
  BoundAdapters(const model::Model& model, const Adapters& adapters);
  BoundAdapters(const BoundAdapters&) = delete;
  BoundAdapters& operator=(const BoundAdapters&) = delete;

  // Null when nothing changes the model (no adapters, or all at scale 0).
  const model::DecoderAdapters* decoder() const { return active_ ? &decoder_ : nullptr; }

 private:
  model::DecoderAdapters decoder_;
  std::vector<float> offsets_;  // [n_layer][n_embd] where a layer has one
  std::unique_ptr<core::TensorArena> descriptors_;
  bool active_ = false;
};

}  // namespace peak::runtime
