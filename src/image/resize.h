// Resampling a picture to another size, as the vision models' own preprocessing
// does it: their processors resize 8-bit pictures with PIL, so an encoder sees
// what it was trained on only when the resampling is the same. Separable
// convolution, rows first, then columns; when shrinking, the filter widens by the
// ratio (so every source pixel counts: no aliasing); weights in fixed point with
// 22 fractional bits, the sums rounded and clamped to 0..255 after each pass.
#pragma once

#include "image/image.h"

namespace peak::image {

// The picture without its alpha channel, as the processors' convert("RGB")
// makes it (transparent pixels keep the colour stored under them).
Image to_rgb(Image picture);

enum class ResizeFilter {
  Bilinear,  // the triangle filter, support 1
  Bicubic,   // Keys' cubic convolution with a = -0.5, support 2
  Lanczos,   // sinc windowed by sinc, support 3
};

// An RGB `source` resampled to width x height (each at least 1, within
// `limits`). Throws ImageError.
Image resize(const Image& source, uint32_t width, uint32_t height, ResizeFilter filter,
             const DecodeLimits& limits = {});

}  // namespace peak::image
