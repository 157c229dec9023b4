// The JPEG decoder against pixels another decoder wrote: tests/data/images/jpeg
// holds files made by make_jpeg_images.py (Debian's python3-pil 9.4 with
// libjpeg-turbo 2.1.5, cjpeg, jpegtran, ImageMagick) and, for each, the pixels
// PIL decodes (binary PPM), listed in corpus.txt. Every file must decode to its
// reference exactly: the decoder computes the same integer IDCT, upsampling and
// colour conversion. Malformed files, made here by editing corpus files, must be
// refused with the message that names what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "image/image.h"
#include "image/jpeg.h"
#include "image/jpeg_exif.h"
#include "netpbm.h"

namespace peak::image {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(PEAK_TEST_DATA_DIR) + "/images/jpeg/";

Bytes read_file(const std::string& name) { return read_bytes(kDir + name); }

Image decode_bytes(const Bytes& bytes, const DecodeLimits& limits = {}) {
  return decode_jpeg(bytes.data(), bytes.size(), limits);
}

// The message decoding `bytes` throws, or "" when it decodes.
std::string refusal(const Bytes& bytes, const DecodeLimits& limits = {}) {
  try {
    decode_bytes(bytes, limits);
  } catch (const ImageError& e) {
    return e.what();
  }
  return "";
}

struct CorpusEntry {
  std::string file, reference;
  int max_difference;
};

std::vector<CorpusEntry> corpus() {
  std::ifstream in(kDir + "corpus.txt");
  std::vector<CorpusEntry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    CorpusEntry entry;
    fields >> entry.file >> entry.reference >> entry.max_difference;
    entries.push_back(entry);
  }
  return entries;
}

TEST(JpegCorpus, EveryFileDecodesToThePixelsOfTheReference) {
  const std::vector<CorpusEntry> entries = corpus();
  ASSERT_GE(entries.size(), 60u);
  for (const CorpusEntry& entry : entries) {
    SCOPED_TRACE(entry.file);
    const Image expected = read_netpbm(kDir + entry.reference);
    Image actual;
    ASSERT_NO_THROW(actual = decode_bytes(read_file(entry.file))) << refusal(read_file(entry.file));
    ASSERT_EQ(actual.width, expected.width);
    ASSERT_EQ(actual.height, expected.height);
    ASSERT_EQ(actual.channels, 3u);
    int worst = 0;
    size_t differing = 0;
    for (size_t i = 0; i < expected.pixels.size(); ++i) {
      const int difference = std::abs(actual.pixels[i] - expected.pixels[i]);
      worst = std::max(worst, difference);
      differing += difference != 0;
    }
    EXPECT_LE(worst, entry.max_difference) << differing << " of " << expected.pixels.size() << " samples differ";
  }
}

TEST(JpegCorpus, DecodeChoosesTheJpegDecoderBySignature) {
  const Bytes bytes = read_file("s420.jpg");
  EXPECT_EQ(sniff(bytes.data(), bytes.size()), Format::Jpeg);
  const Image image = decode(bytes.data(), bytes.size());
  EXPECT_EQ(image.pixels, read_netpbm(kDir + "s420.ppm").pixels);
}

// ---------------------------------------------------------------- editing files

// A marker segment of a file: the marker at `offset`, `size` bytes with the
// marker and length; for SOS, `data_end` is where its entropy-coded data ends.
struct Segment {
  uint8_t marker;
  size_t offset, size, data_end;
};

std::vector<Segment> segments(const Bytes& file) {
  std::vector<Segment> out;
  size_t pos = 2;
  while (pos + 4 <= file.size() && file[pos] == 0xff && file[pos + 1] != 0xd9) {
    const uint8_t marker = file[pos + 1];
    const size_t size = 2 + (size_t{file[pos + 2]} << 8 | file[pos + 3]);
    size_t end = pos + size;
    if (marker == 0xda) {  // up to the next marker other than RSTn
      while (!(file[end] == 0xff && file[end + 1] != 0 && (file[end + 1] < 0xd0 || file[end + 1] > 0xd7))) ++end;
    }
    out.push_back({marker, pos, size, end});
    pos = end;
  }
  return out;
}

const Segment& first(const std::vector<Segment>& all, uint8_t marker) {
  for (const Segment& s : all) {
    if (s.marker == marker) return s;
  }
  throw std::runtime_error("no such segment");
}

