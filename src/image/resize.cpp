#include "image/resize.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace peak::image {
namespace {

constexpr int kPrecisionBits = 22;  // 32 bits - 8 for the sample - 2 for the sum's sign and headroom
constexpr double kPi = 3.14159265358979323846;

double filter_support(ResizeFilter filter) {
  switch (filter) {
    case ResizeFilter::Bilinear: return 1.0;
    case ResizeFilter::Bicubic: return 2.0;
    case ResizeFilter::Lanczos: return 3.0;
  }
  return 1.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPi;
  return std::sin(x) / x;
}

double filter_weight(ResizeFilter filter, double x) {
  switch (filter) {
    case ResizeFilter::Bilinear: x = std::fabs(x); return x < 1.0 ? 1.0 - x : 0.0;
    case ResizeFilter::Bicubic: {
      constexpr double a = -0.5;
      x = std::fabs(x);
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
      if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
      return 0.0;
    }
    case ResizeFilter::Lanczos: return (x > -3.0 && x < 3.0) ? sinc(x) * sinc(x / 3.0) : 0.0;
  }
  return 0.0;
}

// The taps of one axis: output sample i reads `count[i]` source samples from
// `first[i]` on, with the weights weights[i * taps ...] in fixed point.
struct Taps {
  int taps = 0;  // the most any output sample reads
  std::vector<int> first, count;
  std::vector<int32_t> weights;  // (out_size, taps)
};

Taps make_taps(uint32_t in_size, uint32_t out_size, ResizeFilter filter) {
  const double scale = double(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);  // wider when shrinking
  const double support = filter_support(filter) * filter_scale;
  Taps t;
  t.taps = int(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(size_t(out_size) * t.taps, 0);
  std::vector<double> w(t.taps);
  for (uint32_t i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    const int lo = std::max(int(center - support + 0.5), 0);
    const int hi = std::min(int(center + support + 0.5), int(in_size));
    const int n = std::min(hi - lo, t.taps);
    double total = 0.0;
    for (int k = 0; k < n; ++k) {
      w[k] = filter_weight(filter, (lo + k - center + 0.5) / filter_scale);
      total += w[k];
    }
    for (int k = 0; k < n; ++k) {
      const double normalized = total != 0.0 ? w[k] / total : 0.0;
      const double fixed = normalized * (1 << kPrecisionBits);
      t.weights[size_t(i) * t.taps + k] = int32_t(fixed < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    t.first[i] = lo;
    t.count[i] = n;
  }
  return t;
}

uint8_t to_sample(int64_t sum) {
  const int64_t v = sum >> kPrecisionBits;
  return uint8_t(std::clamp<int64_t>(v, 0, 255));
}

// Rows: (height, in_width, c) -> (height, out_width, c).
Image resample_rows(const Image& in, uint32_t out_width, const Taps& taps) {
  const uint32_t c = in.channels;
  Image out;
  out.width = out_width;
  out.height = in.height;
  out.channels = c;
  out.pixels.resize(size_t(out_width) * in.height * c);
  for (uint32_t y = 0; y < in.height; ++y) {
    const uint8_t* row = in.pixels.data() + size_t(y) * in.width * c;
    uint8_t* dst = out.pixels.data() + size_t(y) * out_width * c;
    for (uint32_t x = 0; x < out_width; ++x) {
      const int32_t* w = taps.weights.data() + size_t(x) * taps.taps;
      for (uint32_t ch = 0; ch < c; ++ch) {
        int64_t sum = int64_t(1) << (kPrecisionBits - 1);
        for (int k = 0; k < taps.count[x]; ++k) sum += int64_t(row[size_t(taps.first[x] + k) * c + ch]) * w[k];
        dst[size_t(x) * c + ch] = to_sample(sum);
      }
    }
  }
  return out;
}

// Columns: (in_height, width, c) -> (out_height, width, c).
Image resample_columns(const Image& in, uint32_t out_height, const Taps& taps) {
  const size_t row_bytes = size_t(in.width) * in.channels;
  Image out;
  out.width = in.width;
  out.height = out_height;
  out.channels = in.channels;
  out.pixels.resize(row_bytes * out_height);
  for (uint32_t y = 0; y < out_height; ++y) {
    const int32_t* w = taps.weights.data() + size_t(y) * taps.taps;
    const uint8_t* top = in.pixels.data() + size_t(taps.first[y]) * row_bytes;
    uint8_t* dst = out.pixels.data() + size_t(y) * row_bytes;
    for (size_t i = 0; i < row_bytes; ++i) {
      int64_t sum = int64_t(1) << (kPrecisionBits - 1);
      for (int k = 0; k < taps.count[y]; ++k) sum += int64_t(top[size_t(k) * row_bytes + i]) * w[k];
      dst[i] = to_sample(sum);
    }
  }
  return out;
}

}  // namespace

Image to_rgb(Image picture) {
  if (picture.channels != 4) return picture;
  const size_t pixels = size_t(picture.width) * picture.height;
  for (size_t i = 0; i < pixels; ++i)
    for (size_t ch = 0; ch < 3; ++ch) picture.pixels[i * 3 + ch] = picture.pixels[i * 4 + ch];
  picture.pixels.resize(pixels * 3);
  picture.channels = 3;
  return picture;
}

Image resize(const Image& source, uint32_t width, uint32_t height, ResizeFilter filter, const DecodeLimits& limits) {
  if (source.width == 0 || source.height == 0 || source.channels != 3 ||
      source.pixels.size() != size_t(source.width) * source.height * source.channels)
    throw ImageError("image: resize takes an RGB picture whose pixels match its size");
  if (width == 0 || height == 0 || width > limits.max_dimension || height > limits.max_dimension ||
      uint64_t(width) * height > limits.max_pixels)
    throw ImageError("image: cannot resize to " + std::to_string(width) + " x " + std::to_string(height) +
                     " pixels (at most " + std::to_string(limits.max_dimension) + " a side and " +
                     std::to_string(limits.max_pixels) + " in all)");
  // Each axis only when its size changes: rows first, the columns of the result.
  Image rows = width == source.width ? source : resample_rows(source, width, make_taps(source.width, width, filter));
  if (height == source.height) return rows;
  return resample_columns(rows, height, make_taps(source.height, height, filter));
}

}  // namespace peak::image
