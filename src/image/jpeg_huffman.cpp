#include "image/jpeg_huffman.h"

#include <string>

#include "image/image.h"

namespace peak::image::jpeg {

HuffmanTable build_huffman_table(const uint8_t counts[16], const uint8_t* symbols) {
  HuffmanTable table;
  // Canonical codes (T.81 C.2): each length's codes follow on from the previous
  // length's next code, doubled. A code of all 1 bits is reserved, so the next
  // code must stay below 2^length.
  int32_t code = 0;
  int index = 0;
  for (int length = 1; length <= 16; ++length) {
    const int count = counts[length - 1];
    if (index + count > 256) throw ImageError("JPEG: Huffman table with more than 256 codes");
    if (code + count >= int32_t{1} << length) {
      throw ImageError("JPEG: bad Huffman table (too many codes of length " + std::to_string(length) + ")");
    }
    table.symbol_offset[length] = index - code;
    table.max_code[length] = count == 0 ? -1 : code + count - 1;
    for (int i = 0; i < count; ++i, ++code, ++index) {
      table.symbols[index] = symbols[index];
      if (length <= HuffmanTable::kFastBits) {
        const int shift = HuffmanTable::kFastBits - length;
        const auto entry = static_cast<uint16_t>(length << 8 | symbols[index]);
        for (int32_t prefix = code << shift; prefix < (code + 1) << shift; ++prefix) table.fast[prefix] = entry;
      }
    }
    code <<= 1;
  }
  return table;
}

void throw_bad_huffman_code() { throw ImageError("JPEG: bad Huffman code"); }

}  // namespace peak::image::jpeg