Bytes without_segments(const Bytes& file, uint8_t marker) {
  Bytes out(file.begin(), file.begin() + 2);
  size_t pos = 2;
  for (const Segment& s : segments(file)) {
    if (s.marker != marker) out.insert(out.end(), file.begin() + s.offset, file.begin() + s.data_end);
    pos = s.data_end;
  }
  out.insert(out.end(), file.begin() + pos, file.end());
  return out;
}

Bytes with_byte(Bytes file, size_t offset, uint8_t value) {
  file.at(offset) = value;
  return file;
}

Bytes with_bytes(Bytes file, size_t offset, const Bytes& values) {
  std::copy(values.begin(), values.end(), file.begin() + offset);
  return file;
}

Bytes inserted(const Bytes& file, size_t offset, const Bytes& bytes) {
  Bytes out(file.begin(), file.begin() + offset);
  out.insert(out.end(), bytes.begin(), bytes.end());
  out.insert(out.end(), file.begin() + offset, file.end());
  return out;
}

// Where Huffman table (class, slot) of a file keeps its 16 code counts, and
// how many symbols follow them.
struct HuffmanTableBytes {
  size_t counts, symbols;
};

HuffmanTableBytes huffman_table_in(const Bytes& file, int table_class, int slot) {
  for (const Segment& s : segments(file)) {
    for (size_t pos = s.offset + 4; s.marker == 0xc4 && pos < s.offset + s.size;) {
      size_t total = 0;
      for (int i = 0; i < 16; ++i) total += file[pos + 1 + i];
      if (file[pos] == (table_class << 4 | slot)) return {pos + 1, total};
      pos += 17 + total;
    }
  }
  throw std::runtime_error("no such Huffman table");
}

Bytes with_symbols(Bytes file, int table_class, int slot, uint8_t symbol) {
  const HuffmanTableBytes table = huffman_table_in(file, table_class, slot);
  std::fill_n(file.begin() + static_cast<ptrdiff_t>(table.counts + 16), table.symbols, symbol);
  return file;
}

// ---------------------------------------------------------------- refusals

TEST(JpegRefuses, ArithmeticCodingCmykLosslessHierarchicalAnd12Bit) {
  EXPECT_EQ(refusal(read_file("arithmetic.jpg")), "JPEG: arithmetic coding is not supported");
  EXPECT_EQ(refusal(read_file("cmyk.jpg")), "JPEG: CMYK is not supported");
  const Bytes baseline = read_file("baseline.jpg");
  const Segment sof = first(segments(baseline), 0xc0);
  EXPECT_EQ(refusal(with_byte(baseline, sof.offset + 1, 0xc3)), "JPEG: lossless JPEG is not supported");
  EXPECT_EQ(refusal(with_byte(baseline, sof.offset + 1, 0xc5)), "JPEG: hierarchical JPEG is not supported");
  EXPECT_EQ(refusal(with_byte(baseline, sof.offset + 1, 0xca)), "JPEG: arithmetic coding is not supported");
  EXPECT_EQ(refusal(with_byte(baseline, sof.offset + 4, 12)), "JPEG: 12-bit precision is not supported");
  // Two components: neither grey nor colour.
  Bytes two = with_byte(baseline, sof.offset + 9, 2);
  two = with_byte(two, sof.offset + 3, static_cast<uint8_t>(two[sof.offset + 3] - 3));
  EXPECT_EQ(refusal(two), "JPEG: 2 components are not supported");
}

TEST(JpegRefuses, NotAJpegFile) {
  EXPECT_EQ(refusal({}), "JPEG: not a JPEG file (no SOI marker)");
  EXPECT_EQ(refusal({0xff}), "JPEG: not a JPEG file (no SOI marker)");
  EXPECT_EQ(refusal({0x89, 'P', 'N', 'G'}), "JPEG: not a JPEG file (no SOI marker)");
  EXPECT_EQ(refusal({0xff, 0xd8, 0xff, 0xd9}), "JPEG: no frame header (SOF) before EOI");
  EXPECT_EQ(refusal({0xff, 0xd8, 0xff, 0xd8}), "JPEG: a second SOI marker");
}

