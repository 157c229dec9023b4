// inflate_zlib against streams made by Python's zlib (tests/data/images/png/zlib,
// written by make_png_images.py: every level, fixed-only, Huffman-only, RLE, small
// windows and blocks, flushes), and against malformed streams built bit by bit
// here from RFC 1950 and RFC 1951.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <utility>
#include <string>
#include <vector>

#include "image/inflate.h"
#include "netpbm.h"

namespace peak::image {
namespace {

using ::testing::HasSubstr;
using Kind = InflateError::Kind;

const std::string kDir = std::string(PEAK_TEST_DATA_DIR) + "/images/png/zlib/";

std::vector<uint8_t> inflate_all(const std::vector<uint8_t>& stream, size_t capacity) {
  std::vector<uint8_t> out(capacity);
  out.resize(inflate_zlib(stream.data(), stream.size(), out.data(), out.size()));
  return out;
}

struct Refusal {
  Kind kind = Kind::Malformed;
  std::string message = "(inflated)";
};

Refusal refusal(const std::vector<uint8_t>& stream, size_t capacity = 1 << 16) {
  std::vector<uint8_t> out(capacity);
  Refusal r;
  try {
    inflate_zlib(stream.data(), stream.size(), out.data(), out.size());
  } catch (const InflateError& e) {
    r.kind = e.kind;
    r.message = e.what();
  }
  return r;
}

uint32_t adler32(const std::vector<uint8_t>& data) {
  uint32_t a = 1, b = 0;
  for (uint8_t byte : data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return b << 16 | a;
}

// A deflate stream written bit by bit: values first bit lowest, Huffman codes
// first bit highest (RFC 1951 3.1.1), inside a zlib header and Adler-32.
class Bits {
 public:
  void put(uint32_t value, unsigned n) {
    for (unsigned i = 0; i < n; ++i) put_bit((value >> i) & 1);
  }
  void put_code(uint32_t code, unsigned n) {
    for (unsigned i = n; i-- > 0;) put_bit((code >> i) & 1);
  }
  // The fixed code's literal/length symbols and distance symbols (RFC 1951 3.2.6).
  void fixed_literal(unsigned symbol) {
    if (symbol < 144)
      put_code(0x30 + symbol, 8);
    else if (symbol < 256)
      put_code(0x190 + symbol - 144, 9);
    else if (symbol < 280)
      put_code(symbol - 256, 7);
    else
      put_code(0xc0 + symbol - 280, 8);
  }
  void fixed_distance(unsigned symbol) { put_code(symbol, 5); }

  // The zlib stream: header 78 01, these bits, the Adler-32 of `content`.
  std::vector<uint8_t> zlib(const std::vector<uint8_t>& content) const {
    std::vector<uint8_t> out = {0x78, 0x01};
    out.insert(out.end(), bytes_.begin(), bytes_.end());
    const uint32_t adler = adler32(content);
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(adler >> shift));
    return out;
  }

 private:
  void put_bit(unsigned bit) {
    if (count_ % 8 == 0) bytes_.push_back(0);
    bytes_.back() |= uint8_t(bit << (count_ % 8));
    ++count_;
  }
  std::vector<uint8_t> bytes_;
  size_t count_ = 0;
};

// Canonical codes of `lengths` (RFC 1951 3.2.2).
std::vector<uint32_t> canonical_codes(const std::vector<unsigned>& lengths) {
  unsigned count[16] = {};
  for (unsigned len : lengths) ++count[len];
  count[0] = 0;
  uint32_t next[16] = {};
  for (unsigned len = 1, code = 0; len < 16; ++len) next[len] = code = (code + count[len - 1]) << 1;
  std::vector<uint32_t> codes(lengths.size());
  for (size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] != 0) codes[s] = next[lengths[s]]++;
  }
  return codes;
}

// The code length code of the dynamic headers below: 0 and 18 of two bits,
// 1..16 of five (a complete code: 2/4 + 16/32).
const std::vector<unsigned> kCodeLengthLengths = [] {
  std::vector<unsigned> lengths(19, 5);
  lengths[0] = lengths[18] = 2;
  lengths[17] = 0;
  return lengths;
}();

