// The entropy-coded data of one scan (T.81 F.2 for sequential frames, G.2 for
// progressive ones): restart intervals, MCUs, and the coefficients of blocks.
#include <cstring>
#include <string>

#include "image/image.h"
#include "image/jpeg_frame.h"
#include "image/jpeg_idct.h"

namespace peak::image::jpeg {
namespace {

// A scan's data split at its RST markers, byte stuffing (0xFF 0x00 for a data
// byte 0xFF) removed: interval i is bytes[ends[i - 1], ends[i]).
struct Intervals {
  std::vector<uint8_t> bytes;
  std::vector<size_t> ends;
  size_t end_marker = 0;  // offset in the file of the marker that ends the scan
};

Intervals split_intervals(const uint8_t* data, size_t size, size_t start, const Scan& scan) {
  Intervals out;
  int next_restart = 0;
  size_t pos = start;
  for (;;) {
    const auto* marker = static_cast<const uint8_t*>(std::memchr(data + pos, 0xff, size - pos));
    if (marker == nullptr) throw ImageError("JPEG: truncated file (in scan " + std::to_string(scan.number) + ")");
    out.bytes.insert(out.bytes.end(), data + pos, marker);
    pos = static_cast<size_t>(marker - data);
    size_t code = pos + 1;
    while (code < size && data[code] == 0xff) ++code;  // fill bytes
    if (code == size) throw ImageError("JPEG: truncated file (in scan " + std::to_string(scan.number) + ")");
    if (data[code] == 0x00) {
      out.bytes.push_back(0xff);
      pos = code + 1;
      continue;
    }
    if (data[code] < 0xd0 || data[code] > 0xd7) {  // not RSTn: the scan ends
      out.ends.push_back(out.bytes.size());
      out.end_marker = pos;
      return out;
    }
    const int restart = data[code] - 0xd0;
    if (scan.restart_interval == 0) {
      throw ImageError("JPEG: RST" + std::to_string(restart) + " marker in scan " + std::to_string(scan.number) +
                       ", which has no restart interval");
    }
    if (restart != next_restart) {
      throw ImageError("JPEG: expected RST" + std::to_string(next_restart) + " marker, found RST" +
                       std::to_string(restart) + " (in scan " + std::to_string(scan.number) + ")");
    }
    next_restart = (next_restart + 1) % 8;
    out.ends.push_back(out.bytes.size());
    pos = code + 1;
  }
}

enum class Pass { Sequential, DcFirst, DcRefine, AcFirst, AcRefine };

class ScanDecoder {
 public:
  ScanDecoder(Frame& frame, const Scan& scan) : frame_(frame), scan_(scan) {
    if (!frame.progressive) {
      pass_ = Pass::Sequential;
    } else if (scan.spectral_start == 0) {
      pass_ = scan.bit_high == 0 ? Pass::DcFirst : Pass::DcRefine;
    } else {
      pass_ = scan.bit_high == 0 ? Pass::AcFirst : Pass::AcRefine;
    }
  }

