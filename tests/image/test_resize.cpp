// Resampling against PIL's Image.resize: tests/data/images/resize holds source
// pictures and PIL's results for each filter (make_resize_cases.py), as PPM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "image/resize.h"
#include "netpbm.h"

namespace peak::image {
namespace {

const std::string kDir = std::string(PEAK_TEST_DATA_DIR) + "/images/resize/";

struct Case {
  const char* source;
  uint32_t width, height;
};

const Case kCases[] = {{"small", 11, 7},  {"small", 80, 50}, {"small", 37, 9},  {"small", 12, 23}, {"small", 1, 1},
                       {"small", 36, 24}, {"photo", 28, 28}, {"photo", 64, 48}, {"dot", 5, 3}};

void expect_as_pil(ResizeFilter filter, const char* filter_name) {
  for (const Case& c : kCases) {
    const Image source = read_netpbm(kDir + std::string(c.source) + ".ppm");
    const std::string expected_name = std::string(c.source) + "-" + filter_name + "-" + std::to_string(c.width) + "x" +
                                      std::to_string(c.height) + ".ppm";
    const Image expected = read_netpbm(kDir + expected_name);
    const Image got = resize(source, c.width, c.height, filter);
    ASSERT_EQ(got.width, c.width);
    ASSERT_EQ(got.height, c.height);
    ASSERT_EQ(got.channels, 3u);
    size_t differing = 0;
    for (size_t i = 0; i < got.pixels.size(); ++i) differing += got.pixels[i] != expected.pixels[i];
    EXPECT_EQ(differing, 0u) << expected_name;
  }
}

TEST(Resize, BilinearAsPil) { expect_as_pil(ResizeFilter::Bilinear, "bilinear"); }
TEST(Resize, BicubicAsPil) { expect_as_pil(ResizeFilter::Bicubic, "bicubic"); }
TEST(Resize, LanczosAsPil) { expect_as_pil(ResizeFilter::Lanczos, "lanczos"); }

TEST(Resize, TheSameSizeIsTheSamePicture) {
  const Image source = read_netpbm(kDir + "small.ppm");
  EXPECT_EQ(resize(source, source.width, source.height, ResizeFilter::Lanczos).pixels, source.pixels);
}

TEST(Resize, RefusesSizesOutsideTheLimits) {
  const Image source = read_netpbm(kDir + "small.ppm");
  EXPECT_THROW(resize(source, 0, 5, ResizeFilter::Bilinear), ImageError);
  DecodeLimits limits;
  limits.max_dimension = 100;
  try {
    resize(source, 101, 5, ResizeFilter::Bilinear, limits);
    FAIL() << "no refusal";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("cannot resize to 101 x 5 pixels"));
  }
  limits.max_pixels = 99;
  EXPECT_THROW(resize(source, 10, 10, ResizeFilter::Bilinear, limits), ImageError);
  EXPECT_NO_THROW(resize(source, 9, 11, ResizeFilter::Bilinear, limits));
}

TEST(Resize, RefusesPicturesWhosePixelsDoNotMatch) {
  Image bad = read_netpbm(kDir + "small.ppm");
  bad.pixels.pop_back();
  EXPECT_THROW(resize(bad, 5, 5, ResizeFilter::Bilinear), ImageError);
  Image rgba;
  rgba.width = rgba.height = 1;
  rgba.channels = 4;
  rgba.pixels = {1, 2, 3, 4};
  EXPECT_THROW(resize(rgba, 2, 2, ResizeFilter::Bilinear), ImageError);
}

TEST(Resize, ToRgbDropsAlphaAndKeepsTheColourUnderIt) {
  Image rgba;
  rgba.width = 2;
  rgba.height = 1;
  rgba.channels = 4;
  rgba.pixels = {10, 20, 30, 0, 40, 50, 60, 255};
  const Image rgb = to_rgb(rgba);
  EXPECT_EQ(rgb.channels, 3u);
  EXPECT_EQ(rgb.pixels, (std::vector<uint8_t>{10, 20, 30, 40, 50, 60}));
}

}  // namespace
}  // namespace peak::image
