// The one error type the GGUF layer throws. Its message names the problem, the
// key or tensor it concerns and the byte offset in the file where it was found.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace peak::gguf {

class GgufError : public std::runtime_error {
 public:
  explicit GgufError(const std::string& message) : std::runtime_error(message) {}
};

// A metadata value was asked for as a type it does not hold.
class GgufTypeError : public GgufError {
 public:
  using GgufError::GgufError;
};

// "what (in key 'k', at byte offset N)": `subject` is e.g. "key 'general.name'" or
// "tensor 'blk.0.attn_q.weight'", and may be empty.
[[noreturn]] void throw_format_error(std::string_view what, std::string_view subject, uint64_t offset);

}  // namespace peak::gguf
