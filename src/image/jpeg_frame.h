// What a JPEG decoder knows of the picture between markers: the frame (SOF)
// with its components' decoded samples or coefficients, and one scan (SOS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "image/jpeg_huffman.h"

namespace peak::image::jpeg {

// kZigzag[k]: the natural (row * 8 + column) position of the k-th coefficient
// in the order the file sends them (T.81 Figure A.6).
inline constexpr uint8_t kZigzag[64] = {0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
                                        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
                                        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
                                        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

struct Component {
  uint8_t id = 0;
  uint32_t h = 1, v = 1;  // sampling factors, 1..4
  int quant_table = 0;    // the DQT slot it names
  // The quantization table in natural order, copied from its slot when the
  // first scan of the component starts (T.81 B.2.2: the slot may be redefined
  // after that).
  uint16_t quant[64] = {};
  bool scanned = false;  // a scan has named it
  // Its samples: the image size times its sampling factors over the largest,
  // rounded up; the blocks that hold them, which a scan of it alone covers;
  // and the blocks of whole MCUs, which interleaved scans cover.
  uint32_t width = 0, height = 0;
  uint32_t blocks_wide = 0, blocks_high = 0;
  uint32_t padded_blocks_wide = 0, padded_blocks_high = 0;
  std::vector<uint8_t> samples;  // (padded_blocks_high * 8, padded_blocks_wide * 8)
  // Progressive files only: (padded_blocks_high, padded_blocks_wide, 64),
  // natural order, and for each zig-zag position the Al of the last scan that
  // coded it (-1: none yet), which the next scan must continue from.
  std::vector<int16_t> coefficients;
  int8_t coefficient_bits[64];
};

struct Frame {
  bool progressive = false;
  uint32_t width = 0, height = 0;
  uint32_t max_h = 1, max_v = 1;
  uint32_t mcus_wide = 0, mcus_high = 0;
  std::vector<Component> components;
};

struct ScanComponent {
  Component* component;
  const HuffmanTable* dc;  // null when the scan codes no DC differences
  const HuffmanTable* ac;  // null when the scan codes no AC coefficients
};

struct Scan {
  int number = 0;  // 1, 2, ... in file order, for messages
  std::vector<ScanComponent> components;
  int spectral_start = 0, spectral_end = 63;  // Ss, Se: zig-zag positions
  int bit_high = 0, bit_low = 0;              // Ah, Al: successive approximation
  uint32_t restart_interval = 0;              // MCUs between RST markers; 0: none
};

// Decodes the entropy-coded data of `scan`, which starts at data[start], into
// the samples (sequential frames) or coefficients (progressive) of its
// components. Returns the offset of the marker that ends the data. Throws
// ImageError when the data is cut short or malformed.
size_t decode_scan(const uint8_t* data, size_t size, size_t start, Frame& frame, const Scan& scan);

}  // namespace peak::image::jpeg
