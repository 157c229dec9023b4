// Decoded pictures: the pixels of a PNG or JPEG file, read with nothing but the
// standard library. Files are untrusted input (a user's photo, a data URL sent to
// `peak serve`): every size, offset and length is checked before use, the work and
// memory are bounded by DecodeLimits, and anything the decoders cannot read is
// refused with an ImageError naming the format and why ("PNG: bad CRC in chunk
// IHDR", "JPEG: arithmetic coding is not supported").
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace peak::image {

class ImageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 8 bits per sample, rows top to bottom, no padding between rows: RGB
// (channels 3) or RGBA (channels 4, straight alpha, for files that carry
// transparency: grey+alpha, RGBA, or a tRNS chunk). Grey files come out as RGB
// with r = g = b; 16-bit samples keep their high byte.
struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t channels = 3;
  std::vector<uint8_t> pixels;  // (height, width, channels)
};

struct DecodeLimits {
  uint32_t max_dimension = 16384;     // width and height each
  uint64_t max_pixels = 64ull << 20;  // width * height: 256 MiB of RGBA at most
};

enum class Format { Unknown, Png, Jpeg };

// The format a file's first bytes announce (PNG's 8-byte signature, JPEG's SOI
// marker followed by a marker), or Unknown.
Format sniff(const uint8_t* data, size_t size);

// The picture in a PNG or JPEG file, chosen by sniff(). Throws ImageError.
Image decode(const uint8_t* data, size_t size, const DecodeLimits& limits = {});

// For the decoders, which check a file's header before allocating anything.
// Throws ImageError ("PNG: 70000 x 70000 pixels exceeds the limit of 16384
// pixels a side") when a picture of width x height is past `limits`.
void check_limits(const char* format, uint32_t width, uint32_t height, const DecodeLimits& limits);
// `bytes` as a size_t, or ImageError ("JPEG: the image does not fit in memory")
// where the address space cannot hold a buffer that large (32-bit machines
// with raised limits).
size_t buffer_size(const char* format, uint64_t bytes);

}  // namespace peak::image
