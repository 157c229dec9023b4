// PNG (ISO/IEC 15948, the W3C PNG specification): every colour type and bit depth,
// palettes, tRNS transparency, Adam7 interlacing; CRCs checked; the zlib stream
// inflated by peak's own inflate (image/inflate.h).
#pragma once

#include "image/image.h"

namespace peak::image {

Image decode_png(const uint8_t* data, size_t size, const DecodeLimits& limits = {});

}  // namespace peak::image
