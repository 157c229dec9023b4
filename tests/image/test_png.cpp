// The PNG decoder against tests/data/images/png: files written by PIL,
// ImageMagick and make_png_images.py's own writer, each beside its expected
// pixels computed from the arrays encoded (README.md there); then malformed
// files, from that folder or made here by editing the good ones chunk by chunk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "image/image.h"
#include "image/png.h"
#include "netpbm.h"

namespace peak::image {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kDir = std::string(PEAK_TEST_DATA_DIR) + "/images/png/";

std::vector<uint8_t> corpus_file(const std::string& name) { return read_bytes(kDir + name); }

// The message decoding `file` is refused with, or "(decoded)".
std::string refusal(const std::vector<uint8_t>& file, const DecodeLimits& limits = {}) {
  try {
    decode_png(file.data(), file.size(), limits);
  } catch (const ImageError& e) {
    return e.what();
  }
  return "(decoded)";
}

// ---------------------------------------------------------------------------
// Chunk editing
// ---------------------------------------------------------------------------

struct Chunk {
  std::string type;
  std::vector<uint8_t> data;
};

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}

// CRC-32 bit by bit (PNG specification, Annex D).
uint32_t crc32(const uint8_t* data, size_t size) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    c ^= data[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}

// The chunks of a well-formed file, to IEND.
std::vector<Chunk> chunks_of(const std::vector<uint8_t>& png) {
  std::vector<Chunk> chunks;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t length = be32(&png[at]);
    Chunk c{std::string(png.begin() + long(at) + 4, png.begin() + long(at) + 8),
            std::vector<uint8_t>(png.begin() + long(at) + 8, png.begin() + long(at) + 8 + length)};
    chunks.push_back(c);
    at += 12 + length;
    if (c.type == "IEND") break;
  }
  return chunks;
}

std::vector<uint8_t> chunk_bytes(const Chunk& c) {
  std::vector<uint8_t> out;
  put_be32(out, uint32_t(c.data.size()));
  out.insert(out.end(), c.type.begin(), c.type.end());
  out.insert(out.end(), c.data.begin(), c.data.end());
  put_be32(out, crc32(out.data() + 4, out.size() - 4));
  return out;
}

std::vector<uint8_t> png_of(const std::vector<Chunk>& chunks) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (const Chunk& c : chunks) {
    const std::vector<uint8_t> bytes = chunk_bytes(c);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

Chunk ihdr(uint32_t width, uint32_t height, uint8_t depth, uint8_t colour_type, uint8_t interlace = 0,
           uint8_t compression = 0, uint8_t filter = 0) {
  Chunk c{"IHDR", {}};
  put_be32(c.data, width);
  put_be32(c.data, height);
  c.data.insert(c.data.end(), {depth, colour_type, compression, filter, interlace});
  return c;
}

// A zlib stream of stored blocks (RFC 1950, RFC 1951 3.2.4) holding `data`.
std::vector<uint8_t> stored_zlib(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0x78, 0x01};
  size_t at = 0;
  do {
    const size_t n = std::min<size_t>(data.size() - at, 65535);
    const bool final_block = at + n == data.size();
    out.insert(out.end(), {uint8_t(final_block), uint8_t(n), uint8_t(n >> 8), uint8_t(~n), uint8_t(~n >> 8)});
    out.insert(out.end(), data.begin() + long(at), data.begin() + long(at + n));
    at += n;
  } while (at < data.size());
  uint32_t a = 1, b = 0;
  for (uint8_t byte : data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  put_be32(out, b << 16 | a);
  return out;
}

// A file of IHDR, IDAT with `image_data` stored, IEND.
std::vector<uint8_t> png_with_data(const Chunk& header, const std::vector<uint8_t>& image_data) {
  return png_of({header, {"IDAT", stored_zlib(image_data)}, {"IEND", {}}});
}

size_t index_of(const std::vector<Chunk>& chunks, const std::string& type) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].type == type) return i;
  }
  ADD_FAILURE() << "no " << type << " chunk";
  return 0;
}

