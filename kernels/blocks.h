// Quantized block layouts, byte-identical to ggml's (GGUF files store these
// blocks as they are). A row of n elements is n / kBlockElems consecutive blocks.
// Scales are IEEE binary16 stored as raw bits (see kernels/float16.h), except
// Q8_K's, which is a float. Every struct's size is checked against the GGUF
// specification below and against the traits table in ggml_type.cpp by a test.
//
// Nibble order: in the 32-element legacy blocks, byte j holds element j in its low
// nibble and element j + 16 in its high nibble. In the 256-element K blocks, each
// 64-element group reads 32 bytes: low nibbles give elements 0..31 of the group,
// high nibbles elements 32..63.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::kernels {

constexpr int kQK = 32;    // elements per legacy block (Q4_0 ... Q8_1, IQ4_NL)
constexpr int kQKK = 256;  // elements per K super-block (Q2_K ... Q8_K, IQ4_XS)

// value = (q - 8) * d, q in 0..15
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// value = q * d + m, q in 0..15
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
// value = (q - 16) * d, q in 0..31; bit j of qh (little-endian u32) is bit 4 of element j
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// value = q * d + m, q in 0..31; fifth bits as in Q5_0
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// value = q * d
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// value = q * d; s = d * sum(q), used to fold the min of Q4_1 / Q5_1 into the dot
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK];
};

// 16 sub-blocks of 16: value = d * (scales[i] & 15) * q - dmin * (scales[i] >> 4), q in 0..3.
// qs: 2 halves of 128 elements, each 32 bytes; bits 2j..2j+1 of byte l hold element 32j + l.
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];
  uint8_t qs[kQKK / 4];
  uint16_t d;
  uint16_t dmin;
};
// 16 sub-blocks of 16: value = d * (scale_i - 32) * (q - 4), q in 0..7; q's low two bits
// are laid out as in Q2_K, its third bit in hmask (bit 4h + j of byte l: element 128h + 32j + l).
// The 6-bit scales are packed in 12 bytes: low nibbles in bytes 0..7, high pairs in 8..11.
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  uint16_t d;
};
// 8 sub-blocks of 32: value = d * sc_i * q - dmin * m_i, q in 0..15; 6-bit sc_i and m_i
// packed in 12 bytes (see unpack_q4_k_scale_min).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
// As Q4_K with a fifth bit per element: bit 2g (low nibble) / 2g + 1 (high nibble) of
// qh[l] for the element at byte l of 64-element group g.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// 16 sub-blocks of 16: value = d * scales[i] * (q - 32), q in 0..63: low nibbles in ql,
// high two bits in qh (see dequantize_row_q6_k for the interleave).
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};
// Activation partner of the K types: value = q * d; bsums[i] = sum of q over elements 16i..16i+15.
struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};
// value = d * kIq4Values[q], q in 0..15, nibble order as Q4_0.
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// 8 sub-blocks of 32: value = d * (ls_i - 32) * kIq4Values[q]; ls_i is 6 bits: low nibble
// in scales_l[i / 2] (nibble i % 2), high two bits at bits 2i of scales_h.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};

// The non-uniform 4-bit code book of IQ4_NL and IQ4_XS.
constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};

static_assert(sizeof(BlockQ4_0) == 18, "Q4_0 block layout");
static_assert(sizeof(BlockQ4_1) == 20, "Q4_1 block layout");
static_assert(sizeof(BlockQ5_0) == 22, "Q5_0 block layout");
static_assert(sizeof(BlockQ5_1) == 24, "Q5_1 block layout");
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block layout");
static_assert(sizeof(BlockQ8_1) == 36, "Q8_1 block layout");
static_assert(sizeof(BlockQ2_K) == 84, "Q2_K block layout");
static_assert(sizeof(BlockQ3_K) == 110, "Q3_K block layout");
static_assert(sizeof(BlockQ4_K) == 144, "Q4_K block layout");
static_assert(sizeof(BlockQ5_K) == 176, "Q5_K block layout");
static_assert(sizeof(BlockQ6_K) == 210, "Q6_K block layout");
static_assert(sizeof(BlockQ8_K) == 292, "Q8_K block layout");
static_assert(sizeof(BlockIQ4_NL) == 18, "IQ4_NL block layout");
static_assert(sizeof(BlockIQ4_XS) == 136, "IQ4_XS block layout");

// The helpers below are `static inline` on purpose: per-ISA sources include this
// header too, and internal linkage keeps each source's copy (built with that
// source's instruction set) from being picked by the linker for another.

// Q4_K / Q5_K: sub-block j's 6-bit scale and min. Sub-blocks 0..3 keep theirs in
// the low 6 bits of bytes j and j + 4; sub-blocks 4..7 keep the low nibbles in byte
// j + 4 and the top two bits in the spare high bits of bytes j - 4 and j.
static inline void unpack_q4_k_scale_min(int j, const uint8_t* packed, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = packed[j] & 63;
    *min = packed[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((packed[j + 4] & 0xf) | ((packed[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
  }
}

// Q3_K: the 16 signed scales (already minus 32).
static inline void unpack_q3_k_scales(const uint8_t* packed, int8_t* scales) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0xf : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

}  // namespace peak::kernels