// RFC 1951 3.2.7: the order of the code length code's lengths in the header.
constexpr unsigned kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

struct LengthSymbol {
  unsigned symbol;     // 0..18 of the code length alphabet
  unsigned extra = 0;  // the run's extra bits (16, 17, 18)
};

// A final dynamic block's header: HLIT, HDIST, the code length code of
// `code_length_lengths` and the code length symbols `sequence` in it.
void dynamic_header(Bits& bits, unsigned hlit, unsigned hdist, const std::vector<unsigned>& code_length_lengths,
                    const std::vector<LengthSymbol>& sequence) {
  bits.put(1, 1);
  bits.put(2, 2);
  bits.put(hlit - 257, 5);
  bits.put(hdist - 1, 5);
  bits.put(19 - 4, 4);
  for (unsigned symbol : kOrder) bits.put(code_length_lengths[symbol], 3);
  const std::vector<uint32_t> codes = canonical_codes(code_length_lengths);
  for (const LengthSymbol& s : sequence) {
    bits.put_code(codes[s.symbol], code_length_lengths[s.symbol]);
    if (s.symbol == 16) bits.put(s.extra, 2);
    if (s.symbol == 17) bits.put(s.extra, 3);
    if (s.symbol == 18) bits.put(s.extra, 7);
  }
}

// Code lengths of a dynamic block: `hlit` literal/length ones, then `hdist`
// distance ones.
struct CodeLengths {
  unsigned hlit, hdist;
  std::vector<unsigned> all;
};

CodeLengths code_lengths(const std::vector<std::pair<unsigned, unsigned>>& litlen,
                         const std::vector<std::pair<unsigned, unsigned>>& dist, unsigned hlit = 257,
                         unsigned hdist = 1) {
  CodeLengths lengths{hlit, hdist, std::vector<unsigned>(hlit + hdist, 0)};
  for (auto [symbol, length] : litlen) lengths.all[symbol] = length;
  for (auto [symbol, length] : dist) lengths.all[hlit + symbol] = length;
  return lengths;
}

// The code length symbols that send `lengths`, runs of 11 zeros or more as 18.
std::vector<LengthSymbol> length_symbols(const std::vector<unsigned>& lengths) {
  std::vector<LengthSymbol> symbols;
  for (size_t i = 0; i < lengths.size();) {
    size_t run = 0;
    while (i + run < lengths.size() && lengths[i + run] == 0) ++run;
    if (run >= 11) {
      run = std::min<size_t>(run, 138);
      symbols.push_back({18, unsigned(run - 11)});
    } else {
      run = 1;
      symbols.push_back({lengths[i]});
    }
    i += run;
  }
  return symbols;
}

// The header of a final dynamic block of these code lengths.
Bits dynamic_block(const CodeLengths& lengths) {
  Bits bits;
  dynamic_header(bits, lengths.hlit, lengths.hdist, kCodeLengthLengths, length_symbols(lengths.all));
  return bits;
}

// A stream of such a block header, then zero bits enough to read any code.
std::vector<uint8_t> dynamic_stream(const CodeLengths& lengths) {
  Bits bits = dynamic_block(lengths);
  bits.put(0, 32);
  return bits.zlib({});
}

// ---------------------------------------------------------------------------
// Streams of an independent encoder
// ---------------------------------------------------------------------------

struct Stream {
  std::string name;
  size_t length;  // of the payload's first bytes it holds
};

std::vector<Stream> listed_streams() {
  std::ifstream in(kDir + "streams.txt");
  EXPECT_TRUE(in);
  std::vector<Stream> streams;
  Stream s;
  while (in >> s.name >> s.length) streams.push_back(s);
  return streams;
}

TEST(Inflate, StreamsOfPythonsZlib) {
  const std::vector<uint8_t> payload = read_bytes(kDir + "payload.bin");
  ASSERT_EQ(payload.size(), 34000u);
  const std::vector<Stream> streams = listed_streams();
  ASSERT_EQ(streams.size(), 19u);  // levels 0-9, fixed, huffman_only, rle, window512, small_blocks, flushes ...
  for (const Stream& s : streams) {
    SCOPED_TRACE(s.name);
    const std::vector<uint8_t> stream = read_bytes(kDir + s.name);
    const std::vector<uint8_t> want(payload.begin(), payload.begin() + long(s.length));
    EXPECT_TRUE(inflate_all(stream, s.length) == want);         // an exact bound
    EXPECT_TRUE(inflate_all(stream, s.length + 1000) == want);  // room to spare
  }
}