// Every prefix of a file is refused: a file must end with EOI, and a scan whose
// data the file cuts short names itself.
TEST(JpegRefuses, EveryTruncation) {
  for (const char* name : {"baseline.jpg", "grey.jpg", "restart_2.jpg", "progressive_successive_restart.jpg",
                           "s411_odd.jpg", "exif_6.jpg"}) {
    SCOPED_TRACE(name);
    const Bytes file = read_file(name);
    const std::vector<Segment> all = segments(file);
    for (size_t size = 0; size < file.size(); ++size) {
      const std::string message = refusal(Bytes(file.begin(), file.begin() + size));
      if (size < 2) {
        EXPECT_EQ(message, "JPEG: not a JPEG file (no SOI marker)");
        continue;
      }
      ASSERT_THAT(message, HasSubstr("JPEG: truncated file")) << size;
      int scan = 0;
      for (const Segment& s : all) {
        scan += s.marker == 0xda;
        if (s.marker == 0xda && size >= s.offset + s.size && size < s.data_end) {
          EXPECT_EQ(message, "JPEG: truncated file (in scan " + std::to_string(scan) + ")") << size;
        }
      }
    }
  }
}

TEST(JpegRefuses, AFileWithoutEoi) {
  // Its scans complete, but nothing says that no scan follows.
  const Bytes file = read_file("progressive.jpg");
  Bytes no_eoi(file.begin(), file.end() - 2);
  no_eoi.insert(no_eoi.end(), {0xff, 0xfe, 0x00, 0x02});
  EXPECT_EQ(refusal(no_eoi), "JPEG: truncated file (no EOI marker)");
}

TEST(JpegRefuses, DataThatEndsBeforeTheLastBlock) {
  // EOI in the middle of the entropy-coded data: the rest of the blocks would
  // be made up.
  const Bytes file = read_file("baseline.jpg");
  const Segment sos = first(segments(file), 0xda);
  const size_t middle = (sos.offset + sos.size + sos.data_end) / 2;
  const Bytes cut = inserted(Bytes(file.begin(), file.begin() + middle), middle, {0xff, 0xd9});
  EXPECT_EQ(refusal(cut), "JPEG: the data of scan 1 ends before its last block");
  // A missing restart interval.
  const Bytes restarts = read_file("restart_2.jpg");
  const Segment scan = first(segments(restarts), 0xda);
  size_t last_restart = 0;
  for (size_t i = scan.offset + scan.size; i + 1 < scan.data_end; ++i) {
    if (restarts[i] == 0xff && restarts[i + 1] >= 0xd0 && restarts[i + 1] <= 0xd7) last_restart = i;
  }
  ASSERT_NE(last_restart, 0u);
  Bytes without_last(restarts.begin(), restarts.begin() + last_restart);
  without_last.insert(without_last.end(), {0xff, 0xd9});
  EXPECT_EQ(refusal(without_last),
            "JPEG: the data of scan 1 ends before its last block (a restart interval is missing)");
}

TEST(JpegRefuses, CorruptHuffmanData) {
  // All one bits: the all-ones code is reserved in every table.
  Bytes file = read_file("baseline.jpg");
  const Segment sos = first(segments(file), 0xda);
  for (size_t i = sos.offset + sos.size; i + 1 < sos.data_end; i += 2) {
    file[i] = 0xff;
    file[i + 1] = 0x00;
  }
  EXPECT_EQ(refusal(file), "JPEG: bad Huffman code");
}

TEST(JpegRefuses, SymbolsThatLeadOutOfTheBlock) {
  const Bytes file = read_file("baseline.jpg");
  // Every DC code standing for a difference of 12 bits: 8-bit samples need 11 at most.
  EXPECT_EQ(refusal(with_symbols(file, 0, 0, 12)),
            "JPEG: the data of scan 1 has a DC difference of category 12 (at most 11)");
  // Every AC code standing for 15 zeros and a 1: the fourth such run passes
  // coefficient 63.
  EXPECT_EQ(refusal(with_symbols(file, 1, 0, 0xf1)),
            "JPEG: the data of scan 1 has a run of zeros past the end of a block");
}

TEST(JpegRefuses, WrongRestartMarker) {
  Bytes file = read_file("restart_2.jpg");
  const Segment sos = first(segments(file), 0xda);
  for (size_t i = sos.offset + sos.size; i + 1 < sos.data_end; ++i) {
    if (file[i] == 0xff && file[i + 1] == 0xd1) {
      file[i + 1] = 0xd2;
      break;
    }
  }
  EXPECT_EQ(refusal(file), "JPEG: expected RST1 marker, found RST2 (in scan 1)");
  // RST markers in a scan without a restart interval.
  EXPECT_EQ(refusal(without_segments(read_file("restart_2.jpg"), 0xdd)),
            "JPEG: RST0 marker in scan 1, which has no restart interval");
}

