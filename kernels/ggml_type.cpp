#include "kernels/ggml_type.h"

#include <cstring>
#include <limits>

namespace peak::kernels {
namespace {

// Indexed by type id. Block sizes are those of the GGUF specification; the
// quantized block layouts themselves live in kernels/blocks.h.
constexpr GgmlTypeTraits kTraits[kGgmlTypeIdCount] = {
    /* 0 */ {"F32", 1, 4, false},
    /* 1 */ {"F16", 1, 2, false},
    /* 2 */ {"Q4_0", 32, 18, false},
    /* 3 */ {"Q4_1", 32, 20, false},
    /* 4 */ {"Q4_2", 32, 0, true},
    /* 5 */ {"Q4_3", 32, 0, true},
    /* 6 */ {"Q5_0", 32, 22, false},
    /* 7 */ {"Q5_1", 32, 24, false},
    /* 8 */ {"Q8_0", 32, 34, false},
    /* 9 */ {"Q8_1", 32, 36, false},
    /* 10 */ {"Q2_K", 256, 84, false},
    /* 11 */ {"Q3_K", 256, 110, false},
    /* 12 */ {"Q4_K", 256, 144, false},
    /* 13 */ {"Q5_K", 256, 176, false},
    /* 14 */ {"Q6_K", 256, 210, false},
    /* 15 */ {"Q8_K", 256, 292, false},
    /* 16 */ {"IQ2_XXS", 256, 66, false},
    /* 17 */ {"IQ2_XS", 256, 74, false},
    /* 18 */ {"IQ3_XXS", 256, 98, false},
    /* 19 */ {"IQ1_S", 256, 50, false},
    /* 20 */ {"IQ4_NL", 32, 18, false},
    /* 21 */ {"IQ3_S", 256, 110, false},
    /* 22 */ {"IQ2_S", 256, 82, false},
    /* 23 */ {"IQ4_XS", 256, 136, false},
    /* 24 */ {"I8", 1, 1, false},
    /* 25 */ {"I16", 1, 2, false},
    /* 26 */ {"I32", 1, 4, false},
    /* 27 */ {"I64", 1, 8, false},
    /* 28 */ {"F64", 1, 8, false},
    /* 29 */ {"IQ1_M", 256, 56, false},
    /* 30 */ {"BF16", 1, 2, false},
    /* 31 */ {"Q4_0_4_4", 32, 0, true},
    /* 32 */ {"Q4_0_4_8", 32, 0, true},
    /* 33 */ {"Q4_0_8_8", 32, 0, true},
    /* 34 */ {"TQ1_0", 256, 54, false},
    /* 35 */ {"TQ2_0", 256, 66, false},
    /* 36 */ {"IQ4_NL_4_4", 32, 0, true},
    /* 37 */ {"IQ4_NL_4_8", 32, 0, true},
    /* 38 */ {"IQ4_NL_8_8", 32, 0, true},
    /* 39 */ {"MXFP4", 32, 17, false},
};

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t type_id) {
  return type_id < kGgmlTypeIdCount ? &kTraits[type_id] : nullptr;
}

const char* ggml_type_name(uint32_t type_id) {
  const GgmlTypeTraits* t = ggml_type_traits(type_id);
  return t ? t->name : "unknown";
}

bool ggml_type_is_storable(uint32_t type_id) {
  const GgmlTypeTraits* t = ggml_type_traits(type_id);
  return t && !t->removed;
}

uint64_t ggml_row_bytes(uint32_t type_id, uint64_t n_elems) {
  if (!ggml_type_is_storable(type_id)) return 0;
  const GgmlTypeTraits& t = kTraits[type_id];
  if (n_elems % t.block_elems != 0) return 0;
  const uint64_t blocks = n_elems / t.block_elems;
  if (blocks > std::numeric_limits<uint64_t>::max() / t.block_bytes) return 0;  // the byte count would wrap
  return blocks * t.block_bytes;
}

bool ggml_type_from_name(const char* name, GgmlType* out) {
  if (!name) return false;
  for (uint32_t id = 0; id < kGgmlTypeIdCount; ++id) {
    if (!kTraits[id].removed && std::strcmp(kTraits[id].name, name) == 0) {
      *out = static_cast<GgmlType>(id);
      return true;
    }
  }
  return false;
}

}  // namespace peak::kernels