TEST(Inflate, BytesAfterTheStreamAreNotRead) {
  std::vector<uint8_t> stream = read_bytes(kDir + "level6.zz");
  const std::vector<uint8_t> want = read_bytes(kDir + "payload.bin");
  stream.insert(stream.end(), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(inflate_all(stream, want.size()) == want);
}

TEST(Inflate, OutputBeyondTheBoundIsRefused) {
  for (const char* name : {"level0.zz", "level1.zz", "level9.zz", "fixed.zz", "stored_flushes.zz"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> stream = read_bytes(kDir + name);
    const std::vector<Stream> streams = listed_streams();
    size_t length = 0;
    for (const Stream& s : streams) {
      if (s.name == name) length = s.length;
    }
    ASSERT_GT(length, 0u);
    for (size_t capacity : {size_t(0), size_t(1), length / 2, length - 1}) {
      std::vector<uint8_t> out(capacity);
      try {
        inflate_zlib(stream.data(), stream.size(), out.data(), out.size());
        ADD_FAILURE() << "inflated into " << capacity << " bytes";
      } catch (const InflateError& e) {
        EXPECT_EQ(e.kind, Kind::OutputFull);
        EXPECT_THAT(e.what(), HasSubstr("more than the " + std::to_string(capacity) + " bytes"));
        EXPECT_LE(e.produced, capacity);
      }
    }
  }
}

// Every prefix of a stream is refused as cut short, never read past its end.
TEST(Inflate, EveryTruncationIsRefused) {
  for (const char* name : {"huffman_only.zz", "stored_flushes.zz", "one_byte.zz", "empty.zz", "small_blocks.zz"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> stream = read_bytes(kDir + name);
    for (size_t n = 0; n < stream.size(); ++n) {
      // The prefix in a buffer of its own size, for sanitizers to see any read past it.
      const std::vector<uint8_t> prefix(stream.begin(), stream.begin() + long(n));
      const Refusal r = refusal(prefix, 34000);
      EXPECT_EQ(r.kind, Kind::Truncated) << "cut at " << n << ": " << r.message;
      EXPECT_THAT(r.message, HasSubstr("ends before the end of the stream")) << "cut at " << n;
    }
  }
}

// ---------------------------------------------------------------------------
// Hand-made streams
// ---------------------------------------------------------------------------

// A zlib header with valid check bits for these CMF and FLG bits.
std::vector<uint8_t> with_header(uint8_t cmf, uint8_t flg, std::vector<uint8_t> rest = {0x03, 0x00}) {
  flg = uint8_t(flg & ~31);
  flg = uint8_t(flg + (31 - (cmf * 256 + flg) % 31) % 31);
  std::vector<uint8_t> out = {cmf, flg};
  out.insert(out.end(), rest.begin(), rest.end());
  out.insert(out.end(), {0, 0, 0, 1});  // Adler-32 of nothing
  return out;
}

TEST(Inflate, ZlibHeader) {
  // 03 00: a final fixed block holding only its end: an empty stream.
  EXPECT_EQ(inflate_all(with_header(0x78, 0x00), 0).size(), 0u);
  EXPECT_EQ(inflate_all(with_header(0x08, 0xc0), 0).size(), 0u);  // window 256, any level bits
  EXPECT_THAT(refusal(with_header(0x77, 0x00)).message, HasSubstr("compression method 7 is not deflate"));
  EXPECT_THAT(refusal(with_header(0x88, 0x00)).message, HasSubstr("window size 2^16"));
  EXPECT_THAT(refusal(with_header(0x78, 0x20)).message, HasSubstr("preset dictionary (FDICT)"));
  std::vector<uint8_t> bad_check = with_header(0x78, 0x00);
  bad_check[1] ^= 1;
  EXPECT_THAT(refusal(bad_check).message, HasSubstr("header check bits (FCHECK)"));
  EXPECT_EQ(refusal(bad_check).kind, Kind::Malformed);
}

TEST(Inflate, BlockType3) {
  Bits bits;
  bits.put(1, 1);
  bits.put(3, 2);
  EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("invalid block type 3"));
}

TEST(Inflate, StoredBlocks) {
  // A stored block of "abc" then a final one of nothing.
  const std::vector<uint8_t> good = {0x78, 0x01, 0x00, 3, 0, 0xfc, 0xff, 'a', 'b', 'c', 0x01, 0, 0, 0xff, 0xff};
  std::vector<uint8_t> stream = good;
  const uint32_t adler = adler32({'a', 'b', 'c'});
  for (int shift = 24; shift >= 0; shift -= 8) stream.push_back(uint8_t(adler >> shift));
  EXPECT_TRUE(inflate_all(stream, 3) == std::vector<uint8_t>({'a', 'b', 'c'}));

  std::vector<uint8_t> mismatch = stream;
  mismatch[5] = 0xfd;  // NLEN no longer ~LEN
  EXPECT_THAT(refusal(mismatch).message, HasSubstr("stored block length 3 does not match its complement 65533"));
  EXPECT_EQ(refusal(stream, 2).kind, Kind::OutputFull);
}

TEST(Inflate, FixedBlockSymbols) {
  {  // 'a', 'b', then length 4 at distance 2: "ababab".
    Bits bits;
    bits.put(1, 1);
    bits.put(1, 2);
    bits.fixed_literal('a');
    bits.fixed_literal('b');
    bits.fixed_literal(258);  // length 4
    bits.fixed_distance(1);   // distance 2
    bits.fixed_literal(256);
    const std::vector<uint8_t> want = {'a', 'b', 'a', 'b', 'a', 'b'};
    EXPECT_TRUE(inflate_all(bits.zlib(want), 6) == want);
  }
  {
    Bits bits;
    bits.put(1, 1);
    bits.put(1, 2);
    bits.fixed_literal('a');
    bits.fixed_literal(257);  // length 3
    bits.fixed_distance(1);   // distance 2: one byte before the start
    bits.fixed_literal(256);
    bits.put(0, 16);
    EXPECT_THAT(refusal(bits.zlib({})).message,
                HasSubstr("distance 2 reaches back before the start of the data (1 bytes)"));
  }
  {
    Bits bits;
    bits.put(1, 1);
    bits.put(1, 2);
    bits.fixed_literal(286);
    bits.put(0, 16);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("invalid length symbol 286"));
  }
  {
    Bits bits;
    bits.put(1, 1);
    bits.put(1, 2);
    bits.fixed_literal('a');
    bits.fixed_literal(257);
    bits.fixed_distance(30);
    bits.put(0, 16);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("invalid distance symbol 30"));
  }
}