TEST(JpegRefuses, MissingTables) {
  EXPECT_EQ(refusal(without_segments(read_file("baseline.jpg"), 0xc4)),
            "JPEG: Huffman table 0 is not defined (DC, scan 1)");
  EXPECT_EQ(refusal(without_segments(read_file("baseline.jpg"), 0xdb)),
            "JPEG: quantization table 0 is not defined (in scan 1)");
  // The AC table of the chroma components (slot 1) redirected to empty slot 2.
  const Bytes file = read_file("baseline.jpg");
  const Segment sos = first(segments(file), 0xda);
  ASSERT_EQ(file[sos.offset + 8], 0x11);  // Cb: DC table 1, AC table 1
  EXPECT_EQ(refusal(with_byte(file, sos.offset + 8, 0x12)), "JPEG: Huffman table 2 is not defined (AC, scan 1)");
}

TEST(JpegRefuses, BadSegmentLengths) {
  const Bytes file = read_file("baseline.jpg");
  const std::vector<Segment> all = segments(file);
  const Segment dqt = first(all, 0xdb), sof = first(all, 0xc0), dht = first(all, 0xc4), sos = first(all, 0xda);
  const auto with_length = [&](const Segment& s, size_t length) {
    return with_bytes(file, s.offset + 2, {static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length)});
  };
  EXPECT_EQ(refusal(with_length(dqt, 1)), "JPEG: bad DQT segment length 1");
  EXPECT_EQ(refusal(with_length(dqt, dqt.size - 3)), "JPEG: bad DQT segment length " + std::to_string(dqt.size - 3));
  EXPECT_EQ(refusal(with_length(sof, sof.size - 3)), "JPEG: bad SOF0 segment length " + std::to_string(sof.size - 3));
  EXPECT_EQ(refusal(with_length(sof, sof.size - 1)), "JPEG: bad SOF0 segment length " + std::to_string(sof.size - 1));
  EXPECT_EQ(refusal(with_length(dht, dht.size - 3)), "JPEG: bad DHT segment length " + std::to_string(dht.size - 3));
  EXPECT_EQ(refusal(with_length(sos, sos.size - 3)), "JPEG: bad SOS segment length " + std::to_string(sos.size - 3));
  EXPECT_EQ(refusal(with_length(dqt, 60000)), "JPEG: truncated file (in DQT segment)");
  const Bytes dri = {0xff, 0xdd, 0x00, 0x05, 0x00, 0x01, 0x00};
  EXPECT_EQ(refusal(inserted(file, sof.offset, dri)), "JPEG: bad DRI segment length 5");
}

TEST(JpegRefuses, BadTables) {
  const Bytes file = read_file("baseline.jpg");
  const std::vector<Segment> all = segments(file);
  const Segment dqt = first(all, 0xdb), dht = first(all, 0xc4);
  EXPECT_EQ(refusal(with_byte(file, dqt.offset + 4, 0x20)), "JPEG: quantization table with precision 2");
  EXPECT_EQ(refusal(with_byte(file, dqt.offset + 4, 0x04)), "JPEG: quantization table 4 (0 to 3)");
  EXPECT_EQ(refusal(with_byte(file, dht.offset + 4, 0x20)),
            "JPEG: Huffman table of class 2 in slot 0 (class 0 or 1, slots 0 to 3)");
  // The standard luminance DC table: one 2-bit code, five 3-bit codes, ...
  // Made one 1-bit code ("0"), no 2-bit code, the five 3-bit codes cannot all
  // fit in 100..110 (all ones, 111, is reserved).
  ASSERT_EQ(file[dht.offset + 4], 0x00);
  ASSERT_EQ(file[dht.offset + 6], 1);
  ASSERT_EQ(file[dht.offset + 7], 5);
  EXPECT_EQ(refusal(with_bytes(file, dht.offset + 5, {1, 0})), "JPEG: bad Huffman table (too many codes of length 3)");
  // Codes 0, 10, 110 and 111: the last is all ones, which T.81 reserves.
  const Bytes all_ones = {0xff, 0xc4, 0x00, 0x17, 0x00, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3};
  EXPECT_EQ(refusal(inserted(file, first(all, 0xda).offset, all_ones)),
            "JPEG: bad Huffman table (too many codes of length 3)");
}

