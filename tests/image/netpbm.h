// Files the image tests read, and their expected pixels: binary PPM (P6, RGB)
// and PAM (P7, RGBA) files with a maxval of 255, as tests/data/images' scripts
// write them.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "image/image.h"

namespace peak::image {

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline Image read_netpbm(const std::string& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::string magic, word;
  unsigned maxval = 0;
  Image image;
  in >> magic;
  if (magic == "P6") {
    in >> image.width >> image.height >> maxval;
    image.channels = 3;
  } else {
    EXPECT_EQ(magic, "P7") << path;
    image.channels = 4;
    while (in >> word && word != "ENDHDR") {
      if (word == "WIDTH") in >> image.width;
      if (word == "HEIGHT") in >> image.height;
      if (word == "MAXVAL") in >> maxval;
    }
  }
  EXPECT_EQ(maxval, 255u) << path;
  in.get();  // the one whitespace byte before the samples
  image.pixels.assign(bytes.begin() + static_cast<std::ptrdiff_t>(in.tellg()), bytes.end());
  EXPECT_EQ(image.pixels.size(), size_t(image.width) * image.height * image.channels) << path;
  return image;
}

}  // namespace peak::image