TEST(Inflate, AdlerMismatch) {
  std::vector<uint8_t> stream = read_bytes(kDir + "level6.zz");
  stream.back() ^= 0x40;
  const Refusal r = refusal(stream, 34000);
  EXPECT_EQ(r.kind, Kind::Malformed);
  EXPECT_THAT(r.message, HasSubstr("Adler-32 of the data does not match"));
}

TEST(Inflate, DynamicCodeShapes) {
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {1, 1}, {256, 1}}, {{0, 1}}))).message,
              HasSubstr("over-subscribed literal/length code"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 2}, {256, 2}}, {{0, 1}}))).message,
              HasSubstr("incomplete literal/length code"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {256, 1}}, {{0, 2}, {1, 2}, {2, 2}}, 257, 3))).message,
              HasSubstr("incomplete distance code"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {256, 1}}, {{0, 1}, {1, 1}, {2, 1}}, 257, 3))).message,
              HasSubstr("over-subscribed distance code"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {1, 1}}, {{0, 1}}))).message,
              HasSubstr("no end-of-block code"));
  // A lone code must be of one bit.
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{256, 2}}, {}))).message,
              HasSubstr("incomplete literal/length code"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {256, 1}}, {{0, 2}}))).message,
              HasSubstr("incomplete distance code"));
}

