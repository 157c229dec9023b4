#include "image/inflate.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace peak::image {
namespace {

using Kind = InflateError::Kind;

// ---------------------------------------------------------------------------
// The deflate alphabets (RFC 1951 3.2.5 and 3.2.7)
// ---------------------------------------------------------------------------

constexpr unsigned kMaxCodeBits = 15;
constexpr unsigned kLitLenSymbols = 288;     // 286 and 287 only fill out the fixed code
constexpr unsigned kDistSymbols = 32;        // likewise 30 and 31
constexpr unsigned kMaxDynamicLitLen = 286;  // what a dynamic block may send
constexpr unsigned kMaxDynamicDist = 30;
constexpr unsigned kCodeLengthSymbols = 19;
constexpr unsigned kEndOfBlock = 256;

// Symbols 257..285: match lengths 3..258 as a base and a count of extra bits.
constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
// Distance symbols 0..29: distances 1..32768.
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// The order in which a dynamic block's header gives the code length code's lengths.
constexpr uint8_t kCodeLengthOrder[kCodeLengthSymbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                          11, 4,  12, 3, 13, 2, 14, 1, 15};

// ---------------------------------------------------------------------------
// Huffman codes as lookup tables
// ---------------------------------------------------------------------------

// Deflate sends a Huffman code's first bit first, into the lowest free bit of
// each byte, so the next root_bits of input (lowest first) index the root table
// directly. A code longer than root_bits goes through a link in the root table
// to a sub-table, indexed by the bits that follow; a code shorter than the index
// fills every entry that starts with it.
struct HuffmanEntry {
  uint16_t value;    // the symbol; for a link, the sub-table's offset in `entries`
  uint8_t bits;      // input bits the entry accounts for; 0: no code begins so
  uint8_t sub_bits;  // a link's sub-table is indexed by this many further bits; 0 otherwise
};

struct HuffmanTable {
  unsigned root_bits = 0;
  std::vector<HuffmanEntry> entries;  // (1 << root_bits) root entries, then the sub-tables
};

enum class CodeShape {
  Complete,        // the lengths fill the code space exactly (Kraft sum 1)
  SingleOneBit,    // one code of one bit: RFC 1951 3.2.7 allows it a lone distance code (and here end-of-block)
  Empty,           // no code at all
  OverSubscribed,  // more codes than lengths allow
  Incomplete,      // any other set that leaves codes unused
};

uint16_t reverse_bits(uint16_t code, unsigned length) {
  uint16_t reversed = 0;
  for (unsigned i = 0; i < length; ++i) reversed = uint16_t(reversed << 1 | ((code >> i) & 1));
  return reversed;
}

// Builds the canonical code (RFC 1951 3.2.2) of lengths[0, count) into `table`,
// unless its shape is OverSubscribed or Incomplete; unused entries stay invalid.
CodeShape build_table(const uint8_t* lengths, unsigned count, unsigned root_bits, HuffmanTable& table) {
  unsigned codes_of_length[kMaxCodeBits + 1] = {};
  for (unsigned s = 0; s < count; ++s) ++codes_of_length[lengths[s]];
  codes_of_length[0] = 0;

  int left = 1;  // codes still free at the current length
  unsigned used = 0;
  for (unsigned len = 1; len <= kMaxCodeBits; ++len) {
    left = 2 * left - int(codes_of_length[len]);
    if (left < 0) return CodeShape::OverSubscribed;
    used += codes_of_length[len];
  }
  CodeShape shape = CodeShape::Complete;
  if (used == 0) {
    shape = CodeShape::Empty;
  } else if (left > 0) {
    if (used != 1 || codes_of_length[1] != 1) return CodeShape::Incomplete;
    shape = CodeShape::SingleOneBit;
  }

  uint16_t next_code[kMaxCodeBits + 1] = {};
  for (unsigned len = 1, code = 0; len <= kMaxCodeBits; ++len) {
    code = (code + codes_of_length[len - 1]) << 1;
    next_code[len] = uint16_t(code);
  }
  std::array<uint16_t, kLitLenSymbols> reversed{};  // each symbol's code, first bit lowest
  for (unsigned s = 0; s < count; ++s) {
    if (lengths[s] != 0) reversed[s] = reverse_bits(next_code[lengths[s]]++, lengths[s]);
  }

  // Each root entry that begins long codes links to a sub-table wide enough
  // for the longest of them.
  const unsigned root_size = 1u << root_bits;
  const unsigned root_mask = root_size - 1;
  table.root_bits = root_bits;
  table.entries.assign(root_size, HuffmanEntry{0, 0, 0});
  for (unsigned s = 0; s < count; ++s) {
    if (lengths[s] <= root_bits) continue;
    HuffmanEntry& link = table.entries[reversed[s] & root_mask];
    link.sub_bits = std::max<uint8_t>(link.sub_bits, uint8_t(lengths[s] - root_bits));
  }
  size_t size = root_size;
  for (HuffmanEntry& link : table.entries) {
    if (link.sub_bits == 0) continue;
    link.value = uint16_t(size);
    link.bits = uint8_t(root_bits);
    size += size_t(1) << link.sub_bits;
  }
  table.entries.resize(size, HuffmanEntry{0, 0, 0});

  for (unsigned s = 0; s < count; ++s) {
    const unsigned len = lengths[s];
    if (len == 0) continue;
    if (len <= root_bits) {
      for (unsigned i = reversed[s]; i < root_size; i += 1u << len) table.entries[i] = {uint16_t(s), uint8_t(len), 0};
    } else {
      const HuffmanEntry link = table.entries[reversed[s] & root_mask];
      const unsigned sub_len = len - root_bits;
      for (unsigned i = unsigned(reversed[s]) >> root_bits; i < (1u << link.sub_bits); i += 1u << sub_len) {
        table.entries[link.value + i] = {uint16_t(s), uint8_t(sub_len), 0};
      }
    }
  }
  return shape;
}

uint32_t adler32(const uint8_t* data, size_t size) {
  constexpr uint32_t kModulus = 65521;
  constexpr size_t kMaxRun = 5552;  // the most bytes before b can overflow 32 bits between reductions
  uint32_t a = 1, b = 0;
  while (size > 0) {
    size_t n = std::min(size, kMaxRun);
    size -= n;
    // Four bytes at a time: b gains a four times and each byte once per byte
    // after it, itself included; the same sums as byte by byte, with a shorter
    // chain of dependent additions.
    for (; n >= 4; n -= 4, data += 4) {
      b += 4 * a + 4u * data[0] + 3u * data[1] + 2u * data[2] + data[3];
      a += uint32_t(data[0]) + data[1] + data[2] + data[3];
    }
    for (; n > 0; --n) {
      a += *data++;
      b += a;
    }
    a %= kModulus;
    b %= kModulus;
  }
  return b << 16 | a;
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// The input as a stream of bits, first bit lowest (RFC 1951 3.1.1).
struct BitReader {
  const uint8_t* pos;
  const uint8_t* end;
  uint64_t bits = 0;  // the next `count` bits of input
  unsigned count = 0;
  unsigned padding = 0;  // of those, zero bits appended past the end of the input

  // Tops the buffer up to at least 56 bits. Past the end of the input it
  // appends zero bits: having consumed any of them (overrun()) means the input
  // was cut short.
  void refill() {
    if (end - pos >= 8) {
      // The bytes beyond the whole ones counted land above `count`; the next
      // refill ORs the same bytes over them.
      bits |= load_le64(pos) << count;
      pos += (63 - count) >> 3;
      count |= 56;
      return;
    }
    while (count < 56) {
      uint64_t byte = 0;
      if (pos < end) {
        byte = *pos++;
      } else {
        padding += 8;
      }
      bits |= byte << count;
      count += 8;
    }
  }

  void consume(unsigned n) {
    bits >>= n;
    count -= n;
  }

  bool overrun() const { return count < padding; }

  // The entry of `table` for the next bits, its bits consumed; the buffer holds
  // at least kMaxCodeBits bits. An entry of 0 bits: no code begins so.
  HuffmanEntry decode(const HuffmanTable& table) {
    const HuffmanEntry* entries = table.entries.data();
    HuffmanEntry entry = entries[bits & ((1u << table.root_bits) - 1)];
    if (entry.sub_bits != 0) {
      const unsigned index = unsigned(bits >> table.root_bits) & ((1u << entry.sub_bits) - 1);
      entry = entries[entry.value + index];
      if (entry.bits != 0) consume(table.root_bits + entry.bits);
    } else {
      consume(entry.bits);
    }
    return entry;
  }
};

// ---------------------------------------------------------------------------
// The inflater
// ---------------------------------------------------------------------------

class Inflater {
 public:
  Inflater(const uint8_t* in, size_t in_size, uint8_t* out, size_t capacity)
      : in_{in, in + in_size}, out_(out), capacity_(capacity) {}

  size_t run() {
    read_header();
    bool final_block = false;
    while (!final_block) {
      final_block = take(1) != 0;
      switch (take(2)) {
        case 0: stored_block(); break;
        case 1: fixed_block(); break;
        case 2: dynamic_block(); break;
        default: malformed("invalid block type 3");
      }
    }
    check_adler();
    return produced_;
  }

 private:
  // --- bits -----------------------------------------------------------------

  void consume(unsigned n) {
    in_.consume(n);
    if (in_.overrun()) truncated();
  }

  // The next n (<= 16) bits as a number, first bit lowest; refills first.
  uint32_t take(unsigned n) {
    if (in_.count < n) in_.refill();
    return take_buffered(n);
  }

  // As take(), from bits already in the buffer.
  uint32_t take_buffered(unsigned n) {
    const uint32_t value = uint32_t(in_.bits & ((uint64_t(1) << n) - 1));
    consume(n);
    return value;
  }

  // One symbol of `table`, from bits already in the buffer. No code begins
  // with the next bits only in codes that leave some unused (a lone one-bit
  // code, no distance code), where the first bit decides: a real one.
  unsigned decode(const HuffmanTable& table, const char* alphabet) {
    const HuffmanEntry entry = in_.decode(table);
    if (entry.bits == 0) malformed(std::string("invalid ") + alphabet + " code");
    if (in_.overrun()) truncated();
    return entry.value;
  }

  // Drops the bits up to the next byte boundary and gives the whole bytes
  // still buffered back to the input, to read bytes directly.
  void align_to_byte() {
    consume(in_.count % 8);
    in_.pos -= (in_.count - in_.padding) / 8;
    in_.bits = 0;
    in_.count = 0;
    in_.padding = 0;
  }

  // --- stream and blocks ----------------------------------------------------

  // RFC 1950 2.2: CMF (method, window size) and FLG (check bits, dictionary flag).
  void read_header() {
    if (in_.end - in_.pos < 2) truncated();
    const unsigned cmf = in_.pos[0], flg = in_.pos[1];
    if ((cmf & 15) != 8) malformed("compression method " + std::to_string(cmf & 15) + " is not deflate (8)");
    if ((cmf >> 4) > 7) {
      malformed("window size 2^" + std::to_string((cmf >> 4) + 8) + " is larger than deflate's 32 KiB");
    }
    if ((cmf * 256 + flg) % 31 != 0) malformed("header check bits (FCHECK) do not match");
    if (flg & 0x20) malformed("a preset dictionary (FDICT) is not supported");
    in_.pos += 2;
  }

  void check_adler() {
    align_to_byte();
    if (in_.end - in_.pos < 4) truncated();
    const uint8_t* p = in_.pos;
    const uint32_t stored = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
    if (stored != adler32(out_, produced_)) malformed("Adler-32 of the data does not match");
  }

  void stored_block() {
    align_to_byte();
    if (in_.end - in_.pos < 4) truncated();
    const uint8_t* p = in_.pos;
    const unsigned length = p[0] | unsigned(p[1]) << 8;
    const unsigned complement = p[2] | unsigned(p[3]) << 8;
    if (length != (~complement & 0xffff)) {
      malformed("stored block length " + std::to_string(length) + " does not match its complement " +
                std::to_string(complement));
    }
    in_.pos += 4;
    if (length > capacity_ - produced_) output_full();
    const size_t available = std::min<size_t>(length, size_t(in_.end - in_.pos));
    if (available > 0) std::memcpy(out_ + produced_, in_.pos, available);  // out_ may be null when empty
    in_.pos += available;
    produced_ += available;
    if (available < length) truncated();
  }

  void fixed_block() {
    if (fixed_litlen_.entries.empty()) {
      uint8_t lengths[kLitLenSymbols];
      std::fill(lengths, lengths + 144, 8);
      std::fill(lengths + 144, lengths + 256, 9);
      std::fill(lengths + 256, lengths + 280, 7);
      std::fill(lengths + 280, lengths + kLitLenSymbols, 8);
      build_table(lengths, kLitLenSymbols, kLitLenRootBits, fixed_litlen_);
      std::fill(lengths, lengths + kDistSymbols, 5);
      build_table(lengths, kDistSymbols, kDistRootBits, fixed_dist_);
    }
    huffman_block(fixed_litlen_, fixed_dist_);
  }

  // RFC 1951 3.2.7: the code lengths of both codes, themselves Huffman coded
  // with run lengths.
  void dynamic_block() {
    const unsigned litlen_count = take(5) + 257;
    const unsigned dist_count = take(5) + 1;
    const unsigned code_length_count = take(4) + 4;
    if (litlen_count > kMaxDynamicLitLen) {
      malformed(std::to_string(litlen_count) + " literal/length codes, more than " + std::to_string(kMaxDynamicLitLen));
    }
    if (dist_count > kMaxDynamicDist) {
      malformed(std::to_string(dist_count) + " distance codes, more than " + std::to_string(kMaxDynamicDist));
    }

    uint8_t code_length_lengths[kCodeLengthSymbols] = {};
    for (unsigned i = 0; i < code_length_count; ++i) code_length_lengths[kCodeLengthOrder[i]] = uint8_t(take(3));
    check_shape(build_table(code_length_lengths, kCodeLengthSymbols, kCodeLengthRootBits, code_length_table_),
                "code length", false);

    uint8_t lengths[kMaxDynamicLitLen + kMaxDynamicDist];
    const unsigned total = litlen_count + dist_count;
    for (unsigned i = 0; i < total;) {
      in_.refill();
      const unsigned symbol = decode(code_length_table_, "code length");
      if (symbol < 16) {
        lengths[i++] = uint8_t(symbol);
        continue;
      }
      uint8_t repeated = 0;
      unsigned run = 0;
      if (symbol == 16) {
        if (i == 0) malformed("a code length repeat with no length before it");
        repeated = lengths[i - 1];
        run = 3 + take_buffered(2);
      } else if (symbol == 17) {
        run = 3 + take_buffered(3);
      } else {
        run = 11 + take_buffered(7);
      }
      if (run > total - i) malformed("code lengths repeat past the end of the lists");
      std::fill(lengths + i, lengths + i + run, repeated);
      i += run;
    }

    if (lengths[kEndOfBlock] == 0) malformed("no end-of-block code");
    check_shape(build_table(lengths, litlen_count, kLitLenRootBits, litlen_), "literal/length", true);
    const CodeShape dist_shape = build_table(lengths + litlen_count, dist_count, kDistRootBits, dist_);
    if (dist_shape != CodeShape::Empty) check_shape(dist_shape, "distance", true);  // Empty: literals only
    huffman_block(litlen_, dist_);
  }

  void check_shape(CodeShape shape, const char* alphabet, bool single_one_bit_allowed) const {
    if (shape == CodeShape::OverSubscribed) malformed(std::string("over-subscribed ") + alphabet + " code");
    if (shape == CodeShape::Incomplete || shape == CodeShape::Empty ||
        (shape == CodeShape::SingleOneBit && !single_one_bit_allowed)) {
      malformed(std::string("incomplete ") + alphabet + " code");
    }
  }

  // Literals and (length, distance) matches up to the end-of-block symbol. One
  // refill covers a whole match: 15 + 5 length bits and 15 + 13 distance bits.
  // The reader and the output position are locals here: stores through the
  // output (bytes, which may alias anything) would otherwise reload members.
  void huffman_block(const HuffmanTable& litlen, const HuffmanTable& dist) {
    BitReader in = in_;
    size_t produced = produced_;
    uint8_t* const out = out_;
    const size_t capacity = capacity_;
    const auto sync = [&] {
      in_ = in;
      produced_ = produced;
    };
    for (;;) {
      in.refill();
      const HuffmanEntry entry = in.decode(litlen);
      if (entry.bits == 0 || in.overrun()) {
        sync();
        if (in.overrun()) truncated();
        malformed("invalid literal/length code");
      }
      unsigned symbol = entry.value;
      if (symbol < 256) {
        if (produced == capacity) {
          sync();
          output_full();
        }
        out[produced++] = uint8_t(symbol);
        continue;
      }
      if (symbol == kEndOfBlock) break;
      symbol -= 257;
      if (symbol >= 29) {
        sync();
        malformed("invalid length symbol " + std::to_string(symbol + 257));
      }
      const size_t length = kLengthBase[symbol] + (in.bits & ((1u << kLengthExtra[symbol]) - 1));
      in.consume(kLengthExtra[symbol]);
      const HuffmanEntry dist_entry = in.decode(dist);
      if (dist_entry.bits == 0 || in.overrun()) {
        sync();
        if (in.overrun()) truncated();
        malformed("invalid distance code");
      }
      if (dist_entry.value >= 30) {
        sync();
        malformed("invalid distance symbol " + std::to_string(dist_entry.value));
      }
      const size_t distance = kDistBase[dist_entry.value] + (in.bits & ((1u << kDistExtra[dist_entry.value]) - 1));
      in.consume(kDistExtra[dist_entry.value]);
      if (in.overrun() || distance > produced || length > capacity - produced) {
        sync();
        if (in.overrun()) truncated();
        if (distance > produced) {
          malformed("distance " + std::to_string(distance) + " reaches back before the start of the data (" +
                    std::to_string(produced) + " bytes)");
        }
        output_full();
      }
      uint8_t* to = out + produced;
      const uint8_t* from = to - distance;
      if (distance >= 8 && length + 8 <= capacity - produced) {
        // 8 bytes at a time, each word's source already final; the last word may
        // run up to 7 bytes past the match, into output not yet written.
        for (size_t i = 0; i < length; i += 8) std::memcpy(to + i, from + i, 8);
      } else {
        for (size_t i = 0; i < length; ++i) to[i] = from[i];  // overlapping: repeats the last `distance` bytes
      }
      produced += length;
    }
    sync();
  }

  // --- errors ---------------------------------------------------------------

  [[noreturn]] void malformed(const std::string& what) const { throw InflateError(Kind::Malformed, produced_, what); }
  [[noreturn]] void truncated() const {
    throw InflateError(Kind::Truncated, produced_, "the input ends before the end of the stream");
  }
  [[noreturn]] void output_full() const {
    throw InflateError(Kind::OutputFull, produced_,
                       "the data inflates to more than the " + std::to_string(capacity_) + " bytes expected");
  }

  static constexpr unsigned kLitLenRootBits = 10;
  static constexpr unsigned kDistRootBits = 8;
  static constexpr unsigned kCodeLengthRootBits = 7;  // code length codes are at most 7 bits: no sub-tables

  BitReader in_;

  uint8_t* out_;
  size_t capacity_;
  size_t produced_ = 0;

  HuffmanTable fixed_litlen_, fixed_dist_;
  HuffmanTable litlen_, dist_, code_length_table_;
};

}  // namespace

size_t inflate_zlib(const uint8_t* in, size_t in_size, uint8_t* out, size_t capacity) {
  return Inflater(in, in_size, out, capacity).run();
}

}  // namespace peak::image
