// JPEG (ITU-T T.81 with JFIF): baseline and progressive Huffman-coded 8-bit files,
// grey or YCbCr with any sampling factors, restart intervals; the EXIF orientation
// applied, as a phone's photo is meant to be seen.
//
// "The reference" in these files is the Independent JPEG Group's decoder as
// libjpeg-turbo ships it, with its default (accurate) settings: what the vision
// models' processors decode pictures with, through PIL. Its integer IDCT,
// triangular chroma upsampling and fixed-point colour conversion are computed
// the same way here, so the pixels are the same (tests/image/test_jpeg.cpp).
#pragma once

#include "image/image.h"

namespace peak::image {

Image decode_jpeg(const uint8_t* data, size_t size, const DecodeLimits& limits = {});

}  // namespace peak::image
