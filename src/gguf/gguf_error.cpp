#include "gguf/gguf_error.h"

namespace peak::gguf {

void throw_format_error(std::string_view what, std::string_view subject, uint64_t offset) {
  std::string message = "invalid GGUF: ";
  message.append(what);
  message += " (";
  if (!subject.empty()) {
    message.append(subject);
    message += ", ";
  }
  message += "at byte offset " + std::to_string(offset) + ")";
  throw GgufError(message);
}

}  // namespace peak::gguf
