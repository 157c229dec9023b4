// Metadata value types of the GGUF format (the numbering is the file format's).
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::gguf {

enum class ValueType : uint32_t {
  UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5,
  Float32 = 6, Bool = 7, String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};

constexpr uint32_t kValueTypeCount = 13;

// "uint32", "string", ...; "unknown" for ids outside the format.
const char* value_type_name(ValueType type);
// Bytes of a fixed-size value; 0 for String and Array.
size_t value_type_size(ValueType type);

}  // namespace peak::gguf
