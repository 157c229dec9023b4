// The JPEG file (T.81 Annex B): its markers and segments, read one after the
// other up to EOI, then the frame's planes made into RGB pixels.
#include "image/jpeg.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "image/jpeg_color.h"
#include "image/jpeg_exif.h"
#include "image/jpeg_frame.h"
#include "image/jpeg_idct.h"

namespace peak::image {
namespace {

using jpeg::Component;
using jpeg::Frame;
using jpeg::HuffmanTable;
using jpeg::kZigzag;

// Each scan costs a pass over the blocks of its components, however few bytes
// it holds, so their number bounds the work a file can ask for. The progression
// rules alone allow up to 14 scans per coefficient of each component; encoders
// write about 10 in all, and 256 leaves room for any scan script a person
// would write.
constexpr int kMaxScans = 256;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

std::string hex(unsigned value) {
  static const char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[value >> 4 & 15] + kDigits[value & 15];
}

std::string marker_name(uint8_t marker) {
  switch (marker) {
    case 0xc4: return "DHT";
    case 0xcc: return "DAC";
    case 0xda: return "SOS";
    case 0xdb: return "DQT";
    case 0xdc: return "DNL";
    case 0xdd: return "DRI";
    case 0xfe: return "COM";
    default: break;
  }
  if (marker >= 0xc0 && marker <= 0xcf) return "SOF" + std::to_string(marker - 0xc0);
  if (marker >= 0xe0 && marker <= 0xef) return "APP" + std::to_string(marker - 0xe0);
  return "marker " + hex(marker);
}

uint32_t divide_up(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size, const DecodeLimits& limits) : data_(data), size_(size), limits_(limits) {}

