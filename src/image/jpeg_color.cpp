#include "image/jpeg_color.h"

#include <algorithm>
#include <vector>

namespace peak::image::jpeg {
namespace {

// How a plane reaches full resolution, as the reference chooses: triangular
// ("fancy") interpolation for ratios 2x1, 1x2 and 2x2, except that a plane 1 or
// 2 samples wide is replicated horizontally; plain replication for every other
// ratio.
enum class Upsampling { None, Fancy2x1, Fancy1x2, Fancy2x2, Replicate };

Upsampling choose_upsampling(const Plane& plane) {
  const uint32_t h = plane.h_ratio, v = plane.v_ratio;
  if (h == 1 && v == 1) return Upsampling::None;
  if (h == 2 && v == 1 && plane.width > 2) return Upsampling::Fancy2x1;
  if (h == 1 && v == 2) return Upsampling::Fancy1x2;
  if (h == 2 && v == 2 && plane.width > 2) return Upsampling::Fancy2x2;
  return Upsampling::Replicate;
}

const uint8_t* plane_row(const Plane& plane, int64_t row) {
  row = std::clamp<int64_t>(row, 0, plane.height - 1);  // edge rows repeat
  return plane.samples + static_cast<size_t>(row) * plane.stride;
}

// Doubles the width of n > 2 values: samples (shift 2), or column sums of 3
// near plus 1 far sample (shift 4). Each output lies a quarter of the way from
// its value to the next one out, edges repeating; `bias_left` and `bias_right`
// round the two outputs of a value differently so that rounding errors do not
// all go one way.
template <typename Sample>
void double_width(const Sample* in, uint32_t n, int shift, int bias_left, int bias_right, uint8_t* out) {
  const auto interpolate = [&](int near, int far, int bias) {
    return static_cast<uint8_t>((3 * near + far + bias) >> shift);
  };
  out[0] = interpolate(in[0], in[0], bias_left);
  out[1] = interpolate(in[0], in[1], bias_right);
  for (uint32_t i = 1; i + 1 < n; ++i) {
    out[2 * i] = interpolate(in[i], in[i - 1], bias_left);
    out[2 * i + 1] = interpolate(in[i], in[i + 1], bias_right);
  }
  out[2 * n - 2] = interpolate(in[n - 1], in[n - 2], bias_left);
  out[2 * n - 1] = interpolate(in[n - 1], in[n - 1], bias_right);
}

// Output row y of a plane at full resolution: a row of the plane itself, or
// `buffer` (room for width + 3 samples) filled with the upsampled row.
// `sums` has room for the plane's width.
const uint8_t* upsampled_row(const Plane& plane, Upsampling how, uint32_t y, uint32_t width, uint8_t* buffer,
                             int* sums) {
  switch (how) {
    case Upsampling::None: return plane_row(plane, y);
    case Upsampling::Fancy2x1: double_width(plane_row(plane, y), plane.width, 2, 1, 2, buffer); return buffer;
    case Upsampling::Fancy1x2:
    case Upsampling::Fancy2x2: {
      // An output row lies a quarter of the way from its sample row to the
      // neighbouring one on its side: above for even rows, below for odd ones.
      const int64_t row = y / 2;
      const bool lower = y % 2 == 1;
      const uint8_t* near = plane_row(plane, row);
      const uint8_t* far = plane_row(plane, lower ? row + 1 : row - 1);
      if (how == Upsampling::Fancy1x2) {
        const int bias = lower ? 2 : 1;
        for (uint32_t x = 0; x < plane.width; ++x) buffer[x] = static_cast<uint8_t>((3 * near[x] + far[x] + bias) >> 2);
        return buffer;
      }
      for (uint32_t x = 0; x < plane.width; ++x) sums[x] = 3 * near[x] + far[x];
      double_width(sums, plane.width, 4, 8, 7, buffer);
      return buffer;
    }
    case Upsampling::Replicate: {
      const uint8_t* in = plane_row(plane, y / plane.v_ratio);
      for (uint32_t x = 0; x < width; ++x) buffer[x] = in[x / plane.h_ratio];
      return buffer;
    }
  }
  return buffer;
}

// JFIF's YCbCr to RGB in 16-bit fixed point, rounded as the reference rounds:
//   R = Y + 1.402 (Cr - 128)
//   G = Y - 0.34414 (Cb - 128) - 0.71414 (Cr - 128)
//   B = Y + 1.772 (Cb - 128)
constexpr int kScaleBits = 16;
constexpr int32_t fixed16(double x) { return static_cast<int32_t>(x * (1 << kScaleBits) + 0.5); }
constexpr int32_t kCrToR = fixed16(1.402), kCbToG = fixed16(0.34414), kCrToG = fixed16(0.71414),
                  kCbToB = fixed16(1.772);
constexpr int32_t kHalf = 1 << (kScaleBits - 1);

inline uint8_t clamp_byte(int32_t x) { return static_cast<uint8_t>(x < 0 ? 0 : x > 255 ? 255 : x); }

void ycbcr_row_to_rgb(const uint8_t* luma, const uint8_t* blue, const uint8_t* red, uint32_t width, uint8_t* rgb) {
  for (uint32_t x = 0; x < width; ++x, rgb += 3) {
    const int32_t y = luma[x], cb = blue[x] - 128, cr = red[x] - 128;
    rgb[0] = clamp_byte(y + ((kCrToR * cr + kHalf) >> kScaleBits));
    rgb[1] = clamp_byte(y + ((-kCbToG * cb - kCrToG * cr + kHalf) >> kScaleBits));
    rgb[2] = clamp_byte(y + ((kCbToB * cb + kHalf) >> kScaleBits));
  }
}

}  // namespace

void planes_to_rgb(const Plane* planes, ColorTransform transform, uint32_t width, uint32_t height, uint8_t* rgb) {
  const int count = transform == ColorTransform::Grey ? 1 : 3;
  Upsampling how[3];
  std::vector<uint8_t> buffers[3];
  std::vector<int> sums;
  for (int c = 0; c < count; ++c) {
    how[c] = choose_upsampling(planes[c]);
    if (how[c] != Upsampling::None) buffers[c].resize(size_t{width} + 3);
    if (how[c] == Upsampling::Fancy2x2) sums.resize(std::max<size_t>(sums.size(), planes[c].width));
  }
  const size_t row_bytes = size_t{width} * 3;
  for (uint32_t y = 0; y < height; ++y, rgb += row_bytes) {
    const uint8_t* rows[3];
    for (int c = 0; c < count; ++c) {
      rows[c] = upsampled_row(planes[c], how[c], y, width, buffers[c].data(), sums.data());
    }
    switch (transform) {
      case ColorTransform::Grey:
        for (uint32_t x = 0; x < width; ++x) rgb[3 * x] = rgb[3 * x + 1] = rgb[3 * x + 2] = rows[0][x];
        break;
      case ColorTransform::YCbCr: ycbcr_row_to_rgb(rows[0], rows[1], rows[2], width, rgb); break;
      case ColorTransform::Rgb:
        for (uint32_t x = 0; x < width; ++x) {
          rgb[3 * x] = rows[0][x];
          rgb[3 * x + 1] = rows[1][x];
          rgb[3 * x + 2] = rows[2][x];
        }
        break;
    }
  }
}

}  // namespace peak::image::jpeg
