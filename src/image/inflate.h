// zlib streams (RFC 1950) of deflate data (RFC 1951): stored, fixed and dynamic
// Huffman blocks, the header checked and the Adler-32 of the output verified.
// The output goes into a buffer the caller sizes and may not grow past it, so a
// hostile stream claims no more memory than the caller allowed, and the work is
// linear in the input plus the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace peak::image {

class InflateError : public std::runtime_error {
 public:
  enum class Kind {
    Malformed,   // not a valid zlib stream (the message says why)
    Truncated,   // the input ends before the stream does
    OutputFull,  // the stream holds more than the output buffer
  };
  InflateError(Kind error_kind, size_t bytes_produced, const std::string& what)
      : std::runtime_error(what), kind(error_kind), produced(bytes_produced) {}

  Kind kind;
  size_t produced;  // bytes written to the output before the error
};

// Inflates the zlib stream at the start of in[0, in_size) into out[0, capacity)
// and returns the number of bytes it holds (out past them may have been written
// too, as scratch). Bytes after the stream's Adler-32 are not read. A preset dictionary (FDICT) is refused: PNG forbids
// it, and a caller with no dictionary could not inflate such a stream. Throws InflateError.
size_t inflate_zlib(const uint8_t* in, size_t in_size, uint8_t* out, size_t capacity);

}  // namespace peak::image