  Image decode() {
    if (data_ == nullptr || size_ < 2 || data_[0] != 0xff || data_[1] != 0xd8) {
      throw ImageError("JPEG: not a JPEG file (no SOI marker)");
    }
    size_t pos = 2;
    for (;;) {
      // Bytes other than 0xFF between segments are corrupt data the reference
      // skips; any number of 0xFF fill bytes may precede a marker.
      while (pos < size_ && data_[pos] != 0xff) ++pos;
      while (pos < size_ && data_[pos] == 0xff) ++pos;
      if (pos >= size_) throw ImageError("JPEG: truncated file (no EOI marker)");
      const uint8_t marker = data_[pos++];
      if (marker == 0xd9) return finish();
      if (marker == 0x00 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;  // no segment
      if (marker == 0xd8) throw ImageError("JPEG: a second SOI marker");
      if (size_ - pos < 2) throw ImageError("JPEG: truncated file (in " + marker_name(marker) + " segment)");
      const size_t length = be16(data_ + pos);
      if (length < 2) {
        throw ImageError("JPEG: bad " + marker_name(marker) + " segment length " + std::to_string(length));
      }
      if (length > size_ - pos) throw ImageError("JPEG: truncated file (in " + marker_name(marker) + " segment)");
      const uint8_t* body = data_ + pos + 2;
      const size_t body_size = length - 2;
      pos += length;
      switch (marker) {
        case 0xc0:  // baseline
        case 0xc1:  // extended sequential, Huffman coding
        case 0xc2:  // progressive, Huffman coding
          read_frame(marker, body, body_size);
          break;
        case 0xc3: throw ImageError("JPEG: lossless JPEG is not supported");
        case 0xc5:
        case 0xc6:
        case 0xc7:
        case 0xde:  // DHP
        case 0xdf:  // EXP
          throw ImageError("JPEG: hierarchical JPEG is not supported");
        case 0xc9:
        case 0xca:
        case 0xcb:
        case 0xcc:  // DAC
        case 0xcd:
        case 0xce:
        case 0xcf: throw ImageError("JPEG: arithmetic coding is not supported");
        case 0xc4: read_huffman_tables(body, body_size); break;
        case 0xdb: read_quant_tables(body, body_size); break;
        case 0xdd:
          if (body_size != 2) throw ImageError("JPEG: bad DRI segment length " + std::to_string(length));
          restart_interval_ = be16(body);
          break;
        case 0xda: pos = read_scan(body, body_size, pos); break;
        case 0xdc:  // DNL: the frame header gave the height already
        case 0xfe:  // COM
          break;
        default:
          if (marker < 0xe0 || marker > 0xef) throw ImageError("JPEG: unknown marker " + hex(marker));
          read_application_segment(marker, body, body_size);
          break;
      }
    }
  }

 private:
  [[noreturn]] void bad_length(uint8_t marker, size_t body_size) const {
    throw ImageError("JPEG: bad " + marker_name(marker) + " segment length " + std::to_string(body_size + 2));
  }

  // SOF (T.81 B.2.2): precision, size, and each component's id, sampling
  // factors and quantization table.
  void read_frame(uint8_t marker, const uint8_t* body, size_t body_size) {
    if (frame_) throw ImageError("JPEG: more than one frame (SOF) marker");
    if (body_size < 6) bad_length(marker, body_size);
    const int precision = body[0];
    const uint32_t height = be16(body + 1), width = be16(body + 3);
    const int count = body[5];
    if (body_size != 6 + 3 * size_t(count)) bad_length(marker, body_size);
    if (precision != 8) throw ImageError("JPEG: " + std::to_string(precision) + "-bit precision is not supported");
    if (count == 4) throw ImageError("JPEG: CMYK is not supported");
    if (count != 1 && count != 3) throw ImageError("JPEG: " + std::to_string(count) + " components are not supported");
    if (width == 0 || height == 0) {
      throw ImageError("JPEG: " + std::to_string(width) + " x " + std::to_string(height) +
                       " pixels (a height given by a DNL marker is not supported)");
    }
    check_limits("JPEG", width, height, limits_);
    auto frame = std::make_unique<Frame>();
    frame->progressive = marker == 0xc2;
    frame->width = width;
    frame->height = height;
    frame->components.resize(count);
    for (int i = 0; i < count; ++i) {
      const uint8_t* spec = body + 6 + 3 * i;
      Component& c = frame->components[i];
      c.id = spec[0];
      c.h = spec[1] >> 4;
      c.v = spec[1] & 15;
      c.quant_table = spec[2];
      if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4) {
        throw ImageError("JPEG: sampling factors " + std::to_string(c.h) + "x" + std::to_string(c.v) +
                         " of component " + std::to_string(c.id) + " are out of range (1 to 4)");
      }
      if (c.quant_table > 3) {
        throw ImageError("JPEG: component " + std::to_string(c.id) + " names quantization table " +
                         std::to_string(c.quant_table) + " (0 to 3)");
      }
      for (int j = 0; j < i; ++j) {
        if (frame->components[j].id == c.id) throw ImageError("JPEG: two components with id " + std::to_string(c.id));
      }
      frame->max_h = std::max(frame->max_h, c.h);
      frame->max_v = std::max(frame->max_v, c.v);
    }
    frame->mcus_wide = divide_up(width, 8 * frame->max_h);
    frame->mcus_high = divide_up(height, 8 * frame->max_v);
    for (Component& c : frame->components) {
      // The upsampling ratios must be whole numbers (as the reference requires).
      if (frame->max_h % c.h != 0 || frame->max_v % c.v != 0) {
        throw ImageError("JPEG: sampling factors " + std::to_string(c.h) + "x" + std::to_string(c.v) +
                         " of component " + std::to_string(c.id) + " do not divide the largest (" +
                         std::to_string(frame->max_h) + "x" + std::to_string(frame->max_v) + ")");
      }
      c.width = divide_up(uint64_t{width} * c.h, frame->max_h);
      c.height = divide_up(uint64_t{height} * c.v, frame->max_v);
      c.blocks_wide = divide_up(c.width, 8);
      c.blocks_high = divide_up(c.height, 8);
      c.padded_blocks_wide = frame->mcus_wide * c.h;
      c.padded_blocks_high = frame->mcus_high * c.v;
      std::memset(c.coefficient_bits, -1, sizeof c.coefficient_bits);
    }
    frame_ = std::move(frame);
  }

