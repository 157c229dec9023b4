// Finds values in a weight tensor that are not finite numbers (NaN, +-Inf):
// such a weight turns every activation it touches into NaN, so a file that
// holds one is broken however well-formed its metadata is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gguf/gguf_reader.h"

namespace peak::model {

struct NonFiniteValue {
  int64_t index;  // element index, row-major over ne[0] first
  float value;
};

// The first non-finite element of `t`, read through its type's to_float (so
// a quantized block whose F16 scale is Inf or NaN shows as that block's
// elements); nullopt when all are finite or no kernel can read the type.
std::optional<NonFiniteValue> first_non_finite(const gguf::TensorInfo& t);

// Throws InvalidModel when `t` holds a non-finite value: "tensor 'name' holds
// nan at element i (row r, column c); weights must be finite".
void require_finite(const gguf::TensorInfo& t);

// require_finite on every tensor of `file` in file order: the full scan that
// LoadOptions::check_tensors asks for.
void require_all_finite(const gguf::GgufFile& file);

}  // namespace peak::model
