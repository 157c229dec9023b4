// The EXIF orientation of a photo: how the camera was held, so that the decoded
// pixels can be turned upright.
#pragma once

#include <cstddef>
#include <cstdint>

#include "image/image.h"

namespace peak::image::jpeg {

// The Orientation (TIFF tag 0x0112, 1..8) in IFD0 of an APP1 payload that
// starts "Exif\0\0", in either TIFF byte order; 0 when the payload has none,
// is malformed, or gives another value.
int exif_orientation(const uint8_t* payload, size_t size);

// Turns `image` from EXIF orientation 2..8 to upright (orientation 1); other
// values leave it as it is.
void apply_orientation(Image& image, int orientation);

}  // namespace peak::image::jpeg