  // DQT (T.81 B.2.4.1): one or more tables of 64 values, 8 or 16 bits each,
  // in zig-zag order.
  void read_quant_tables(const uint8_t* body, size_t body_size) {
    size_t pos = 0;
    while (pos < body_size) {
      const int precision = body[pos] >> 4, slot = body[pos] & 15;
      if (precision > 1) throw ImageError("JPEG: quantization table with precision " + std::to_string(precision));
      if (slot > 3) throw ImageError("JPEG: quantization table " + std::to_string(slot) + " (0 to 3)");
      const size_t bytes = 64 * size_t(precision + 1);
      if (body_size - pos - 1 < bytes) bad_length(0xdb, body_size);
      const uint8_t* values = body + pos + 1;
      for (int k = 0; k < 64; ++k) quant_[slot][kZigzag[k]] = precision == 0 ? values[k] : be16(values + 2 * k);
      quant_defined_[slot] = true;
      pos += 1 + bytes;
    }
  }

  // DHT (T.81 B.2.4.2): one or more tables: class (DC or AC) and slot, the
  // number of codes of each length 1..16, the symbols.
  void read_huffman_tables(const uint8_t* body, size_t body_size) {
    size_t pos = 0;
    while (pos < body_size) {
      if (body_size - pos < 17) bad_length(0xc4, body_size);
      const int table_class = body[pos] >> 4, slot = body[pos] & 15;
      if (table_class > 1 || slot > 3) {
        throw ImageError("JPEG: Huffman table of class " + std::to_string(table_class) + " in slot " +
                         std::to_string(slot) + " (class 0 or 1, slots 0 to 3)");
      }
      const uint8_t* counts = body + pos + 1;
      size_t total = 0;
      for (int i = 0; i < 16; ++i) total += counts[i];
      if (total > 256) throw ImageError("JPEG: Huffman table with more than 256 codes");
      if (body_size - pos - 17 < total) bad_length(0xc4, body_size);
      huffman_[table_class][slot] = jpeg::build_huffman_table(counts, body + pos + 17);
      pos += 17 + total;
    }
  }

  // APPn: JFIF (APP0) and Adobe (APP14) say which colour transform the file
  // uses; the first Exif (APP1) gives the orientation. Others are skipped.
  void read_application_segment(uint8_t marker, const uint8_t* body, size_t body_size) {
    if (marker == 0xe0 && body_size >= 14 && std::memcmp(body, "JFIF", 5) == 0) saw_jfif_ = true;
    if (marker == 0xee && body_size >= 12 && std::memcmp(body, "Adobe", 5) == 0) adobe_transform_ = body[11];
    if (marker == 0xe1 && !saw_exif_ && body_size >= 6 && std::memcmp(body, "Exif\0", 6) == 0) {
      saw_exif_ = true;
      orientation_ = jpeg::exif_orientation(body, body_size);
    }
  }

