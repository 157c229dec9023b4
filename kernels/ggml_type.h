// Tensor element types as GGUF files number them (ggml's type ids), with the
// traits every layer needs: name, elements per block, bytes per block.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::kernels {

enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
  // 4 (Q4_2) and 5 (Q4_3) were removed from the format.
  Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20,
  IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
  IQ1_M = 29, BF16 = 30,
  // 31..33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) were removed: repacking happens at load.
  TQ1_0 = 34, TQ2_0 = 35,
  // 36..38 (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8) were removed likewise.
  MXFP4 = 39,
};

constexpr uint32_t kGgmlTypeIdCount = 40;  // ids 0..39

struct GgmlTypeTraits {
  const char* name;        // "Q4_K"; for removed ids the historic name
  uint32_t block_elems;    // elements per block (1 for plain scalar types)
  uint32_t block_bytes;    // bytes per block; 0 for removed ids
  bool removed;            // id retired from the format: files using it are refused
};

// Traits of a type id, or nullptr when the id was never assigned.
const GgmlTypeTraits* ggml_type_traits(uint32_t type_id);

// Name of a known type id, "unknown" otherwise.
const char* ggml_type_name(uint32_t type_id);

// True when the id is assigned and not removed: tensors of this type can be stored.
bool ggml_type_is_storable(uint32_t type_id);

// Bytes occupied by one row of `n_elems` elements, or 0 when `n_elems` is not a
// multiple of the block size, the type is not storable or the byte count does
// not fit 64 bits (possible from n_elems = 2^62 on: 4-byte F32 elements).
uint64_t ggml_row_bytes(uint32_t type_id, uint64_t n_elems);

// Looks a type up by its name (case-sensitive, as written above); false if unknown.
bool ggml_type_from_name(const char* name, GgmlType* out);

}  // namespace peak::kernels