TEST(JpegRefuses, DimensionsOutsideTheLimits) {
  const Bytes file = read_file("photo_420.jpg");  // 256 x 192
  const Segment sof = first(segments(file), 0xc0);
  const auto with_size = [&](uint16_t width, uint16_t height) {
    return with_bytes(file, sof.offset + 5,
                      {static_cast<uint8_t>(height >> 8), static_cast<uint8_t>(height),
                       static_cast<uint8_t>(width >> 8), static_cast<uint8_t>(width)});
  };
  EXPECT_EQ(refusal(with_size(0, 192)), "JPEG: 0 x 192 pixels (a height given by a DNL marker is not supported)");
  EXPECT_EQ(refusal(with_size(256, 0)), "JPEG: 256 x 0 pixels (a height given by a DNL marker is not supported)");
  EXPECT_EQ(refusal(with_size(65535, 65535)), "JPEG: 65535 x 65535 pixels exceeds the limit of 16384 pixels a side");
  EXPECT_EQ(refusal(with_size(16384, 16384)), "JPEG: 16384 x 16384 pixels exceeds the limit of 67108864 pixels");

  DecodeLimits limits;
  limits.max_dimension = 255;
  EXPECT_EQ(refusal(file, limits), "JPEG: 256 x 192 pixels exceeds the limit of 255 pixels a side");
  limits.max_dimension = 256;
  EXPECT_EQ(refusal(file, limits), "");
  limits.max_pixels = 256 * 192 - 1;
  EXPECT_EQ(refusal(file, limits), "JPEG: 256 x 192 pixels exceeds the limit of 49151 pixels");
  limits.max_pixels = 256 * 192;
  EXPECT_EQ(refusal(file, limits), "");
}

TEST(JpegRefuses, BadSamplingFactors) {
  const Bytes file = read_file("s420.jpg");  // Y 2x2, Cb 1x1, Cr 1x1
  const Segment sof = first(segments(file), 0xc0);
  const size_t y_factors = sof.offset + 11, cb_factors = sof.offset + 14;
  ASSERT_EQ(file[y_factors], 0x22);
  EXPECT_EQ(refusal(with_byte(file, y_factors, 0x02)),
            "JPEG: sampling factors 0x2 of component 1 are out of range (1 to 4)");
  EXPECT_EQ(refusal(with_byte(file, y_factors, 0x25)),
            "JPEG: sampling factors 2x5 of component 1 are out of range (1 to 4)");
  EXPECT_EQ(refusal(with_byte(file, cb_factors, 0x31)),
            "JPEG: sampling factors 2x2 of component 1 do not divide the largest (3x2)");
  // Y 4x2, Cb 2x1, Cr 1x1: 11 blocks in an MCU, one more than T.81 allows.
  Bytes eleven = with_byte(file, y_factors, 0x42);
  EXPECT_EQ(refusal(with_byte(eleven, cb_factors, 0x21)), "JPEG: more than 10 blocks in an MCU (in scan 1)");
}

TEST(JpegRefuses, BadComponentsInFrameAndScan) {
  const Bytes file = read_file("s420.jpg");
  const std::vector<Segment> all = segments(file);
  const Segment sof = first(all, 0xc0), sos = first(all, 0xda);
  ASSERT_EQ(file[sos.offset + 5], 1);  // the scan's first component id
  EXPECT_EQ(refusal(with_byte(file, sos.offset + 5, 9)),
            "JPEG: scan 1 names component 9, which the frame does not have");
  EXPECT_EQ(refusal(with_byte(file, sos.offset + 7, 1)), "JPEG: component 1 twice (in scan 1)");
  EXPECT_EQ(refusal(with_byte(file, sof.offset + 13, 1)), "JPEG: two components with id 1");
  EXPECT_EQ(refusal(with_byte(file, sof.offset + 12, 4)), "JPEG: component 1 names quantization table 4 (0 to 3)");
  // A sequential frame codes each component in one scan.
  const Bytes three = read_file("sequential_3_scans.jpg");
  const std::vector<Segment> scans = [&] {
    std::vector<Segment> out;
    for (const Segment& s : segments(three)) {
      if (s.marker == 0xda) out.push_back(s);
    }
    return out;
  }();
  ASSERT_EQ(scans.size(), 3u);
  EXPECT_EQ(refusal(with_byte(three, scans[1].offset + 5, 1)), "JPEG: component 1 in two scans of a sequential frame");
  // A component no scan holds.
  Bytes two_scans(three.begin(), three.begin() + scans[2].offset);
  two_scans.insert(two_scans.end(), {0xff, 0xd9});
  EXPECT_EQ(refusal(two_scans), "JPEG: no scan holds component 3");
}