  // SOS (T.81 B.2.3): the components of the scan and their Huffman tables,
  // the band (Ss, Se) and bit positions (Ah, Al); then its entropy-coded data.
  // Returns the offset of the marker after the data.
  size_t read_scan(const uint8_t* body, size_t body_size, size_t data_start) {
    if (!frame_) throw ImageError("JPEG: a scan (SOS) before the frame header (SOF)");
    if (++scans_ > kMaxScans) throw ImageError("JPEG: more than " + std::to_string(kMaxScans) + " scans");
    Frame& frame = *frame_;
    jpeg::Scan scan;
    scan.number = scans_;
    scan.restart_interval = restart_interval_;
    const std::string in_scan = " (in scan " + std::to_string(scan.number) + ")";
    if (body_size < 1) bad_length(0xda, body_size);
    const size_t count = body[0];
    if (count < 1 || count > 4 || body_size != 4 + 2 * count) bad_length(0xda, body_size);
    const uint8_t* bands = body + 1 + 2 * count;
    scan.spectral_start = bands[0];
    scan.spectral_end = bands[1];
    scan.bit_high = bands[2] >> 4;
    scan.bit_low = bands[2] & 15;
    if (frame.progressive) check_progressive_band(scan, count, in_scan);

    uint32_t blocks_per_mcu = 0;
    for (size_t i = 0; i < count; ++i) {
      const uint8_t id = body[1 + 2 * i];
      Component* component = nullptr;
      for (Component& c : frame.components) component = c.id == id ? &c : component;
      if (component == nullptr) {
        throw ImageError("JPEG: scan " + std::to_string(scan.number) + " names component " + std::to_string(id) +
                         ", which the frame does not have");
      }
      for (const jpeg::ScanComponent& earlier : scan.components) {
        if (earlier.component == component) {
          throw ImageError("JPEG: component " + std::to_string(id) + " twice" + in_scan);
        }
      }
      blocks_per_mcu += component->h * component->v;
      const int dc_slot = body[2 + 2 * i] >> 4, ac_slot = body[2 + 2 * i] & 15;
      const bool uses_dc = !frame.progressive || (scan.spectral_start == 0 && scan.bit_high == 0);
      const bool uses_ac = !frame.progressive || scan.spectral_start > 0;
      scan.components.push_back({component, uses_dc ? huffman_table(0, dc_slot, scan.number) : nullptr,
                                 uses_ac ? huffman_table(1, ac_slot, scan.number) : nullptr});
      if (frame.progressive) {
        follow_progression(*component, scan, in_scan);
      } else if (component->scanned) {
        throw ImageError("JPEG: component " + std::to_string(id) + " in two scans of a sequential frame");
      }
      if (!component->scanned) {
        if (!quant_defined_[component->quant_table]) {
          throw ImageError("JPEG: quantization table " + std::to_string(component->quant_table) + " is not defined" +
                           in_scan);
        }
        std::memcpy(component->quant, quant_[component->quant_table], sizeof component->quant);
        component->scanned = true;
      }
    }
    if (count > 1 && blocks_per_mcu > 10) throw ImageError("JPEG: more than 10 blocks in an MCU" + in_scan);
    if (scans_ == 1) allocate_planes_or_coefficients();
    return jpeg::decode_scan(data_, size_, data_start, frame, scan);
  }

  const HuffmanTable* huffman_table(int table_class, int slot, int scan_number) const {
    if (slot > 3 || !huffman_[table_class][slot]) {
      throw ImageError("JPEG: Huffman table " + std::to_string(slot) + " is not defined (" +
                       (table_class == 0 ? "DC" : "AC") + ", scan " + std::to_string(scan_number) + ")");
    }
    return &*huffman_[table_class][slot];
  }

  // The band and bit positions a progressive scan may have (T.81 G.1.1.1).
  static void check_progressive_band(const jpeg::Scan& scan, size_t count, const std::string& in_scan) {
    const int ss = scan.spectral_start, se = scan.spectral_end, ah = scan.bit_high, al = scan.bit_low;
    const bool valid =
        ss <= se && se <= 63 && (ss == 0 ? se == 0 : count == 1) && (ah == 0 || al == ah - 1) && al <= 13;
    if (!valid) {
      throw ImageError("JPEG: bad progressive scan: Ss " + std::to_string(ss) + ", Se " + std::to_string(se) + ", Ah " +
                       std::to_string(ah) + ", Al " + std::to_string(al) + ", " + std::to_string(count) +
                       " components" + in_scan);
    }
  }

  // Each scan of a progressive frame must continue the coefficients where the
  // previous scan of them stopped (T.81 G.1.1.1): DC before any AC, a first
  // scan of a band (Ah 0) only once, each refinement one bit further. This also
  // bounds the passes over each coefficient to 14.
  static void follow_progression(Component& component, const jpeg::Scan& scan, const std::string& in_scan) {
    if (scan.spectral_start > 0 && component.coefficient_bits[0] < 0) {
      throw ImageError("JPEG: AC coefficients of component " + std::to_string(component.id) +
                       " before its DC coefficients" + in_scan);
    }
    const int expected = scan.bit_high == 0 ? -1 : scan.bit_high;
    for (int k = scan.spectral_start; k <= scan.spectral_end; ++k) {
      if (component.coefficient_bits[k] != expected) {
        throw ImageError("JPEG: coefficient " + std::to_string(k) + " of component " + std::to_string(component.id) +
                         (expected < 0 ? " sent twice" : " refined out of order") + in_scan);
      }
      component.coefficient_bits[k] = static_cast<int8_t>(scan.bit_low);
    }
  }

