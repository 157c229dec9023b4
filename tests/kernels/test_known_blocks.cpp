// Hand-built blocks and the values the format definitions give for them
// (worked out by hand from the layouts in kernels/blocks.h), through the scalar
// dequantizer and, for every available path, through a dot with a one-hot
// activation row, which must pick out the same values.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/blocks.h"

namespace peak::kernels {
namespace {

// Expected values: `fill` everywhere, then exceptions at given element ranges.
struct Span {
  int begin, end;
  float value;
};
std::vector<float> expected(int n, float fill, std::initializer_list<Span> spans) {
  std::vector<float> v(static_cast<size_t>(n), fill);
  for (const Span& s : spans) {
    for (int i = s.begin; i < s.end; ++i) v[static_cast<size_t>(i)] = s.value;
  }
  return v;
}

template <typename Block>
void check_block(GgmlType type, const Block& block, const std::vector<float>& want) {
  const int n = static_cast<int>(want.size());
  std::vector<float> got(want.size());
  kernels_for_isa(type, Isa::Scalar).to_float(&block, got.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << "element " << i;
}

TEST(KnownBlocks, Q8_0) {
  BlockQ8_0 b{};
  b.d = 0x3400;  // 0.25
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(j - 16);
  std::vector<float> want(32);
  for (int j = 0; j < 32; ++j) want[static_cast<size_t>(j)] = 0.25f * static_cast<float>(j - 16);
  check_block(GgmlType::Q8_0, b, want);
}

TEST(KnownBlocks, Q4_1) {
  BlockQ4_1 b{};
  b.d = 0x3800;  // 0.5
  b.m = 0xbc00;  // -1
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[static_cast<size_t>(j)] = 0.5f * static_cast<float>(j) - 1.0f;
    want[static_cast<size_t>(j + 16)] = 0.5f * static_cast<float>(15 - j) - 1.0f;
  }
  check_block(GgmlType::Q4_1, b, want);
}

TEST(KnownBlocks, Q5_0AndQ5_1) {
  // Nibbles 3 (low) and 7 (high); fifth bits set for elements 0 and 31 only.
  BlockQ5_0 b0{};
  b0.d = 0x3c00;  // 1
  std::memset(b0.qs, 0x73, sizeof b0.qs);
  b0.qh[0] = 0x01;
  b0.qh[3] = 0x80;
  check_block(GgmlType::Q5_0, b0, expected(32, 0, {{0, 1, 3}, {1, 16, -13}, {16, 31, -9}, {31, 32, 7}}));
  BlockQ5_1 b1{};
  b1.d = 0x3c00;  // 1
  b1.m = 0x3800;  // 0.5
  std::memset(b1.qs, 0x73, sizeof b1.qs);
  b1.qh[0] = 0x01;
  b1.qh[3] = 0x80;
  check_block(GgmlType::Q5_1, b1, expected(32, 0, {{0, 1, 19.5f}, {1, 16, 3.5f}, {16, 31, 7.5f}, {31, 32, 23.5f}}));
}

TEST(KnownBlocks, IQ4_NL) {
  const float book[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  BlockIQ4_NL b{};
  b.d = 0x4000;  // 2
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::vector<float> want(32);
  for (int j = 0; j < 16; ++j) {
    want[static_cast<size_t>(j)] = 2.0f * book[j];
    want[static_cast<size_t>(j + 16)] = 2.0f * book[15 - j];
  }
  check_block(GgmlType::IQ4_NL, b, want);
}

TEST(KnownBlocks, Q2_K) {
  BlockQ2_K b{};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3400;  // 0.25
  b.scales[0] = 0x23;   // scale 3, min 2
  b.scales[15] = 0x1f;  // scale 15, min 1
  std::memset(b.qs, 0xe4, sizeof b.qs);  // element 128h + 32j + l has code j
  check_block(GgmlType::Q2_K, b, expected(256, 0, {{0, 16, -0.5f}, {240, 256, 44.75f}}));
}

TEST(KnownBlocks, Q3_K) {
  BlockQ3_K b{};
  b.d = 0x4000;  // 2
  // Stored 6-bit scales: 33 (scale +1) for sub-block 0, 0 (scale -32) for
  // sub-block 15, 32 (scale 0) elsewhere: low nibbles in bytes 0..7, high bit
  // pairs (2 = 0b10 for 32 and 33) in bytes 8..11.
  const uint8_t scales[12] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xaa, 0xaa, 0x2a};
  std::memcpy(b.scales, scales, sizeof scales);
  std::memset(b.qs, 0xe4, sizeof b.qs);  // low bits of element 128h + 32j + l: j
  // hmask all clear: value = code - 4 = j - 4.
  check_block(GgmlType::Q3_K, b, expected(256, 0, {{0, 16, -8}, {240, 256, 64}}));
}

TEST(KnownBlocks, Q4_K) {
  BlockQ4_K b{};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  b.scales[0] = 2;  // sub-block 0: scale 2
  b.scales[4] = 3;  //              min 3
  // Sub-block 5: scale 33, min 18: low nibbles in byte 9, top bits in bytes 1 and 5.
  b.scales[9] = 0x21;
  b.scales[1] = 0x80;
  b.scales[5] = 0x40;
  std::memset(b.qs, 0x5a, sizeof b.qs);  // low nibble 10, high nibble 5
  // Sub-block 0 = low nibbles of group 0; sub-block 5 = high nibbles of group 2.
  check_block(GgmlType::Q4_K, b, expected(256, 0, {{0, 32, 18.5f}, {160, 192, 156}}));
}

TEST(KnownBlocks, Q6_K) {
  BlockQ6_K b{};
  b.d = 0x3800;  // 0.5
  b.scales[0] = 2;
  b.scales[15] = -3;
  std::memset(b.ql, 0x21, sizeof b.ql);  // low nibbles 1, high nibbles 2
  std::memset(b.qh, 0xe4, sizeof b.qh);  // bits 2k..2k+1 = k
  // Element 128h + 32k + l: code (k < 2 ? 1 : 2) | k << 4, value code - 32:
  // k = 0 -> -31 (sub-block 0), k = 3 -> 18 (sub-block 15 is h = 1, k = 3, l >= 16).
  check_block(GgmlType::Q6_K, b, expected(256, 0, {{0, 16, -31}, {240, 256, -27}}));
}

TEST(KnownBlocks, IQ4_XS) {
  BlockIQ4_XS b{};
  b.d = 0x3800;         // 0.5
  b.scales_l[0] = 0x01;  // sub-block 0: low nibble 1
  b.scales_h = 0x2aaa;   // high pairs: 2 for sub-blocks 0..6, 0 for 7 -> 33, 32 ... 32, 0
  std::memset(b.qs, 0x3c, sizeof b.qs);  // low nibble 12 (53), high nibble 3 (-65)
  check_block(GgmlType::IQ4_XS, b,
              expected(256, 0, {{0, 16, 26.5f}, {16, 32, -32.5f}, {224, 240, -848}, {240, 256, 1040}}));
}

// On every path, a dot with a one-hot partner row recovers single elements.
TEST(KnownBlocks, OneHotDotsRecoverElementsOnEveryPath) {
  BlockQ4_K b{};
  b.d = 0x3c00;
  b.dmin = 0x3800;
  b.scales[0] = 2;
  b.scales[4] = 3;
  b.scales[9] = 0x21;
  b.scales[1] = 0x80;
  b.scales[5] = 0x40;
  std::memset(b.qs, 0x5a, sizeof b.qs);
  for (Isa isa : testing_util::available_isas()) {
    const TypeKernels& k = kernels_for_isa(GgmlType::Q4_K, isa);
    for (int e : {0, 31, 100, 160, 191}) {
      BlockQ8_K y{};
      y.d = 1.0f;
      y.qs[e] = 1;
      y.bsums[e / 16] = 1;
      float dot = 0.0f;
      k.vec_dot(256, &dot, &b, &y);
      const float want = e < 32 ? 18.5f : (e >= 160 && e < 192 ? 156.0f : 0.0f);
      EXPECT_EQ(dot, want) << isa_name(isa) << " element " << e;
    }
  }
}

}  // namespace
}  // namespace peak::kernels