TEST(JpegRefuses, MisplacedAndUnknownMarkers) {
  const Bytes file = read_file("baseline.jpg");
  const std::vector<Segment> all = segments(file);
  const Segment sof = first(all, 0xc0), sos = first(all, 0xda);
  const Bytes sof_bytes(file.begin() + sof.offset, file.begin() + sof.offset + sof.size);
  EXPECT_EQ(refusal(inserted(file, sos.offset, sof_bytes)), "JPEG: more than one frame (SOF) marker");
  EXPECT_EQ(refusal(without_segments(file, 0xc0)), "JPEG: a scan (SOS) before the frame header (SOF)");
  EXPECT_EQ(refusal(inserted(file, sof.offset, {0xff, 0xf0, 0x00, 0x02})), "JPEG: unknown marker 0xF0");
}

// ---------------------------------------------------------------- progressive

// A progressive 8 x 8 grey file with `count` scans: DC first (Al 13) and its
// refinements, then single-coefficient AC bands, first (Al 13) and refined bit
// by bit. Each Huffman table holds one 1-bit code: DC difference 0, and for AC
// `first_symbol` in the first scans and `refinement_symbol` in the others
// (EOB, 0x00, unless a test asks for another). With EOB, all coefficients stay
// zero: the picture is flat grey (128).
Bytes many_scans(int count, uint8_t first_symbol = 0x00, uint8_t refinement_symbol = 0x00) {
  Bytes file = {0xff, 0xd8, 0xff, 0xdb, 0x00, 0x43, 0x00};
  file.insert(file.end(), 64, 1);
  file.insert(file.end(), {0xff, 0xc2, 0x00, 0x0b, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00});
  const auto add_table = [&](uint8_t table_class, uint8_t symbol) {
    file.insert(file.end(), {0xff, 0xc4, 0x00, 0x14, table_class, 1});
    file.insert(file.end(), 15, 0);
    file.push_back(symbol);
  };
  add_table(0x00, 0x00);
  add_table(0x10, first_symbol);
  const auto add_scan = [&](int start, int end, int high, int low) {
    file.insert(file.end(), {0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, static_cast<uint8_t>(start),
                             static_cast<uint8_t>(end), static_cast<uint8_t>(high << 4 | low)});
    file.push_back(0x7f);  // the code 0 (or a 0 correction bit), then 1s to the byte's end
  };
  int added = 0;
  for (int k = 0; k < 64 && added < count; ++k) {
    for (int low = 13; low >= 0 && added < count; --low, ++added) {
      if (k == 1 && low == 12) add_table(0x10, refinement_symbol);
      add_scan(k, k, low == 13 ? 0 : low + 1, low);
    }
  }
  file.insert(file.end(), {0xff, 0xd9});
  return file;
}

TEST(JpegProgressive, TheNumberOfScansIsBounded) {
  Image image;
  ASSERT_NO_THROW(image = decode_bytes(many_scans(256))) << refusal(many_scans(256));
  EXPECT_EQ(image.pixels, std::vector<uint8_t>(8 * 8 * 3, 128));
  EXPECT_EQ(refusal(many_scans(257)), "JPEG: more than 256 scans");
}

TEST(JpegProgressive, SymbolsThatLeadOutOfTheBand) {
  // Scan 15 is the first of coefficient 1 (a band of one), scan 16 its first
  // refinement. The AC symbols: a zero and a 1; a 3 (2 bits); a new 1 after a
  // zero.
  EXPECT_EQ(refusal(many_scans(15, 0x11)), "JPEG: the data of scan 15 has a run of zeros past the end of its band");
  EXPECT_EQ(refusal(many_scans(16, 0x00, 0x02)),
            "JPEG: the data of scan 16 has a refinement of a coefficient by more than one bit");
  EXPECT_EQ(refusal(many_scans(16, 0x00, 0x11)),
            "JPEG: the data of scan 16 has a new coefficient past the end of its band");
  EXPECT_EQ(refusal(many_scans(16, 0x00, 0x01)), "");
}

