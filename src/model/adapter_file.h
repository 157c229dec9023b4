// Checks that LoRA adapters and control vectors share: metadata keys that say
// what a file is, and the layer numbers in tensor names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gguf/gguf_reader.h"
#include "model/model.h"

namespace peak::model {

// Throws InvalidModel unless string key `key` of `file` is `expected`:
// "<key> is '<value>' (or: is missing), expected '<expected>': the file <what>".
void require_string_key(const gguf::GgufFile& file, const char* key, const char* expected, const char* what);

// Throws InvalidModel unless `hint_key` (general.architecture of a LoRA
// adapter; a control vector's model hint, when it has one) names `base`'s
// architecture.
void require_architecture(const gguf::GgufFile& file, const char* hint_key, const Model& base, bool optional);

// A layer number as tensor names write it: decimal digits only, no sign, no
// leading zero, at most 9 digits; nullopt otherwise.
std::optional<int64_t> parse_layer_index(std::string_view digits);

}  // namespace peak::model