TEST(Inflate, DynamicLoneCodes) {
  // RFC 1951 3.2.7 allows a lone code of one bit, and no distance code at all.
  {  // Literal/length: only end-of-block (code 0); no distance code.
    Bits bits = dynamic_block(code_lengths({{256, 1}}, {}));
    bits.put_code(0, 1);
    EXPECT_EQ(inflate_all(bits.zlib({}), 10).size(), 0u);
  }
  {  // The lone code's unused twin (bit 1) is no code.
    Bits bits = dynamic_block(code_lengths({{256, 1}}, {}));
    bits.put_code(1, 1);
    bits.put(0, 32);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("invalid literal/length code"));
  }
  {  // A length with no distance code to follow it: 'x' is 0, 256 is 10, 257 is 11.
    Bits bits = dynamic_block(code_lengths({{'x', 1}, {256, 2}, {257, 2}}, {}, 258));
    bits.put_code(0, 1);
    bits.put_code(3, 2);
    bits.put(0, 32);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("invalid distance code"));
  }
  {  // A lone one-bit distance code, used: 'x', then length 3 at distance 1.
    Bits bits = dynamic_block(code_lengths({{'x', 1}, {256, 2}, {257, 2}}, {{0, 1}}, 258));
    bits.put_code(0, 1);
    bits.put_code(3, 2);
    bits.put_code(0, 1);
    bits.put_code(2, 2);
    const std::vector<uint8_t> want = {'x', 'x', 'x', 'x'};
    EXPECT_TRUE(inflate_all(bits.zlib(want), 4) == want);
  }
}

TEST(Inflate, DynamicHeaderFields) {
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {256, 1}}, {{0, 1}}, 287))).message,
              HasSubstr("287 literal/length codes, more than 286"));
  EXPECT_THAT(refusal(dynamic_stream(code_lengths({{0, 1}, {256, 1}}, {{0, 1}}, 257, 31))).message,
              HasSubstr("31 distance codes, more than 30"));
  {
    Bits bits;
    dynamic_header(bits, 257, 1, kCodeLengthLengths, {{16, 0}});
    bits.put(0, 32);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("a code length repeat with no length before it"));
  }
  {  // 138 zeros, then 121: one more than the 258 lengths.
    Bits bits;
    dynamic_header(bits, 257, 1, kCodeLengthLengths, {{18, 127}, {18, 110}});
    bits.put(0, 32);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr("code lengths repeat past the end of the lists"));
  }
  // The code length code itself: all 19 symbols of one bit; two of two bits.
  std::vector<unsigned> over(19, 1), incomplete(19, 0);
  incomplete[0] = incomplete[1] = 2;
  for (const auto& [lengths, what] :
       {std::pair{over, "over-subscribed code length code"}, std::pair{incomplete, "incomplete code length code"}}) {
    Bits bits;
    dynamic_header(bits, 257, 1, lengths, {});
    bits.put(0, 32);
    EXPECT_THAT(refusal(bits.zlib({})).message, HasSubstr(what));
  }
}

TEST(Inflate, CodesLongerThanTheRootTable) {
  // Literal/length codes of 1, 2, ..., 15 bits on symbols 0..14 and 15 bits on
  // end-of-block (a complete code): those of 11 bits and more go through the
  // sub-tables.
  std::vector<std::pair<unsigned, unsigned>> litlen;
  for (unsigned s = 0; s < 15; ++s) litlen.push_back({s, s + 1});
  litlen.push_back({256, 15});
  const CodeLengths lengths = code_lengths(litlen, {{0, 1}});
  Bits bits = dynamic_block(lengths);
  const std::vector<uint32_t> codes =
      canonical_codes(std::vector<unsigned>(lengths.all.begin(), lengths.all.begin() + 257));
  std::vector<uint8_t> want;
  for (unsigned s : {14u, 0u, 10u, 12u, 13u, 11u, 3u, 14u, 9u}) {
    bits.put_code(codes[s], lengths.all[s]);
    want.push_back(uint8_t(s));
  }
  bits.put_code(codes[256], 15);
  EXPECT_TRUE(inflate_all(bits.zlib(want), want.size()) == want);
}

}  // namespace
}  // namespace peak::image
