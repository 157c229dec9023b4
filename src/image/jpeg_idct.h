// The inverse DCT of JPEG blocks (ITU-T T.81 A.3.3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::image::jpeg {

// Dequantizes one block of coefficients (natural order, row by row) and writes
// its inverse DCT, level-shifted by 128 and clamped to 0..255, as 8 rows of 8
// samples `stride` bytes apart.
void idct_8x8(const int16_t coefficients[64], const uint16_t quant[64], uint8_t* out, ptrdiff_t stride);

}  // namespace peak::image::jpeg
