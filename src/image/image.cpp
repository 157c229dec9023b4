#include "image/image.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "image/jpeg.h"
#include "image/png.h"

namespace peak::image {

Format sniff(const uint8_t* data, size_t size) {
  static const uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (data == nullptr) return Format::Unknown;
  if (size >= sizeof kPngSignature && std::memcmp(data, kPngSignature, sizeof kPngSignature) == 0) return Format::Png;
  if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) return Format::Jpeg;
  return Format::Unknown;
}

Image decode(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  switch (sniff(data, size)) {
    case Format::Png: return decode_png(data, size, limits);
    case Format::Jpeg: return decode_jpeg(data, size, limits);
    case Format::Unknown: break;
  }
  throw ImageError(size == 0 ? "image: the file is empty" : "image: not a PNG or JPEG file (unknown signature)");
}

void check_limits(const char* format, uint32_t width, uint32_t height, const DecodeLimits& limits) {
  const std::string dimensions = std::to_string(width) + " x " + std::to_string(height) + " pixels";
  if (width > limits.max_dimension || height > limits.max_dimension) {
    throw ImageError(std::string(format) + ": " + dimensions + " exceeds the limit of " +
                     std::to_string(limits.max_dimension) + " pixels a side");
  }
  if (uint64_t{width} * height > limits.max_pixels) {
    throw ImageError(std::string(format) + ": " + dimensions + " exceeds the limit of " +
                     std::to_string(limits.max_pixels) + " pixels");
  }
}

size_t buffer_size(const char* format, uint64_t bytes) {
  if (bytes > SIZE_MAX / 2) throw ImageError(std::string(format) + ": the image does not fit in memory");
  return static_cast<size_t>(bytes);
}

}  // namespace peak::image
