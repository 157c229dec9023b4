#include "image/png.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "image/inflate.h"

// Only what decides the pixels is read: IHDR, PLTE, tRNS, IDAT and IEND. Gamma,
// chromaticities, ICC profiles, sRGB intent, significant bits, background colour
// and text are ancillary and skipped, so samples come out as stored. An APNG's
// animation chunks (acTL, fcTL, fdAT) are ancillary too: such a file decodes as
// its default image, the IDAT one.

namespace peak::image {
namespace {

[[noreturn]] void fail(const std::string& why) { throw ImageError("PNG: " + why); }

uint32_t load_be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

// ---------------------------------------------------------------------------
// CRC-32 of chunks (PNG specification, Annex D: ISO 3309 polynomial, reflected)
// ---------------------------------------------------------------------------

// tables[0][n]: the CRC register after byte n is shifted through it, a byte at
// a time. tables[k][n]: the same with k zero bytes after it, so that four bytes
// are folded in at once (each through its own table, the results XORed).
struct CrcTables {
  uint32_t tables[4][256];
  CrcTables() {
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      tables[0][n] = c;
    }
    for (int k = 1; k < 4; ++k) {
      for (uint32_t n = 0; n < 256; ++n) {
        const uint32_t c = tables[k - 1][n];
        tables[k][n] = tables[0][c & 0xff] ^ (c >> 8);
      }
    }
  }
};

uint32_t crc32(const uint8_t* data, size_t size) {
  static const CrcTables crc;
  const auto& t = crc.tables;
  uint32_t c = 0xffffffffu;
  for (; size >= 4; size -= 4, data += 4) {
    c ^= uint32_t(data[0]) | uint32_t(data[1]) << 8 | uint32_t(data[2]) << 16 | uint32_t(data[3]) << 24;
    c = t[3][c & 0xff] ^ t[2][(c >> 8) & 0xff] ^ t[1][(c >> 16) & 0xff] ^ t[0][c >> 24];
  }
  for (; size > 0; --size) c = t[0][(c ^ *data++) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// ---------------------------------------------------------------------------
// Header and layout
// ---------------------------------------------------------------------------

enum ColourType : uint8_t { kGrey = 0, kRgb = 2, kPalette = 3, kGreyAlpha = 4, kRgba = 6 };

constexpr uint32_t kMaxPngLength = 0x7fffffffu;  // lengths and dimensions are at most 2^31 - 1

struct Header {
  uint32_t width = 0;
  uint32_t height = 0;
  unsigned depth = 0;  // bits per sample: 1, 2, 4, 8 or 16
  uint8_t colour_type = 0;
  bool interlaced = false;
  unsigned samples = 0;  // per pixel in the file: 1 (grey, palette index) to 4 (RGBA)
};

const char* colour_type_name(uint8_t colour_type) {
  switch (colour_type) {
    case kGrey: return "greyscale";
    case kRgb: return "RGB";
    case kPalette: return "palette";
    case kGreyAlpha: return "greyscale with alpha";
    case kRgba: return "RGBA";
    default: return "undefined";
  }
}

bool depth_allowed(uint8_t colour_type, unsigned depth) {
  switch (colour_type) {
    case kGrey: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case kPalette: return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    default: return depth == 8 || depth == 16;
  }
}

// Sizes of buffers, refused when they do not fit 64 bits (buffer_size then
// refuses what does not fit memory).
uint64_t checked_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) fail("image too large");
  return a * b;
}

uint64_t checked_add(uint64_t a, uint64_t b) {
  if (b > std::numeric_limits<uint64_t>::max() - a) fail("image too large");
  return a + b;
}

// One sub-image of filtered scanlines: the whole image, or one of Adam7's seven
// passes, whose pixels land at (x0 + i * dx, y0 + j * dy).
struct Pass {
  uint32_t x0, y0, dx, dy;
  int number = 0;  // Adam7's pass 1 to 7; 0 when not interlaced
  uint32_t width = 0, height = 0;
  uint64_t row_bytes = 0;  // a scanline without its filter type byte
  uint64_t offset = 0;     // of its first scanline in the inflated data
};

// The passes in the order their scanlines appear; those of no pixels (of an
// image narrower or lower than 8) left out.
std::vector<Pass> layout(const Header& h) {
  std::vector<Pass> passes;
  if (h.interlaced) {
    // Adam7 (PNG specification 8.2): origin and step of each pass in the 8 x 8 pattern.
    static const uint32_t kAdam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                          {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    for (int i = 0; i < 7; ++i) passes.push_back(Pass{kAdam7[i][0], kAdam7[i][1], kAdam7[i][2], kAdam7[i][3], i + 1});
  } else {
    passes.push_back(Pass{0, 0, 1, 1});
  }
  uint64_t offset = 0;
  std::vector<Pass> used;
  for (Pass p : passes) {
    p.width = h.width > p.x0 ? (h.width - p.x0 + p.dx - 1) / p.dx : 0;
    p.height = h.height > p.y0 ? (h.height - p.y0 + p.dy - 1) / p.dy : 0;
    if (p.width == 0 || p.height == 0) continue;
    p.row_bytes = (uint64_t(p.width) * h.samples * h.depth + 7) / 8;
    p.offset = offset;
    offset = checked_add(offset, checked_mul(p.row_bytes + 1, p.height));
    used.push_back(p);
  }
  return used;
}

uint64_t inflated_size(const std::vector<Pass>& passes) {
  const Pass& last = passes.back();
  return last.offset + (last.row_bytes + 1) * last.height;
}

// ---------------------------------------------------------------------------
// Filters (PNG specification 9)
// ---------------------------------------------------------------------------

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return uint8_t(a);
  return uint8_t(pb <= pc ? b : c);
}

// Undoes filter `type` on row[0, n) in place. prior: the row above, unfiltered
// (zeros for a pass's first row); bpp: bytes per complete pixel, at least 1.
bool unfilter(uint8_t type, uint8_t* row, const uint8_t* prior, size_t n, size_t bpp) {
  switch (type) {
    case 0: return true;
    case 1:
      for (size_t i = bpp; i < n; ++i) row[i] = uint8_t(row[i] + row[i - bpp]);
      return true;
    case 2:
      for (size_t i = 0; i < n; ++i) row[i] = uint8_t(row[i] + prior[i]);
      return true;
    case 3:
      for (size_t i = 0; i < std::min(bpp, n); ++i) row[i] = uint8_t(row[i] + (prior[i] >> 1));
      for (size_t i = bpp; i < n; ++i) row[i] = uint8_t(row[i] + ((row[i - bpp] + prior[i]) >> 1));
      return true;
    case 4:
      for (size_t i = 0; i < std::min(bpp, n); ++i) row[i] = uint8_t(row[i] + prior[i]);
      for (size_t i = bpp; i < n; ++i) row[i] = uint8_t(row[i] + paeth(row[i - bpp], prior[i], prior[i - bpp]));
      return true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------
// Samples to pixels
// ---------------------------------------------------------------------------

// Sample i of a scanline of `depth`-bit samples, packed from the high bits of
// each byte down (depths below 8) or big-endian (16).
uint32_t sample_at(const uint8_t* line, size_t i, unsigned depth) {
  switch (depth) {
    case 8: return line[i];
    case 16: return uint32_t(line[2 * i]) << 8 | line[2 * i + 1];
    default: {
      const size_t bit = i * depth;
      return (line[bit >> 3] >> (8 - depth - (bit & 7))) & ((1u << depth) - 1);
    }
  }
}

// A sample as 8 bits: low depths stretched over 0..255 (times 255 / (2^depth - 1)),
// 16-bit samples keeping their high byte.
uint8_t to_8bit(uint32_t sample, unsigned depth) {
  switch (depth) {
    case 1: return uint8_t(sample * 255);
    case 2: return uint8_t(sample * 85);
    case 4: return uint8_t(sample * 17);
    case 8: return uint8_t(sample);
    default: return uint8_t(sample >> 8);
  }
}

class PngDecoder {
 public:
  PngDecoder(const uint8_t* data, size_t size, const DecodeLimits& limits)
      : data_(data), size_(size), limits_(limits) {}

  Image decode() {
    static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (data_ == nullptr || size_ < sizeof kSignature || std::memcmp(data_, kSignature, sizeof kSignature) != 0) {
      fail("not a PNG file (bad signature)");
    }
    read_chunks(sizeof kSignature);
    return decode_pixels();
  }

 private:
  // --- chunks ---------------------------------------------------------------

  // Chunk after chunk to IEND. Each costs at least 12 bytes of the file and work
  // linear in its length, so the whole walk is linear in the file's size.
  void read_chunks(size_t offset) {
    std::string previous = "the signature";
    for (;;) {
      if (size_ - offset < 8) fail("truncated file (after " + previous + ", no IEND chunk)");
      const uint8_t* p = data_ + offset;
      const uint32_t length = load_be32(p);
      const uint8_t* type = p + 4;
      const std::string name = chunk_name(type);
      if (length > kMaxPngLength) fail("chunk " + name + " length " + std::to_string(length) + " exceeds 2^31 - 1");
      if (size_ - offset - 8 < uint64_t(length) + 4) fail("truncated file (in chunk " + name + ")");
      const uint8_t* body = p + 8;
      if (crc32(type, 4 + size_t(length)) != load_be32(body + length)) fail("bad CRC in chunk " + name);
      for (int i = 0; i < 4; ++i) {
        const uint8_t c = type[i] & ~0x20;  // upper case
        if (c < 'A' || c > 'Z') fail("bad chunk type " + name + " (not four letters)");
      }
      if (!seen_header_ && name != "IHDR") fail("the first chunk is " + name + ", not IHDR");

      if (name == "IEND") {
        if (!seen_idat_) fail("no IDAT chunk");
        return;  // bytes after IEND are not read
      }
      if (seen_idat_ && name != "IDAT") idat_ended_ = true;
      if (name == "IHDR") {
        read_header(body, length);
      } else if (name == "PLTE") {
        read_palette(body, length);
      } else if (name == "tRNS") {
        read_transparency(body, length);
      } else if (name == "IDAT") {
        if (idat_ended_) fail("IDAT chunks are not consecutive");
        if (header_.colour_type == kPalette && palette_size_ == 0) fail("palette image with no PLTE chunk before IDAT");
        if (!seen_idat_) compressed_.reserve(size_ - offset);  // what is left of the file bounds the data
        seen_idat_ = true;
        compressed_.insert(compressed_.end(), body, body + length);
      } else if ((type[0] & 0x20) == 0) {
        fail("unknown critical chunk " + name);
      }
      previous = "chunk " + name;
      offset += 12 + size_t(length);
    }
  }

  // The four type bytes, anything but a letter shown as '?'.
  static std::string chunk_name(const uint8_t* type) {
    std::string name(4, '?');
    for (int i = 0; i < 4; ++i) {
      if ((type[i] | 0x20) >= 'a' && (type[i] | 0x20) <= 'z') name[i] = char(type[i]);
    }
    return name;
  }

  void read_header(const uint8_t* body, uint32_t length) {
    if (seen_header_) fail("second IHDR chunk");
    seen_header_ = true;
    if (length != 13) fail("IHDR chunk of " + std::to_string(length) + " bytes (needs 13)");
    Header& h = header_;
    h.width = load_be32(body);
    h.height = load_be32(body + 4);
    h.depth = body[8];
    h.colour_type = body[9];
    if (h.width == 0) fail("width 0");
    if (h.height == 0) fail("height 0");
    if (h.width > kMaxPngLength) fail("width " + std::to_string(h.width) + " exceeds 2^31 - 1");
    if (h.height > kMaxPngLength) fail("height " + std::to_string(h.height) + " exceeds 2^31 - 1");
    switch (h.colour_type) {
      case kGrey: h.samples = 1; break;
      case kRgb: h.samples = 3; break;
      case kPalette: h.samples = 1; break;
      case kGreyAlpha: h.samples = 2; break;
      case kRgba: h.samples = 4; break;
      default: fail("colour type " + std::to_string(h.colour_type) + " is not defined");
    }
    if (!depth_allowed(h.colour_type, h.depth)) {
      fail("bit depth " + std::to_string(h.depth) + " is not allowed for colour type " + std::to_string(h.colour_type) +
           " (" + colour_type_name(h.colour_type) + ")");
    }
    if (body[10] != 0) fail("compression method " + std::to_string(body[10]) + " is not defined");
    if (body[11] != 0) fail("filter method " + std::to_string(body[11]) + " is not defined");
    if (body[12] > 1) fail("interlace method " + std::to_string(body[12]) + " is not defined");
    h.interlaced = body[12] == 1;

    check_limits("PNG", h.width, h.height, limits_);
  }

  void read_palette(const uint8_t* body, uint32_t length) {
    if (seen_idat_) fail("PLTE chunk after IDAT");
    if (seen_palette_) fail("second PLTE chunk");
    seen_palette_ = true;
    if (length == 0 || length % 3 != 0 || length > 3 * 256) {
      fail("PLTE chunk of " + std::to_string(length) + " bytes (needs 3 to 768, a multiple of 3)");
    }
    // Only a palette image's colours come from it; in an RGB image it merely
    // suggests a palette, and greyscale images should not have one.
    if (header_.colour_type != kPalette) return;
    palette_size_ = length / 3;
    for (unsigned i = 0; i < palette_size_; ++i) {
      palette_[4 * i + 0] = body[3 * i + 0];
      palette_[4 * i + 1] = body[3 * i + 1];
      palette_[4 * i + 2] = body[3 * i + 2];
      palette_[4 * i + 3] = 255;
    }
  }

  void read_transparency(const uint8_t* body, uint32_t length) {
    if (seen_idat_) fail("tRNS chunk after IDAT");
    if (seen_transparency_) fail("second tRNS chunk");
    seen_transparency_ = true;
    const auto needs = [&](uint32_t bytes) {
      if (length != bytes) {
        fail("tRNS chunk of " + std::to_string(length) + " bytes (colour type " + std::to_string(header_.colour_type) +
             ", " + colour_type_name(header_.colour_type) + ", needs " + std::to_string(bytes) + ")");
      }
    };
    switch (header_.colour_type) {
      case kGrey:
        needs(2);
        transparent_[0] = uint16_t(body[0] << 8 | body[1]);
        break;
      case kRgb:
        needs(6);
        for (int i = 0; i < 3; ++i) transparent_[i] = uint16_t(body[2 * i] << 8 | body[2 * i + 1]);
        break;
      case kPalette:
        if (palette_size_ == 0) fail("tRNS chunk before PLTE");
        if (length > palette_size_) {
          fail("tRNS chunk has " + std::to_string(length) + " entries, more than the " + std::to_string(palette_size_) +
               " of PLTE");
        }
        for (uint32_t i = 0; i < length; ++i) palette_[4 * i + 3] = body[i];
        break;
      default: return;  // forbidden with an alpha channel, which already says it all
    }
    has_transparency_ = true;
  }

  // --- pixels ---------------------------------------------------------------

  Image decode_pixels() {
    const Header& h = header_;
    const std::vector<Pass> passes = layout(h);
    const uint64_t expected = inflated_size(passes);
    // Deflate produces at most 258 bytes (a longest match) per 2 bits (one-bit
    // length and distance codes): data too short to fill the image is found
    // with no more memory than it could possibly fill.
    constexpr uint64_t kMaxDeflateRatio = 1032;
    const size_t capacity = buffer_size("PNG", std::min(expected, checked_mul(compressed_.size(), kMaxDeflateRatio)));
    // Left uninitialised: inflate writes every byte it reports, and only those are read.
    const std::unique_ptr<uint8_t[]> inflated(new uint8_t[capacity]);

    size_t produced = 0;
    try {
      produced = inflate_zlib(compressed_.data(), compressed_.size(), inflated.get(), capacity);
    } catch (const InflateError& e) {
      switch (e.kind) {
        case InflateError::Kind::OutputFull:
          fail("too much image data (more than the " + std::to_string(expected) + " bytes IHDR implies)");
        case InflateError::Kind::Truncated:
          if (e.produced < expected) ends_early(passes, e.produced);
          fail("image data ends early (the zlib stream stops after the last row)");
        case InflateError::Kind::Malformed: fail(std::string("bad compressed image data (") + e.what() + ")");
      }
    }
    if (produced < expected) ends_early(passes, produced);
    compressed_ = {};

    Image image;
    image.width = h.width;
    image.height = h.height;
    image.channels = (h.colour_type == kGreyAlpha || h.colour_type == kRgba || has_transparency_) ? 4 : 3;
    image.pixels.resize(buffer_size("PNG", checked_mul(uint64_t(h.width) * h.height, image.channels)));

    const size_t filter_bpp = std::max(1u, h.samples * h.depth / 8);
    uint64_t widest = 0;
    for (const Pass& pass : passes) widest = std::max(widest, pass.row_bytes);
    const std::vector<uint8_t> zero_row(buffer_size("PNG", widest));  // the row above each pass's first
    for (const Pass& pass : passes) {
      const uint8_t* prior = zero_row.data();
      for (uint32_t r = 0; r < pass.height; ++r) {
        uint8_t* scanline = inflated.get() + pass.offset + r * (pass.row_bytes + 1);
        uint8_t* row = scanline + 1;
        if (!unfilter(scanline[0], row, prior, size_t(pass.row_bytes), filter_bpp)) {
          fail("filter type " + std::to_string(scanline[0]) + " is not defined (" + where(pass, r) + ")");
        }
        const size_t y = pass.y0 + size_t(r) * pass.dy;
        uint8_t* out = image.pixels.data() + (y * h.width + pass.x0) * image.channels;
        expand_row(row, pass.width, out, size_t(pass.dx) * image.channels, image.channels);
        prior = row;
      }
    }
    return image;
  }

  // "row 3 of 40", or "pass 2, row 3 of 5" in an interlaced image (both from 1).
  static std::string where(const Pass& pass, uint32_t row) {
    const std::string text = "row " + std::to_string(row + 1) + " of " + std::to_string(pass.height);
    return pass.number == 0 ? text : "pass " + std::to_string(pass.number) + ", " + text;
  }

  [[noreturn]] static void ends_early(const std::vector<Pass>& passes, size_t produced) {
    for (const Pass& pass : passes) {
      const uint64_t end = pass.offset + (pass.row_bytes + 1) * pass.height;
      if (produced < end) {
        fail("image data ends early (" + where(pass, uint32_t((produced - pass.offset) / (pass.row_bytes + 1))) + ")");
      }
    }
    fail("image data ends early");
  }

  // Writes `count` pixels of an unfiltered scanline to out, `step` bytes apart,
  // as RGB or RGBA (`channels`).
  void expand_row(const uint8_t* line, uint32_t count, uint8_t* out, size_t step, unsigned channels) const {
    const unsigned depth = header_.depth;
    switch (header_.colour_type) {
      case kGrey:
        for (uint32_t i = 0; i < count; ++i, out += step) {
          const uint32_t v = sample_at(line, i, depth);
          out[0] = out[1] = out[2] = to_8bit(v, depth);
          if (channels == 4) out[3] = v == transparent_[0] ? 0 : 255;
        }
        return;
      case kRgb:
        if (depth == 8 && channels == 3 && step == 3) {
          std::memcpy(out, line, size_t(count) * 3);
          return;
        }
        for (uint32_t i = 0; i < count; ++i, out += step) {
          const uint32_t r = sample_at(line, 3 * size_t(i), depth), g = sample_at(line, 3 * size_t(i) + 1, depth),
                         b = sample_at(line, 3 * size_t(i) + 2, depth);
          out[0] = to_8bit(r, depth);
          out[1] = to_8bit(g, depth);
          out[2] = to_8bit(b, depth);
          if (channels == 4) out[3] = (r == transparent_[0] && g == transparent_[1] && b == transparent_[2]) ? 0 : 255;
        }
        return;
      case kPalette:
        for (uint32_t i = 0; i < count; ++i, out += step) {
          const uint32_t index = sample_at(line, i, depth);
          if (index >= palette_size_) {
            fail("palette index " + std::to_string(index) + " is out of range (PLTE has " +
                 std::to_string(palette_size_) + " entries)");
          }
          std::memcpy(out, &palette_[4 * index], channels);
        }
        return;
      case kGreyAlpha:
        for (uint32_t i = 0; i < count; ++i, out += step) {
          out[0] = out[1] = out[2] = to_8bit(sample_at(line, 2 * size_t(i), depth), depth);
          out[3] = to_8bit(sample_at(line, 2 * size_t(i) + 1, depth), depth);
        }
        return;
      default:  // kRgba
        if (depth == 8 && step == 4) {
          std::memcpy(out, line, size_t(count) * 4);
          return;
        }
        for (uint32_t i = 0; i < count; ++i, out += step) {
          for (size_t c = 0; c < 4; ++c) out[c] = to_8bit(sample_at(line, 4 * size_t(i) + c, depth), depth);
        }
        return;
    }
  }

  const uint8_t* data_;
  size_t size_;
  DecodeLimits limits_;

  Header header_;
  bool seen_header_ = false;
  bool seen_palette_ = false;
  bool seen_transparency_ = false;
  bool seen_idat_ = false;
  bool idat_ended_ = false;  // another chunk came after the IDAT run

  std::array<uint8_t, 256 * 4> palette_{};  // RGBA, alpha from tRNS (else 255)
  unsigned palette_size_ = 0;
  bool has_transparency_ = false;
  std::array<uint16_t, 3> transparent_{};  // the transparent grey or RGB sample values, at the file's depth
  std::vector<uint8_t> compressed_;        // the IDAT chunks' data, joined
};

}  // namespace

Image decode_png(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  return PngDecoder(data, size, limits).decode();
}

}  // namespace peak::image
