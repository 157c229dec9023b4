// From decoded JPEG component planes to RGB pixels: upsampling of subsampled
// planes and the JFIF YCbCr to RGB conversion, computed as the reference
// decoder computes them so that pixels match exactly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::image::jpeg {

// The samples of one component: width x height real samples (the image size
// times the component's sampling factor over the largest, rounded up) in rows
// `stride` bytes apart. Each sample covers h_ratio x v_ratio pixels: the
// largest sampling factors over the component's own.
struct Plane {
  const uint8_t* samples;
  size_t stride;
  uint32_t width, height;
  uint32_t h_ratio, v_ratio;
};

enum class ColorTransform { Grey, YCbCr, Rgb };

// Writes the (height, width, 3) RGB pixels of `planes`: one for Grey, three
// (Y, Cb, Cr or R, G, B) otherwise.
void planes_to_rgb(const Plane* planes, ColorTransform transform, uint32_t width, uint32_t height, uint8_t* rgb);

}  // namespace peak::image::jpeg
