// The test pictures of tests/data/images (PIL wrote them:
// tests/data/images/png/README.md), for the server's tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace peak_server::testing {

// The bytes of tests/data/images/<relative>.
inline std::string test_picture(const std::string& relative) {
  const std::string path = std::string(PEAK_TEST_DATA_DIR) + "/images/" + relative;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  EXPECT_TRUE(in) << path;
  std::string bytes(static_cast<size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

}  // namespace peak_server::testing
