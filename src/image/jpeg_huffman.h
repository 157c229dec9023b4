// Huffman-coded JPEG data (ITU-T T.81 Annex C and F.2.2): the code tables DHT
// segments define, and the bit reader that decodes one restart interval of a scan.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::image::jpeg {

// One DHT table. Codes of up to kFastBits bits are found with one lookup of the
// next kFastBits bits; longer ones (up to 16) by the canonical-code comparison
// of T.81 F.2.2.3.
struct HuffmanTable {
  static constexpr int kFastBits = 9;
  // (code length << 8) | symbol for each kFastBits-bit prefix that starts with
  // a code of at most kFastBits bits; 0 where the code is longer.
  uint16_t fast[1 << kFastBits] = {};
  // For each length L: the largest L-bit code (-1 if there is none), and the
  // number to add to an L-bit code to get its index in symbols.
  int32_t max_code[17] = {};
  int32_t symbol_offset[17] = {};
  uint8_t symbols[256] = {};
};

// Builds the table of `counts` (codes of each length 1..16, T.81's BITS) and
// `symbols` (as many as the counts add up to, at most 256: HUFFVAL). Throws
// ImageError when the counts overflow the codes their lengths can hold.
HuffmanTable build_huffman_table(const uint8_t counts[16], const uint8_t* symbols);

[[noreturn]] void throw_bad_huffman_code();

// The bits of one restart interval, stuffing already removed, most significant
// bit first. Past the end it reads zero bits and remembers that it did, so that
// the caller can refuse data that was cut short (overran()).
class BitReader {
 public:
  BitReader(const uint8_t* begin, const uint8_t* end) : next_(begin), end_(end) { refill(); }

  // The next Huffman-coded symbol.
  int decode(const HuffmanTable& table) {
    if (count_ < 16) refill();
    const uint16_t entry = table.fast[window_ >> (64 - HuffmanTable::kFastBits)];
    if (entry != 0) {
      consume(entry >> 8);
      return entry & 0xff;
    }
    for (int length = HuffmanTable::kFastBits + 1; length <= 16; ++length) {
      const auto code = static_cast<int32_t>(window_ >> (64 - length));
      if (code <= table.max_code[length]) {
        consume(length);
        return table.symbols[code + table.symbol_offset[length]];
      }
    }
    throw_bad_huffman_code();
  }

  // The next n (0..16) bits as an unsigned number.
  int bits(int n) {
    if (n == 0) return 0;
    if (count_ < n) refill();
    const auto value = static_cast<int>(window_ >> (64 - n));
    consume(n);
    return value;
  }

  int bit() { return bits(1); }

  // The next n (0..16) bits as the value of magnitude category n (T.81 F.2.2.1,
  // EXTEND): n-bit numbers below 2^(n-1) stand for the negative values.
  int extended(int n) {
    const int value = bits(n);
    return n != 0 && value < (1 << (n - 1)) ? value - (1 << n) + 1 : value;
  }

  // More bits were read than the interval holds: its data was cut short.
  bool overran() const { return padding_bytes_ * 8 > static_cast<size_t>(count_); }

 private:
  void consume(int n) {
    window_ <<= n;
    count_ -= n;
  }

  // Tops the window up to at least 57 bits.
  void refill() {
    if (end_ - next_ >= 8) {
      const int take = (63 - count_) >> 3;  // whole bytes that fit
      uint64_t word = 0;
      for (int i = 0; i < 8; ++i) word = word << 8 | next_[i];
      window_ |= word >> (64 - 8 * take) << (64 - count_ - 8 * take);
      next_ += take;
      count_ += 8 * take;
      return;
    }
    while (count_ <= 56) {
      uint64_t byte = 0;
      if (next_ < end_) {
        byte = *next_++;
      } else {
        ++padding_bytes_;
      }
      window_ |= byte << (56 - count_);
      count_ += 8;
    }
  }

  const uint8_t* next_;
  const uint8_t* end_;
  uint64_t window_ = 0;  // the next count_ bits, left-aligned
  int count_ = 0;
  size_t padding_bytes_ = 0;  // zero bytes read past end_
};

}  // namespace peak::image::jpeg