std::vector<Chunk> without(std::vector<Chunk> chunks, const std::string& type) {
  std::vector<Chunk> kept;
  for (Chunk& c : chunks) {
    if (c.type != type) kept.push_back(std::move(c));
  }
  return kept;
}

std::vector<Chunk> inserted(std::vector<Chunk> chunks, size_t at, const Chunk& c) {
  chunks.insert(chunks.begin() + long(at), c);
  return chunks;
}

// ---------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------

TEST(PngCorpus, EveryFileDecodesToItsExpectedPixels) {
  size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".png" || name.rfind("bad_", 0) == 0) continue;
    SCOPED_TRACE(name);
    const std::string stem = kDir + entry.path().stem().string();
    const bool rgb = std::filesystem::exists(stem + ".ppm"), rgba = std::filesystem::exists(stem + ".pam");
    ASSERT_NE(rgb, rgba) << "needs one expected file";
    const Image want = read_netpbm(stem + (rgb ? ".ppm" : ".pam"));
    const std::vector<uint8_t> file = read_bytes(entry.path().string());
    Image got;
    try {
      got = decode_png(file.data(), file.size());
    } catch (const ImageError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(got.width, want.width);
    EXPECT_EQ(got.height, want.height);
    ASSERT_EQ(got.channels, want.channels);
    ASSERT_EQ(got.pixels.size(), want.pixels.size());
    for (size_t i = 0; i < want.pixels.size(); ++i) {
      if (got.pixels[i] != want.pixels[i]) {
        const size_t pixel = i / want.channels;
        ADD_FAILURE() << "pixel (" << pixel % want.width << ", " << pixel / want.width << ") channel "
                      << i % want.channels << ": " << int(got.pixels[i]) << ", expected " << int(want.pixels[i]);
        break;
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 259u);  // the whole corpus is there
}

TEST(PngCorpus, DecodeDispatchesOnTheSignature) {
  const std::vector<uint8_t> file = corpus_file("rgb8_7x3.png");
  const Image image = decode(file.data(), file.size());
  EXPECT_EQ(image.width, 7u);
  EXPECT_EQ(image.height, 3u);
  EXPECT_TRUE(image.pixels == read_netpbm(kDir + "rgb8_7x3.ppm").pixels);
}

// The corpus's expectations say it too; these name the rule.
TEST(PngCorpus, TransparencyAtDepth16ComparesAll16Bits) {
  // grey16_trns.png: the key 0xfffe at (3, 1); 0xffff and 0xffee, same high
  // byte, at (5, 2) and (6, 3).
  std::vector<uint8_t> file = corpus_file("grey16_trns.png");
  Image image = decode_png(file.data(), file.size());
  ASSERT_EQ(image.channels, 4u);
  const auto alpha = [&](uint32_t x, uint32_t y) { return image.pixels[(size_t(y) * image.width + x) * 4 + 3]; };
  EXPECT_EQ(alpha(3, 1), 0);
  EXPECT_EQ(alpha(5, 2), 255);
  EXPECT_EQ(alpha(6, 3), 255);
  file = corpus_file("rgb16_trns.png");  // the key at (0, 0); low bytes differ at (1, 1) and (2, 2)
  image = decode_png(file.data(), file.size());
  EXPECT_EQ(alpha(0, 0), 0);
  EXPECT_EQ(alpha(1, 1), 255);
  EXPECT_EQ(alpha(2, 2), 255);
}

TEST(PngCorpus, ChannelsFollowTransparency) {
  const std::pair<const char*, uint32_t> cases[] = {
      {"grey8_7x3.png", 3}, {"pal8_7x3.png", 3},        {"rgb16_7x3.png", 3}, {"ga8_7x3.png", 4},
      {"rgba8_7x3.png", 4}, {"grey4_trns.png", 4},      {"pal4_trns.png", 4}, {"rgb8_trns.png", 4},
      {"pil_1bit.png", 3},  {"pil_palette_trns.png", 4}};
  for (const auto& [name, channels] : cases) {
    const std::vector<uint8_t> file = corpus_file(name);
    EXPECT_EQ(decode_png(file.data(), file.size()).channels, channels) << name;
  }
}

TEST(PngCorpus, BytesAfterIendAreIgnored) {
  std::vector<uint8_t> file = corpus_file("pal4_trns.png");
  const Image before = decode_png(file.data(), file.size());
  file.insert(file.end(), {0, 0, 0, 5, 'I', 'D', 'A', 'T', 1, 2});  // not even a whole chunk
  EXPECT_TRUE(decode_png(file.data(), file.size()).pixels == before.pixels);
}

TEST(PngCorpus, UnknownAncillaryChunksAreSkipped) {
  const std::vector<Chunk> chunks = chunks_of(corpus_file("rgb8_7x3.png"));
  const Image before = decode_png(png_of(chunks).data(), png_of(chunks).size());
  const std::vector<uint8_t> edited = png_of(inserted(chunks, 1, {"zzZz", {1, 2, 3}}));
  EXPECT_TRUE(decode_png(edited.data(), edited.size()).pixels == before.pixels);
}

// ---------------------------------------------------------------------------
// Malformed files
// ---------------------------------------------------------------------------

TEST(PngRefusal, Signature) {
  EXPECT_THAT(refusal({}), HasSubstr("PNG: not a PNG file (bad signature)"));
  EXPECT_THAT(refusal({0x89, 'P', 'N', 'G'}), HasSubstr("PNG: not a PNG file"));
  std::vector<uint8_t> file = corpus_file("rgb8_7x3.png");
  file[1] = 'p';
  EXPECT_THAT(refusal(file), HasSubstr("PNG: not a PNG file"));
  EXPECT_THROW(decode_png(nullptr, 0), ImageError);
}

TEST(PngRefusal, TruncatedAtEveryByte) {
  for (const char* name : {"grey1_7x3_adam7.png", "pal4_trns.png", "idat_split_7bytes.png", "ga16_7x3.png"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> file = corpus_file(name);
    for (size_t n = 0; n < file.size(); ++n) {
      // The prefix in a buffer of its own size, for sanitizers to see any read past it.
      const std::vector<uint8_t> prefix(file.begin(), file.begin() + long(n));
      const std::string message = refusal(prefix);
      if (n < 8) {
        EXPECT_THAT(message, HasSubstr("PNG: not a PNG file")) << "cut at " << n;
      } else {
        EXPECT_THAT(message, StartsWith("PNG: truncated file (")) << "cut at " << n;
      }
    }
  }
  const std::vector<uint8_t> file = corpus_file("pal4_trns.png");
  EXPECT_THAT(refusal(std::vector<uint8_t>(file.begin(), file.begin() + 8 + 20)),
              HasSubstr("PNG: truncated file (in chunk IHDR)"));
}

TEST(PngRefusal, BadCrcInEveryChunk) {
  for (const char* name : {"pal4_trns.png", "ancillary_chunks.png"}) {
    const std::vector<uint8_t> file = corpus_file(name);
    const std::vector<Chunk> chunks = chunks_of(file);
    size_t at = 8;
    for (const Chunk& c : chunks) {
      SCOPED_TRACE(std::string(name) + " " + c.type);
      const size_t crc_at = at + 8 + c.data.size();
      std::vector<uint8_t> broken = file;
      broken[crc_at + 3] ^= 0x01;  // the CRC itself
      EXPECT_THAT(refusal(broken), HasSubstr("PNG: bad CRC in chunk " + c.type));
      if (!c.data.empty()) {
        broken = file;
        broken[at + 8 + c.data.size() / 2] ^= 0x80;  // a byte it covers
        EXPECT_THAT(refusal(broken), HasSubstr("PNG: bad CRC in chunk " + c.type));
      }
      at = crc_at + 4;
    }
  }
}

TEST(PngRefusal, ChunkFraming) {
  const std::vector<Chunk> chunks = chunks_of(corpus_file("rgb8_7x3.png"));
  // A length over 2^31 - 1.
  std::vector<uint8_t> file = png_of(chunks);
  file[33] = 0x80;  // the first byte of the length after IHDR
  EXPECT_THAT(refusal(file), HasSubstr("PNG: chunk IDAT length 2147483"));
  EXPECT_THAT(refusal(file), HasSubstr("exceeds 2^31 - 1"));
  // A type that is not four letters (its CRC right).
  EXPECT_THAT(refusal(png_of(inserted(chunks, 1, {"ab1d", {}}))), HasSubstr("PNG: bad chunk type ab?d"));
  EXPECT_THAT(refusal(png_of(inserted(chunks, 1, {"ABCD", {1}}))), HasSubstr("PNG: unknown critical chunk ABCD"));
  // IHDR first, once, of 13 bytes.
  std::vector<Chunk> edited = chunks;
  std::swap(edited[0], edited[1]);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: the first chunk is IDAT, not IHDR"));
  EXPECT_THAT(refusal(png_of(inserted(chunks, 1, chunks[0]))), HasSubstr("PNG: second IHDR chunk"));
  edited = chunks;
  edited[0].data.push_back(0);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: IHDR chunk of 14 bytes (needs 13)"));
}

TEST(PngRefusal, MissingChunks) {
  const std::vector<Chunk> rgb = chunks_of(corpus_file("rgb8_7x3.png"));
  EXPECT_THAT(refusal(png_of(without(rgb, "IDAT"))), HasSubstr("PNG: no IDAT chunk"));
  EXPECT_THAT(refusal(png_of(without(rgb, "IEND"))),
              HasSubstr("PNG: truncated file (after chunk IDAT, no IEND chunk)"));
  const std::vector<Chunk> palette = chunks_of(corpus_file("pal4_short_palette.png"));
  EXPECT_THAT(refusal(png_of(without(palette, "PLTE"))),
              HasSubstr("PNG: palette image with no PLTE chunk before IDAT"));
}

TEST(PngRefusal, HeaderFields) {
  const std::vector<Chunk> chunks = chunks_of(corpus_file("rgb8_7x3.png"));
  const auto with_header = [&](const Chunk& header) {
    std::vector<Chunk> edited = chunks;
    edited[0] = header;
    return refusal(png_of(edited));
  };
  for (uint8_t colour_type = 0; colour_type < 8; ++colour_type) {
    for (uint8_t depth = 0; depth <= 17; ++depth) {
      SCOPED_TRACE("colour type " + std::to_string(colour_type) + ", depth " + std::to_string(depth));
      const std::string message = with_header(ihdr(7, 3, depth, colour_type));
      if (colour_type == 1 || colour_type == 5 || colour_type == 7) {
        EXPECT_THAT(message, HasSubstr("PNG: colour type " + std::to_string(colour_type) + " is not defined"));
        continue;
      }
      const bool low_depth = depth == 1 || depth == 2 || depth == 4;
      const bool allowed =
          depth == 8 || (depth == 16 && colour_type != 3) || (low_depth && (colour_type == 0 || colour_type == 3));
      if (allowed) {
        EXPECT_THAT(message, Not(HasSubstr("bit depth")));
      } else {
        EXPECT_THAT(message, HasSubstr("PNG: bit depth " + std::to_string(depth) + " is not allowed for colour type " +
                                       std::to_string(colour_type)));
      }
    }
  }
  EXPECT_THAT(with_header(ihdr(7, 3, 8, 2, 0, 1)), HasSubstr("PNG: compression method 1 is not defined"));
  EXPECT_THAT(with_header(ihdr(7, 3, 8, 2, 0, 0, 1)), HasSubstr("PNG: filter method 1 is not defined"));
  EXPECT_THAT(with_header(ihdr(7, 3, 8, 2, 2)), HasSubstr("PNG: interlace method 2 is not defined"));
  EXPECT_THAT(with_header(ihdr(0, 3, 8, 2)), HasSubstr("PNG: width 0"));
  EXPECT_THAT(with_header(ihdr(7, 0, 8, 2)), HasSubstr("PNG: height 0"));
  EXPECT_THAT(with_header(ihdr(0x80000000u, 3, 8, 2)), HasSubstr("PNG: width 2147483648 exceeds 2^31 - 1"));
  EXPECT_THAT(with_header(ihdr(7, 0xffffffffu, 8, 2)), HasSubstr("PNG: height 4294967295 exceeds 2^31 - 1"));
  EXPECT_THAT(with_header(ihdr(70000, 70000, 8, 2)),
              HasSubstr("PNG: 70000 x 70000 pixels exceeds the limit of 16384 pixels a side"));
  EXPECT_THAT(with_header(ihdr(16384, 16384, 8, 6)),
              HasSubstr("PNG: 16384 x 16384 pixels exceeds the limit of 67108864 pixels"));
}

TEST(PngRefusal, DecodeLimits) {
  const std::vector<uint8_t> file = corpus_file("rgb8_19x11.png");  // 209 pixels
  DecodeLimits limits;
  limits.max_dimension = 18;
  EXPECT_THAT(refusal(file, limits), HasSubstr("PNG: 19 x 11 pixels exceeds the limit of 18 pixels a side"));
  limits.max_dimension = 19;
  limits.max_pixels = 208;
  EXPECT_THAT(refusal(file, limits), HasSubstr("PNG: 19 x 11 pixels exceeds the limit of 208 pixels"));
  limits.max_pixels = 209;
  EXPECT_EQ(refusal(file, limits), "(decoded)");
}

TEST(PngRefusal, Palette) {
  EXPECT_THAT(refusal(corpus_file("bad_palette_index.png")),
              HasSubstr("PNG: palette index 5 is out of range (PLTE has 5 entries)"));
  const std::vector<Chunk> chunks = chunks_of(corpus_file("pal4_trns.png"));  // IHDR PLTE tRNS IDAT IEND
  const size_t plte = index_of(chunks, "PLTE"), trns = index_of(chunks, "tRNS"), idat = index_of(chunks, "IDAT");
  std::vector<Chunk> edited = chunks;
  edited[plte].data.push_back(0);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: PLTE chunk of 49 bytes (needs 3 to 768, a multiple of 3)"));
  edited = chunks;
  edited[plte].data.clear();
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: PLTE chunk of 0 bytes"));
  edited = chunks;
  edited[plte].data.resize(3 * 257);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: PLTE chunk of 771 bytes"));
  EXPECT_THAT(refusal(png_of(inserted(chunks, plte + 1, chunks[plte]))), HasSubstr("PNG: second PLTE chunk"));
  const std::vector<Chunk> rgb = chunks_of(corpus_file("rgb8_7x3.png"));
  EXPECT_THAT(refusal(png_of(inserted(rgb, index_of(rgb, "IDAT") + 1, chunks[plte]))),
              HasSubstr("PNG: PLTE chunk after IDAT"));
  // An RGB image's PLTE only suggests a palette: ignored.
  EXPECT_EQ(refusal(png_of(inserted(rgb, 1, chunks[plte]))), "(decoded)");
  // tRNS: after PLTE, no longer than it, once, before IDAT.
  edited = chunks;
  std::swap(edited[plte], edited[trns]);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: tRNS chunk before PLTE"));
  edited = chunks;
  edited[trns].data.resize(17);
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: tRNS chunk has 17 entries, more than the 16 of PLTE"));
  EXPECT_THAT(refusal(png_of(inserted(chunks, trns + 1, chunks[trns]))), HasSubstr("PNG: second tRNS chunk"));
  edited = chunks;
  edited.insert(edited.begin() + long(idat) + 1, edited[trns]);
  edited.erase(edited.begin() + long(trns));
  EXPECT_THAT(refusal(png_of(edited)), HasSubstr("PNG: tRNS chunk after IDAT"));
}

TEST(PngRefusal, TransparencyLength) {
  const std::vector<Chunk> grey = chunks_of(corpus_file("grey8_7x3.png"));
  EXPECT_THAT(refusal(png_of(inserted(grey, 1, {"tRNS", {0, 1, 2, 3}}))),
              HasSubstr("PNG: tRNS chunk of 4 bytes (colour type 0, greyscale, needs 2)"));
  const std::vector<Chunk> rgb = chunks_of(corpus_file("rgb8_7x3.png"));
  EXPECT_THAT(refusal(png_of(inserted(rgb, 1, {"tRNS", {0, 1}}))),
              HasSubstr("PNG: tRNS chunk of 2 bytes (colour type 2, RGB, needs 6)"));
  // With an alpha channel tRNS is not allowed, and changes nothing.
  const std::vector<Chunk> rgba = chunks_of(corpus_file("rgba8_7x3.png"));
  const std::vector<uint8_t> with = png_of(inserted(rgba, 1, {"tRNS", {0, 1}}));
  const std::vector<uint8_t> plain = png_of(rgba);
  EXPECT_TRUE(decode_png(with.data(), with.size()).pixels == decode_png(plain.data(), plain.size()).pixels);
}

TEST(PngRefusal, ImageDataSize) {
  EXPECT_THAT(refusal(corpus_file("bad_too_little_data.png")), HasSubstr("PNG: image data ends early (row 12 of 40)"));
  EXPECT_THAT(refusal(corpus_file("bad_too_much_data.png")),
              HasSubstr("PNG: too much image data (more than the 1240 bytes IHDR implies)"));
  EXPECT_THAT(refusal(corpus_file("bad_filter_type.png")),
              HasSubstr("PNG: filter type 5 is not defined (row 3 of 40)"));
  EXPECT_THAT(refusal(corpus_file("bad_idat_not_consecutive.png")), HasSubstr("PNG: IDAT chunks are not consecutive"));
  EXPECT_THAT(refusal(corpus_file("bad_adler.png")),
              HasSubstr("PNG: bad compressed image data (Adler-32 of the data does not match)"));

  // 19 x 11 grey, interlaced: passes 1 and 2 of 2 rows (4 and 3 bytes each with
  // the filter type), pass 3 of 1 row (6 bytes).
  const Chunk header = ihdr(19, 11, 8, 0, 1);
  EXPECT_THAT(refusal(png_with_data(header, std::vector<uint8_t>(8 + 6 + 3))),
              HasSubstr("PNG: image data ends early (pass 3, row 1 of 1)"));
  std::vector<uint8_t> data(8 + 6 + 6 + 18 + 33 + 60 + 100);  // passes 1 to 7
  data[8 + 3] = 9;
  EXPECT_THAT(refusal(png_with_data(header, data)),
              HasSubstr("PNG: filter type 9 is not defined (pass 2, row 2 of 2)"));
  EXPECT_THAT(refusal(png_with_data(ihdr(7, 3, 8, 0), {})), HasSubstr("PNG: image data ends early (row 1 of 3)"));
  // All the rows, but the zlib stream stops before its Adler-32.
  std::vector<uint8_t> stream = stored_zlib(std::vector<uint8_t>(3 * 8));
  stream.resize(stream.size() - 4);
  EXPECT_THAT(refusal(png_of({ihdr(7, 3, 8, 0), {"IDAT", stream}, {"IEND", {}}})),
              HasSubstr("PNG: image data ends early (the zlib stream stops after the last row)"));
  // The IDAT stream's header.
  std::vector<Chunk> chunks = chunks_of(corpus_file("rgb8_7x3.png"));
  chunks[index_of(chunks, "IDAT")].data[0] = 0x79;
  EXPECT_THAT(refusal(png_of(chunks)),
              HasSubstr("PNG: bad compressed image data (compression method 9 is not deflate (8))"));
}

TEST(PngRefusal, DecompressionBomb) {
  // 8 KiB of zlib stream that would inflate to 8 MiB, for a 64 x 64 image of
  // 4160 bytes of data: refused at byte 4161.
  EXPECT_THAT(refusal(corpus_file("bad_bomb.png")),
              HasSubstr("PNG: too much image data (more than the 4160 bytes IHDR implies)"));
  // The same stream for a 16000 x 4000 image (64 MB of data) fills 524 rows and
  // a bit; the buffer it gets is sized by what 8 KiB of deflate could hold.
  std::vector<Chunk> chunks = chunks_of(corpus_file("bad_bomb.png"));
  chunks[0] = ihdr(16000, 4000, 8, 0);
  EXPECT_THAT(refusal(png_of(chunks)), HasSubstr("PNG: image data ends early (row 525 of 4000)"));
}

}  // namespace
}  // namespace peak::image