TEST(JpegRefuses, ScansThatBreakTheProgression) {
  const Bytes file = read_file("progressive_successive.jpg");
  std::vector<Segment> scans;
  for (const Segment& s : segments(file)) {
    if (s.marker == 0xda) scans.push_back(s);
  }
  // The script of make_jpeg_images.py: scan 1 is "0: 0-0, 0, 2", scan 4 "0: 1-2, 0, 3".
  ASSERT_EQ(scans.size(), 12u);
  const size_t band = scans[3].offset + 7;  // Ss, Se, Ah/Al of scan 4
  ASSERT_EQ(file[band], 1);
  ASSERT_EQ(file[band + 1], 2);
  EXPECT_EQ(refusal(with_byte(file, band + 1, 64)),
            "JPEG: bad progressive scan: Ss 1, Se 64, Ah 0, Al 3, 1 components (in scan 4)");
  EXPECT_EQ(refusal(with_byte(file, band, 0)),
            "JPEG: bad progressive scan: Ss 0, Se 2, Ah 0, Al 3, 1 components (in scan 4)");
  EXPECT_EQ(refusal(with_byte(file, band + 2, 0x23)),
            "JPEG: bad progressive scan: Ss 1, Se 2, Ah 2, Al 3, 1 components (in scan 4)");
  EXPECT_EQ(refusal(with_byte(file, band + 2, 0x0e)),
            "JPEG: bad progressive scan: Ss 1, Se 2, Ah 0, Al 14, 1 components (in scan 4)");
  // Scans 1 and 3 (the DC of component 1) left out: its AC scans come first.
  Bytes no_dc(file.begin(), file.begin() + scans[0].offset);
  no_dc.insert(no_dc.end(), file.begin() + scans[0].data_end, file.begin() + scans[2].offset);
  no_dc.insert(no_dc.end(), file.begin() + scans[2].data_end, file.end());
  EXPECT_EQ(refusal(no_dc), "JPEG: AC coefficients of component 1 before its DC coefficients (in scan 2)");
  // Scan 4 twice.
  const Bytes scan4(file.begin() + scans[3].offset, file.begin() + scans[3].data_end);
  EXPECT_EQ(refusal(inserted(file, scans[4].offset, scan4)),
            "JPEG: coefficient 1 of component 1 sent twice (in scan 5)");
  // Scan 3 (DC refinement of component 1 from bit 2 to bit 1) claiming to refine bit 3.
  ASSERT_EQ(file[scans[2].offset + 9], 0x21);
  EXPECT_EQ(refusal(with_byte(file, scans[2].offset + 9, 0x32)),
            "JPEG: coefficient 0 of component 1 refined out of order (in scan 3)");
}

// ---------------------------------------------------------------- hostile bytes