  void decode(const Intervals& intervals) {
    // One component alone is coded block by block (T.81 A.2.2); several are
    // interleaved, MCU by MCU, each MCU holding h x v blocks of each.
    const bool interleaved = scan_.components.size() > 1;
    const Component& first = *scan_.components[0].component;
    const uint32_t units_wide = interleaved ? frame_.mcus_wide : first.blocks_wide;
    const uint64_t units = uint64_t{units_wide} * (interleaved ? frame_.mcus_high : first.blocks_high);
    const uint64_t per_interval = scan_.restart_interval != 0 ? scan_.restart_interval : units;
    uint64_t unit = 0;
    for (size_t interval = 0; unit < units; ++interval) {
      if (interval == intervals.ends.size()) fail("ends before its last block (a restart interval is missing)");
      const uint8_t* begin = intervals.bytes.data() + (interval == 0 ? 0 : intervals.ends[interval - 1]);
      BitReader reader(begin, intervals.bytes.data() + intervals.ends[interval]);
      reader_ = &reader;
      for (int& prediction : dc_predictions_) prediction = 0;
      end_of_band_run_ = 0;
      for (const uint64_t last = unit + per_interval < units ? unit + per_interval : units; unit < last; ++unit) {
        const auto x = static_cast<uint32_t>(unit % units_wide), y = static_cast<uint32_t>(unit / units_wide);
        if (interleaved) {
          for (size_t c = 0; c < scan_.components.size(); ++c) {
            const Component& component = *scan_.components[c].component;
            for (uint32_t v = 0; v < component.v; ++v) {
              for (uint32_t h = 0; h < component.h; ++h) decode_block(c, x * component.h + h, y * component.v + v);
            }
          }
        } else {
          decode_block(0, x, y);
        }
        if (reader.overran()) fail("ends before its last block");
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ImageError("JPEG: the data of scan " + std::to_string(scan_.number) + " " + what);
  }

  void decode_block(size_t c, uint32_t x, uint32_t y) {
    const ScanComponent& sc = scan_.components[c];
    Component& component = *sc.component;
    if (pass_ == Pass::Sequential) {
      int16_t block[64] = {};
      decode_sequential(sc, dc_predictions_[c], block);
      const size_t stride = size_t{component.padded_blocks_wide} * 8;
      idct_8x8(block, component.quant, component.samples.data() + (size_t{y} * stride + x) * 8, stride);
      return;
    }
    int16_t* block = component.coefficients.data() + (size_t{y} * component.padded_blocks_wide + x) * 64;
    switch (pass_) {
      case Pass::DcFirst: {
        const int value = dc_difference(*sc.dc, dc_predictions_[c]);
        block[0] = static_cast<int16_t>(static_cast<uint32_t>(value) << scan_.bit_low);
        break;
      }
      case Pass::DcRefine:
        if (reader_->bit() != 0) block[0] = static_cast<int16_t>(block[0] | 1 << scan_.bit_low);
        break;
      case Pass::AcFirst: decode_ac_first(*sc.ac, block); break;
      case Pass::AcRefine: decode_ac_refine(*sc.ac, block); break;
      case Pass::Sequential: break;
    }
  }

  // Adds the next DC difference (T.81 F.2.2.1) to `prediction` and returns it.
  int dc_difference(const HuffmanTable& table, int& prediction) {
    const int category = reader_->decode(table);
    if (category > 11) fail("has a DC difference of category " + std::to_string(category) + " (at most 11)");
    // Kept to 16 bits as the coefficients are; only corrupt data gets there.
    prediction = static_cast<int16_t>(prediction + reader_->extended(category));
    return prediction;
  }

  // One block of a sequential scan (T.81 F.2.2): the DC difference, then
  // (zero run, category) symbols up to the end of block.
  void decode_sequential(const ScanComponent& sc, int& prediction, int16_t block[64]) {
    block[0] = static_cast<int16_t>(dc_difference(*sc.dc, prediction));
    for (int k = 1; k < 64;) {
      const int symbol = reader_->decode(*sc.ac);
      const int run = symbol >> 4, category = symbol & 15;
      if (category == 0) {
        if (run != 15) return;  // end of block
        k += 16;                // 16 zeros
        continue;
      }
      k += run;
      if (k > 63) fail("has a run of zeros past the end of a block");
      block[kZigzag[k++]] = static_cast<int16_t>(reader_->extended(category));
    }
  }

  // The first scan of a band of AC coefficients (T.81 G.1.2.2): like a
  // sequential block, scaled by 2^Al, and an end-of-band run can span blocks.
  void decode_ac_first(const HuffmanTable& table, int16_t* block) {
    if (end_of_band_run_ > 0) {
      --end_of_band_run_;
      return;
    }
    for (int k = scan_.spectral_start; k <= scan_.spectral_end;) {
      const int symbol = reader_->decode(table);
      const int run = symbol >> 4, category = symbol & 15;
      if (category == 0) {
        if (run != 15) {  // EOBn: this block and 2^n + (n bits) - 1 more end here
          end_of_band_run_ = (1 << run) + reader_->bits(run) - 1;
          return;
        }
        k += 16;
        continue;
      }
      k += run;
      if (k > scan_.spectral_end) fail("has a run of zeros past the end of its band");
      block[kZigzag[k++]] = static_cast<int16_t>(static_cast<uint32_t>(reader_->extended(category)) << scan_.bit_low);
    }
  }

  // A refinement scan of a band of AC coefficients (T.81 G.1.2.3): coefficients
  // already nonzero get one more bit each (a correction bit, in order);
  // coefficients still zero are skipped by runs, and at most one per symbol
  // becomes +-2^Al.
  void decode_ac_refine(const HuffmanTable& table, int16_t* block) {
    const int one = 1 << scan_.bit_low;
    int k = scan_.spectral_start;
    if (end_of_band_run_ == 0) {
      while (k <= scan_.spectral_end) {
        const int symbol = reader_->decode(table);
        int zeros = symbol >> 4;
        const int category = symbol & 15;
        int new_value = 0;
        if (category == 0) {
          if (zeros != 15) {  // EOBn: the rest of this band and 2^n + (n bits) - 1 more bands only refine
            end_of_band_run_ = (1 << zeros) + reader_->bits(zeros);
            break;
          }
          // ZRL: 16 coefficients still zero pass by (the 16th gets the zero new_value)
        } else {
          if (category != 1) fail("has a refinement of a coefficient by more than one bit");
          new_value = reader_->bit() != 0 ? one : -one;
        }
        for (;; ++k) {
          if (k > scan_.spectral_end) {
            if (new_value != 0) fail("has a new coefficient past the end of its band");
            break;
          }
          int16_t& coefficient = block[kZigzag[k]];
          if (coefficient != 0) {
            refine(coefficient, one);
          } else if (zeros-- == 0) {
            coefficient = static_cast<int16_t>(new_value);
            ++k;
            break;
          }
        }
      }
    }
    if (end_of_band_run_ > 0) {
      for (; k <= scan_.spectral_end; ++k) {
        int16_t& coefficient = block[kZigzag[k]];
        if (coefficient != 0) refine(coefficient, one);
      }
      --end_of_band_run_;
    }
  }

  // Adds the correction bit to a coefficient's magnitude. That bit is still
  // zero: the scans follow the progression, so earlier ones set only higher bits.
  void refine(int16_t& coefficient, int one) {
    if (reader_->bit() != 0) {
      coefficient = static_cast<int16_t>(coefficient >= 0 ? coefficient + one : coefficient - one);
    }
  }

  Frame& frame_;
  const Scan& scan_;
  Pass pass_;
  BitReader* reader_ = nullptr;
  int dc_predictions_[4] = {};
  int end_of_band_run_ = 0;  // blocks left whose band holds only zeros (or only refinements)
};

}  // namespace

size_t decode_scan(const uint8_t* data, size_t size, size_t start, Frame& frame, const Scan& scan) {
  const Intervals intervals = split_intervals(data, size, start, scan);
  ScanDecoder(frame, scan).decode(intervals);
  return intervals.end_marker;
}

}  // namespace peak::image::jpeg
