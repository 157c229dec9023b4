#include "image/jpeg_exif.h"

#include <cstring>
#include <vector>

namespace peak::image::jpeg {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kTypeShort = 3, kTypeLong = 4;

// Reads the TIFF structure's integers in its byte order, bounds-checked.
class TiffReader {
 public:
  TiffReader(const uint8_t* data, size_t size, bool big_endian) : data_(data), size_(size), big_endian_(big_endian) {}
  bool has(uint64_t offset, uint64_t bytes) const { return offset <= size_ && bytes <= size_ - offset; }
  uint32_t u16(size_t offset) const { return read(offset, 2); }
  uint32_t u32(size_t offset) const { return read(offset, 4); }

 private:
  uint32_t read(size_t offset, int bytes) const {
    uint32_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= uint32_t{data_[offset + i]} << 8 * (big_endian_ ? bytes - 1 - i : i);
    return value;
  }
  const uint8_t* data_;
  size_t size_;
  bool big_endian_;
};

}  // namespace

int exif_orientation(const uint8_t* payload, size_t size) {
  // "Exif\0\0", then a TIFF file: byte order ("II" little, "MM" big), 42, the
  // offset of IFD0; an IFD is a count and 12-byte entries: tag, type, count,
  // value (inline when it fits in 4 bytes).
  static const uint8_t kExif[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (size < 6 + 8 || std::memcmp(payload, kExif, 6) != 0) return 0;
  const uint8_t* tiff = payload + 6;
  const size_t tiff_size = size - 6;
  bool big_endian;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    big_endian = false;
  } else if (tiff[0] == 'M' && tiff[1] == 'M') {
    big_endian = true;
  } else {
    return 0;
  }
  const TiffReader reader(tiff, tiff_size, big_endian);
  if (reader.u16(2) != 42) return 0;
  const uint64_t ifd = reader.u32(4);
  if (!reader.has(ifd, 2)) return 0;
  const uint32_t entries = reader.u16(ifd);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint64_t entry = ifd + 2 + 12 * uint64_t{i};
    if (!reader.has(entry, 12)) return 0;
    if (reader.u16(entry) != kOrientationTag) continue;
    const uint32_t type = reader.u16(entry + 2);
    if (reader.u32(entry + 4) != 1) return 0;
    const uint32_t value = type == kTypeShort ? reader.u16(entry + 8) : type == kTypeLong ? reader.u32(entry + 8) : 0;
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 0;
  }
  return 0;
}

void apply_orientation(Image& image, int orientation) {
  if (orientation < 2 || orientation > 8) return;
  // Output pixel (x, y) comes from source pixel start + x * step_x + y * step_y
  // (pixel indices in the width w, height h source); 5..8 swap the sides.
  const int64_t w = image.width, h = image.height;
  struct Walk {
    int64_t start, step_x, step_y;
  };
  const Walk walks[7] = {
      {w - 1, -1, w},                 // 2: mirrored left to right
      {(h - 1) * w + w - 1, -1, -w},  // 3: turned 180 degrees
      {(h - 1) * w, 1, -w},           // 4: mirrored top to bottom
      {0, w, 1},                      // 5: mirrored along the main diagonal
      {(h - 1) * w, -w, 1},           // 6: to be turned 90 degrees clockwise
      {(h - 1) * w + w - 1, -w, -1},  // 7: mirrored along the other diagonal
      {w - 1, w, -1},                 // 8: to be turned 90 degrees anticlockwise
  };
  const Walk walk = walks[orientation - 2];
  const bool swap = orientation >= 5;
  const int64_t out_width = swap ? h : w, out_height = swap ? w : h;
  const size_t channels = image.channels;
  std::vector<uint8_t> out(image.pixels.size());
  uint8_t* to = out.data();
  for (int64_t y = 0; y < out_height; ++y) {
    int64_t from = walk.start + y * walk.step_y;
    for (int64_t x = 0; x < out_width; ++x, from += walk.step_x, to += channels) {
      std::memcpy(to, image.pixels.data() + static_cast<size_t>(from) * channels, channels);
    }
  }
  image.pixels.swap(out);
  image.width = static_cast<uint32_t>(out_width);
  image.height = static_cast<uint32_t>(out_height);
}

}  // namespace peak::image::jpeg
