// libFuzzer target: any byte string, read by the PNG and JPEG decoders of
// src/image, must decode to a picture of the size its header gave or be refused
// with an ImageError naming the format. Limits smaller than the defaults keep
// each input's memory and time small (a 1024 x 1024 picture at most); refusing
// past them is checked by the unit tests. Anything else (a crash, a hang, a
// sanitizer report, another exception, a picture of the wrong size) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = peak::image;
  image::DecodeLimits limits;
  limits.max_dimension = 4096;
  limits.max_pixels = 1u << 20;
  try {
    const image::Image picture = image::decode(data, size, limits);
    if (picture.width == 0 || picture.height == 0 || picture.width > limits.max_dimension ||
        picture.height > limits.max_dimension)
      std::abort();
    if (picture.channels != 3 && picture.channels != 4) std::abort();
    if (picture.pixels.size() != size_t{picture.width} * picture.height * picture.channels) std::abort();
  } catch (const image::ImageError& e) {
    const std::string message = e.what();
    if (message.rfind("PNG: ", 0) != 0 && message.rfind("JPEG: ", 0) != 0 && message.rfind("image: ", 0) != 0)
      std::abort();
  }
  return 0;
}