// Bytes changed at random in small files: every outcome is a picture or an
// ImageError, never a crash, a hang or another exception (the sanitizer and
// valgrind runs check the memory).
TEST(JpegHostile, RandomlyCorruptedFilesDecodeOrAreRefused) {
  uint64_t state = 0x9e3779b97f4a7c15u;
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int refused = 0, decoded = 0;
  for (const char* name : {"s420_odd.jpg", "progressive_successive_restart.jpg", "s4x2.jpg", "grey.jpg",
                           "restart_s411.jpg", "exif_7.jpg", "markers_anywhere.jpg"}) {
    const Bytes file = read_file(name);
    for (int trial = 0; trial < (PEAK_TEST_SANITIZED ? 100 : 400); ++trial) {
      Bytes bad = file;
      const int changes = 1 + static_cast<int>(next() % 4);
      for (int i = 0; i < changes; ++i) bad[next() % bad.size()] = static_cast<uint8_t>(next());
      try {
        const Image image = decode_bytes(bad);
        EXPECT_EQ(image.pixels.size(), size_t{image.width} * image.height * 3);
        ++decoded;
      } catch (const ImageError& e) {
        EXPECT_THAT(e.what(), ::testing::StartsWith("JPEG: "));
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(decoded, 0);
}

// ---------------------------------------------------------------- EXIF

Bytes exif_payload(bool big_endian, uint16_t type, uint32_t count, uint32_t value) {
  const auto u16 = [&](Bytes& out, uint32_t v) {
    big_endian ? out.insert(out.end(), {uint8_t(v >> 8), uint8_t(v)})
               : out.insert(out.end(), {uint8_t(v), uint8_t(v >> 8)});
  };
  const auto u32 = [&](Bytes& out, uint32_t v) {
    if (big_endian) {
      u16(out, v >> 16);
      u16(out, v & 0xffff);
    } else {
      u16(out, v & 0xffff);
      u16(out, v >> 16);
    }
  };
  Bytes out = {'E', 'x', 'i', 'f', 0, 0};
  const Bytes byte_order = big_endian ? Bytes{'M', 'M'} : Bytes{'I', 'I'};
  out.insert(out.end(), byte_order.begin(), byte_order.end());
  u16(out, 42);
  u32(out, 8);
  u16(out, 1);
  u16(out, 0x0112);
  u16(out, type);
  u32(out, count);
  if (type == 3) {
    u16(out, value);
    u16(out, 0);
  } else {
    u32(out, value);
  }
  u32(out, 0);
  return out;
}

int orientation_of(const Bytes& payload) { return jpeg::exif_orientation(payload.data(), payload.size()); }

TEST(JpegExif, OrientationTagInEitherByteOrder) {
  for (bool big_endian : {false, true}) {
    for (uint32_t value = 1; value <= 8; ++value) {
      EXPECT_EQ(orientation_of(exif_payload(big_endian, 3, 1, value)), static_cast<int>(value));
    }
    EXPECT_EQ(orientation_of(exif_payload(big_endian, 4, 1, 6)), 6);  // LONG rather than SHORT
    EXPECT_EQ(orientation_of(exif_payload(big_endian, 3, 1, 0)), 0);
    EXPECT_EQ(orientation_of(exif_payload(big_endian, 3, 1, 9)), 0);
    EXPECT_EQ(orientation_of(exif_payload(big_endian, 3, 2, 6)), 0);
    EXPECT_EQ(orientation_of(exif_payload(big_endian, 2, 1, 6)), 0);
  }
}

TEST(JpegExif, MalformedPayloadsGiveNoOrientation) {
  const Bytes good = exif_payload(false, 3, 1, 6);
  for (size_t size = 0; size < good.size(); ++size) {
    const int orientation = orientation_of(Bytes(good.begin(), good.begin() + size));
    // The entry ends 4 bytes before the end (the next-IFD offset follows it).
    EXPECT_EQ(orientation, size >= good.size() - 4 ? 6 : 0) << size;
  }
  EXPECT_EQ(orientation_of(with_byte(good, 6, 'X')), 0);                         // byte order
  EXPECT_EQ(orientation_of(with_byte(good, 8, 43)), 0);                          // not 42
  EXPECT_EQ(orientation_of(with_bytes(good, 10, {0xf0, 0xff, 0xff, 0xff})), 0);  // IFD0 past the end
  // 65535 entries, none of them the orientation, and the payload ends after one.
  EXPECT_EQ(orientation_of(with_bytes(good, 14, {0xff, 0xff, 0x10, 0x01})), 0);
  EXPECT_EQ(orientation_of(with_byte(good, 3, 'F')), 0);  // not "Exif\0\0"
}

TEST(JpegExif, TheFirstExifSegmentCounts) {
  // A second Exif APP1 (orientation 6) after the first (orientation 3), as the
  // reference reads them: the first one counts.
  const Bytes file = read_file("exif_3.jpg");
  const Segment app1 = first(segments(file), 0xe1);
  const Bytes payload = exif_payload(false, 3, 1, 6);
  Bytes second = {0xff, 0xe1, 0x00, static_cast<uint8_t>(payload.size() + 2)};
  second.insert(second.end(), payload.begin(), payload.end());
  const Image two = decode_bytes(inserted(file, app1.offset + app1.size, second));
  EXPECT_EQ(two.pixels, read_netpbm(kDir + "exif_3.ppm").pixels);
}

TEST(JpegExif, OrientationTurnsThePixelsUpright) {
  // exif_N.jpg are one file with different APP1 segments; in exif_9.jpg the
  // orientation (9) is not defined, so its pixels stay as stored.
  const Image stored = decode_bytes(read_file("exif_9.jpg"));
  const uint32_t w = stored.width, h = stored.height;
  ASSERT_EQ(w, 21u);
  ASSERT_EQ(h, 13u);
  for (int orientation = 2; orientation <= 8; ++orientation) {
    SCOPED_TRACE(orientation);
    const Image upright = decode_bytes(read_file("exif_" + std::to_string(orientation) + ".jpg"));
    const bool sideways = orientation >= 5;
    ASSERT_EQ(upright.width, sideways ? h : w);
    ASSERT_EQ(upright.height, sideways ? w : h);
    // The stored pixel each upright pixel (x, y) shows: orientations 5-8 first
    // swap x and y; 2, 3, 7, 8 mirror the stored columns, 3, 4, 6, 7 the rows.
    for (uint32_t y = 0; y < upright.height; ++y) {
      for (uint32_t x = 0; x < upright.width; ++x) {
        uint32_t sx = sideways ? y : x, sy = sideways ? x : y;
        if (orientation == 2 || orientation == 3 || orientation == 7 || orientation == 8) sx = w - 1 - sx;
        if (orientation == 3 || orientation == 4 || orientation == 6 || orientation == 7) sy = h - 1 - sy;
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(upright.pixels[(size_t{y} * upright.width + x) * 3 + c],
                    stored.pixels[(size_t{sy} * w + sx) * 3 + c])
              << x << ", " << y;
        }
      }
    }
  }
}

}  // namespace
}  // namespace peak::image
