// A control vector as llama.cpp's cvector-generator writes it: a GGUF with
// general.architecture = "controlvector", controlvector.model_hint (the
// architecture it was made on; optional) and F32 tensors "direction.N" of
// n_embd elements. Direction N is added, times a strength, to the residual
// stream after layer N (0-based), so layer 0 has none. Several vectors in use at
// once add up, each with its own strength, over one range of layers
// (runtime::Adapters).
//
// Immutable once loaded and independent of the model afterwards (it keeps its
// own copy of the directions), so contexts on any threads may share one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace peak::model {

class ControlVector {
 public:
  // Opens `path` and checks it against `base`: the keys above, tensor names
  // (N from 1 to n_layer - 1), types, shapes ([n_embd]) and finite values.
  // Throws InvalidModel naming the key or tensor at fault, gguf::GgufError or
  // io::IoError.
  static std::shared_ptr<const ControlVector> load(const Model& base, const std::string& path);

  // Layer il's direction (n_embd floats), or null when the file has none for it.
  const float* direction(int64_t il) const {
    return has_[static_cast<size_t>(il)] ? &directions_[static_cast<size_t>(il * n_embd_)] : nullptr;
  }
  const Model* base() const { return base_; }
  int64_t n_embd() const { return n_embd_; }
  int64_t n_layer() const { return static_cast<int64_t>(has_.size()); }
  // Layers with a direction, and the first and last of them.
  int64_t n_directions() const { return n_directions_; }
  int64_t first_layer() const { return first_layer_; }
  int64_t last_layer() const { return last_layer_; }

 private:
  ControlVector() = default;
  const Model* base_ = nullptr;
  int64_t n_embd_ = 0;
  std::vector<float> directions_;  // [n_layer][n_embd], zero where there is none
  std::vector<bool> has_;          // n_layer
  int64_t n_directions_ = 0;
  int64_t first_layer_ = 0;
  int64_t last_layer_ = 0;
};

}  // namespace peak::model