  // Sequential frames decode straight into samples; progressive ones keep
  // coefficients until the last scan.
  void allocate_planes_or_coefficients() {
    for (Component& c : frame_->components) {
      const uint64_t blocks = uint64_t{c.padded_blocks_wide} * c.padded_blocks_high;
      if (frame_->progressive) {
        c.coefficients.assign(buffer_size("JPEG", blocks * 64 * sizeof(int16_t)) / sizeof(int16_t), 0);
      } else {
        c.samples.assign(buffer_size("JPEG", blocks * 64), 0);
      }
    }
  }

  // The colour transform of a 3-component frame, as the reference decides:
  // JFIF means YCbCr; else Adobe's flag (0: none, RGB); else the component ids
  // 'R', 'G', 'B' mean RGB; YCbCr otherwise.
  jpeg::ColorTransform color_transform() const {
    if (frame_->components.size() == 1) return jpeg::ColorTransform::Grey;
    if (saw_jfif_) return jpeg::ColorTransform::YCbCr;
    if (adobe_transform_) return *adobe_transform_ == 0 ? jpeg::ColorTransform::Rgb : jpeg::ColorTransform::YCbCr;
    const auto& c = frame_->components;
    const bool rgb_ids = c[0].id == 'R' && c[1].id == 'G' && c[2].id == 'B';
    return rgb_ids ? jpeg::ColorTransform::Rgb : jpeg::ColorTransform::YCbCr;
  }

  // EOI: the coefficients of a progressive frame become samples, the samples
  // become RGB pixels, turned upright.
  Image finish() {
    if (!frame_) throw ImageError("JPEG: no frame header (SOF) before EOI");
    for (const Component& c : frame_->components) {
      if (!c.scanned) throw ImageError("JPEG: no scan holds component " + std::to_string(c.id));
    }
    jpeg::Plane planes[3];
    for (size_t i = 0; i < frame_->components.size(); ++i) {
      Component& c = frame_->components[i];
      const size_t stride = size_t{c.padded_blocks_wide} * 8;
      if (frame_->progressive) {
        c.samples.resize(buffer_size("JPEG", uint64_t{stride} * c.padded_blocks_high * 8));
        for (uint32_t y = 0; y < c.blocks_high; ++y) {
          for (uint32_t x = 0; x < c.blocks_wide; ++x) {
            const int16_t* block = c.coefficients.data() + (size_t{y} * c.padded_blocks_wide + x) * 64;
            jpeg::idct_8x8(block, c.quant, c.samples.data() + (size_t{y} * stride + x) * 8, stride);
          }
        }
        std::vector<int16_t>().swap(c.coefficients);
      }
      planes[i] = {c.samples.data(), stride, c.width, c.height, frame_->max_h / c.h, frame_->max_v / c.v};
    }
    Image image;
    image.width = frame_->width;
    image.height = frame_->height;
    image.channels = 3;
    image.pixels.resize(buffer_size("JPEG", uint64_t{image.width} * image.height * 3));
    jpeg::planes_to_rgb(planes, color_transform(), image.width, image.height, image.pixels.data());
    frame_.reset();
    jpeg::apply_orientation(image, orientation_);
    return image;
  }

  const uint8_t* data_;
  size_t size_;
  DecodeLimits limits_;
  std::unique_ptr<Frame> frame_;
  uint16_t quant_[4][64] = {};  // natural order
  bool quant_defined_[4] = {};
  std::optional<HuffmanTable> huffman_[2][4];  // [DC, AC][slot]
  uint32_t restart_interval_ = 0;
  int scans_ = 0;
  bool saw_jfif_ = false;
  std::optional<uint8_t> adobe_transform_;
  bool saw_exif_ = false;
  int orientation_ = 0;
};

}  // namespace

Image decode_jpeg(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  return Decoder(data, size, limits).decode();
}

}  // namespace peak::image
