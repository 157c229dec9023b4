#include "model/tensor_check.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "model/model_error.h"

namespace peak::model {

using kernels::ggml_type_traits;
using kernels::GgmlTypeTraits;
using kernels::kernels_for;
using kernels::TypeKernels;

std::optional<NonFiniteValue> first_non_finite(const gguf::TensorInfo& t) {
  const TypeKernels& k = kernels_for(t.type);
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(t.type));
  if (!k.to_float || !traits || traits->block_elems == 0) return std::nullopt;
  // Converted in chunks of whole blocks (every block size divides 256).
  constexpr int64_t kChunk = 4096;
  float values[kChunk];
  const int64_t n = t.n_elements();
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t count = std::min(kChunk, n - first);
    const uint8_t* src = t.data + static_cast<uint64_t>(first) / traits->block_elems * traits->block_bytes;
    k.to_float(src, values, count);
    for (int64_t i = 0; i < count; ++i) {
      if (!std::isfinite(values[i])) return NonFiniteValue{first + i, values[i]};
    }
  }
  return std::nullopt;
}

void require_finite(const gguf::TensorInfo& t) {
  const auto found = first_non_finite(t);
  if (!found) return;
  const std::string value = std::isnan(found->value) ? "nan" : found->value > 0 ? "inf" : "-inf";
  throw InvalidModel("tensor '" + std::string(t.name) + "' holds " + value + " at element " +
                     std::to_string(found->index) + " (row " + std::to_string(found->index / t.ne[0]) + ", column " +
                     std::to_string(found->index % t.ne[0]) + "); weights must be finite");
}

void require_all_finite(const gguf::GgufFile& file) {
  for (size_t i = 0; i < file.n_tensors(); ++i) require_finite(file.tensor(i));
}

}  // namespace peak::model
