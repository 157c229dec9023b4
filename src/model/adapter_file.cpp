#include "model/adapter_file.h"

#include "model/model_error.h"

namespace peak::model {

void require_string_key(const gguf::GgufFile& file, const char* key, const char* expected, const char* what) {
  const auto v = file.find(key);
  if (v && v->type() == gguf::ValueType::String && v->str() == expected) return;
  const std::string found = !v ? "missing"
                                : v->type() == gguf::ValueType::String ? "'" + std::string(v->str()) + "'"
                                                                        : "not a string";
  throw InvalidModel(std::string(key) + " is " + found + ", expected '" + expected + "': the file " + what);
}

void require_architecture(const gguf::GgufFile& file, const char* hint_key, const Model& base, bool optional) {
  const std::string model_arch = arch_name(base.hparams().arch);
  const auto v = file.find(hint_key);
  if (!v && optional) return;
  if (v && v->type() == gguf::ValueType::String && v->str() == model_arch) return;
  const std::string found = !v ? "missing"
                                : v->type() == gguf::ValueType::String ? "'" + std::string(v->str()) + "'"
                                                                        : "not a string";
  throw InvalidModel(std::string(hint_key) + " is " + found + ", but the model's architecture is '" + model_arch +
                     "': the file is for another model");
}

std::optional<int64_t> parse_layer_index(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace peak::model
