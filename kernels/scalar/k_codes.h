// Internal: the K blocks' bit packing, in one place. unpack_* turns a block into
// one code per element (in element order) plus per-sub-block scales; pack_*
// does the reverse for the quantizers. The scalar kernels and the quantizers
// both use these, so the layout is written once.
#pragma once

#include <cstdint>

#include "kernels/blocks.h"

namespace peak::kernels {
namespace scalar {

// Q2_K: codes 0..3; element e = 128h + 32j + l sits at bits 2j of qs[32h + l].
inline void unpack_q2_k(const BlockQ2_K& b, uint8_t q[kQKK]) {
  for (int e = 0; e < kQKK; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32;
    q[e] = static_cast<uint8_t>((b.qs[32 * h + l] >> (2 * j)) & 3);
  }
}
inline void pack_q2_k(const uint8_t q[kQKK], BlockQ2_K& b) {
  for (int i = 0; i < kQKK / 4; ++i) b.qs[i] = 0;
  for (int e = 0; e < kQKK; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32;
    b.qs[32 * h + l] = static_cast<uint8_t>(b.qs[32 * h + l] | q[e] << (2 * j));
  }
}

// Q3_K: codes 0..7 (value q - 4); low bits as Q2_K, bit 2 at bit 4h + j of hmask[l].
inline void unpack_q3_k(const BlockQ3_K& b, uint8_t q[kQKK]) {
  for (int e = 0; e < kQKK; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32;
    const int low = (b.qs[32 * h + l] >> (2 * j)) & 3;
    const int high = (b.hmask[l] >> (4 * h + j)) & 1;
    q[e] = static_cast<uint8_t>(low | high << 2);
  }
}
inline void pack_q3_k(const uint8_t q[kQKK], BlockQ3_K& b) {
  for (int i = 0; i < kQKK / 4; ++i) b.qs[i] = 0;
  for (int i = 0; i < kQKK / 8; ++i) b.hmask[i] = 0;
  for (int e = 0; e < kQKK; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32;
    b.qs[32 * h + l] = static_cast<uint8_t>(b.qs[32 * h + l] | (q[e] & 3) << (2 * j));
    b.hmask[l] = static_cast<uint8_t>(b.hmask[l] | (q[e] >> 2) << (4 * h + j));
  }
}
// Scales 0..63 (stored value; the scale is value - 32) into the 12-byte packing.
inline void pack_q3_k_scales(const uint8_t scales[16], uint8_t packed[12]) {
  for (int i = 0; i < 12; ++i) packed[i] = 0;
  for (int j = 0; j < 16; ++j) {
    const int low = scales[j] & 0xf, high = scales[j] >> 4;
    if (j < 8) {
      packed[j] = static_cast<uint8_t>(packed[j] | low);
    } else {
      packed[j - 8] = static_cast<uint8_t>(packed[j - 8] | low << 4);
    }
    packed[8 + j % 4] = static_cast<uint8_t>(packed[8 + j % 4] | high << (2 * (j / 4)));
  }
}

// Q4_K / Q5_K: element e = 64g + l reads byte 32g + l % 32, low nibble for l < 32.
inline int q4_k_byte(int e) { return 32 * (e / 64) + e % 32; }
inline int q4_k_shift(int e) { return (e % 64) < 32 ? 0 : 4; }

inline void unpack_q4_k(const BlockQ4_K& b, uint8_t q[kQKK]) {
  for (int e = 0; e < kQKK; ++e) q[e] = static_cast<uint8_t>((b.qs[q4_k_byte(e)] >> q4_k_shift(e)) & 0xf);
}
inline void pack_nibbles_k(const uint8_t q[kQKK], uint8_t qs[kQKK / 2]) {
  for (int i = 0; i < kQKK / 2; ++i) qs[i] = 0;
  for (int e = 0; e < kQKK; ++e) qs[q4_k_byte(e)] = static_cast<uint8_t>(qs[q4_k_byte(e)] | (q[e] & 0xf) << q4_k_shift(e));
}
// Fifth bit of Q5_K: bit e / 32 of qh[e % 32].
inline void unpack_q5_k(const BlockQ5_K& b, uint8_t q[kQKK]) {
  for (int e = 0; e < kQKK; ++e) {
    const int low = (b.qs[q4_k_byte(e)] >> q4_k_shift(e)) & 0xf;
    const int high = (b.qh[e % 32] >> (e / 32)) & 1;
    q[e] = static_cast<uint8_t>(low | high << 4);
  }
}
inline void pack_q5_k(const uint8_t q[kQKK], BlockQ5_K& b) {
  pack_nibbles_k(q, b.qs);
  for (int i = 0; i < kQKK / 8; ++i) b.qh[i] = 0;
  for (int e = 0; e < kQKK; ++e) b.qh[e % 32] = static_cast<uint8_t>(b.qh[e % 32] | (q[e] >> 4) << (e / 32));
}
// Inverse of unpack_q4_k_scale_min for all eight sub-blocks (values 0..63).
inline void pack_q4_k_scales(const uint8_t scale[8], const uint8_t min[8], uint8_t packed[12]) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scale[j] | (scale[j + 4] >> 4) << 6);
    packed[j + 4] = static_cast<uint8_t>(min[j] | (min[j + 4] >> 4) << 6);
    packed[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0xf) | (min[j + 4] & 0xf) << 4);
  }
}

// Q6_K: element e = 128h + 32k + l: low nibble of ql[64h + 32(k % 2) + l] (high
// nibble for k >= 2), top two bits at bits 2k of qh[32h + l]. Codes 0..63.
inline int q6_k_ql_byte(int e) { return 64 * (e / 128) + 32 * ((e % 128) / 32 % 2) + e % 32; }
inline int q6_k_ql_shift(int e) { return (e % 128) / 32 >= 2 ? 4 : 0; }
inline int q6_k_qh_byte(int e) { return 32 * (e / 128) + e % 32; }
inline int q6_k_qh_shift(int e) { return 2 * ((e % 128) / 32); }

inline void unpack_q6_k(const BlockQ6_K& b, uint8_t q[kQKK]) {
  for (int e = 0; e < kQKK; ++e) {
    const int low = (b.ql[q6_k_ql_byte(e)] >> q6_k_ql_shift(e)) & 0xf;
    const int high = (b.qh[q6_k_qh_byte(e)] >> q6_k_qh_shift(e)) & 3;
    q[e] = static_cast<uint8_t>(low | high << 4);
  }
}
inline void pack_q6_k(const uint8_t q[kQKK], BlockQ6_K& b) {
  for (int i = 0; i < kQKK / 2; ++i) b.ql[i] = 0;
  for (int i = 0; i < kQKK / 4; ++i) b.qh[i] = 0;
  for (int e = 0; e < kQKK; ++e) {
    b.ql[q6_k_ql_byte(e)] = static_cast<uint8_t>(b.ql[q6_k_ql_byte(e)] | (q[e] & 0xf) << q6_k_ql_shift(e));
    b.qh[q6_k_qh_byte(e)] = static_cast<uint8_t>(b.qh[q6_k_qh_byte(e)] | (q[e] >> 4) << q6_k_qh_shift(e));
  }
}

// IQ4_XS: sub-block i's 6-bit scale (stored value; the scale is value - 32).
inline int iq4_xs_scale(const BlockIQ4_XS& b, int i) {
  return ((b.scales_l[i / 2] >> (4 * (i % 2))) & 0xf) | (((b.scales_h >> (2 * i)) & 3) << 4);
}

}  // namespace scalar
}  // namespace peak::kernels
