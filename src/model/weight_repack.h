// Weight matrices the kernels read faster in their own layout (kernels.h,
// TypeKernels::repack; today Q4_0 on the AVX-512 path, whose decode GEMVs
// otherwise spend most of their time transposing, and Q4_0 and Q8_0 on every
// arm64 path, whose 128-bit kernels then multiply 4 rows per instruction).
// Only matrices that nothing but mul_mat reads are repacked: the layer
// projections and a separate output matrix, never the token embedding
// (get_rows reads its rows).
//
// Repacked bytes live in memory the model owns; the file pages they came from
// are released as each tensor is done, so a mapped model's resident size stays
// about the file size. A file read into memory or locked in RAM keeps the
// stored layout (repacking it would hold both copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "core/tensor.h"
#include "gguf/gguf_reader.h"
#include "model/weights.h"

namespace peak::model {

class WeightRepacker {
 public:
  // Chooses the tensors of `w` to repack and allocates room for them.
  WeightRepacker(const ModelWeights& w, const gguf::GgufFile& file);

  // When `info` holds one of the chosen tensors: writes it in the repacked layout,
  // points its descriptor there and releases the file's pages. Returns whether it did.
  bool repack(const gguf::TensorInfo& info, const gguf::GgufFile& file);

  // The repacked bytes; the model keeps them as long as its descriptors.
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> take_memory() { return std::move(memory_); }

 private:
  struct Slot {
    core::Tensor* tensor;
    size_t offset;  // in memory_
  };
  std::unordered_map<const void*, Slot> slots_;  // by the tensor's data in the file
  std::unique_ptr<uint8_t, Free> memory_;
};

}  // namespace peak::model
