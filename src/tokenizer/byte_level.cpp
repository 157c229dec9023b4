#include "tokenizer/byte_level.h"

#include <array>
#include <cstddef>

namespace peak::tokenizer {

namespace {

bool stands_for_itself(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct ByteLevelAlphabet {
  std::array<uint32_t, 256> codepoint_of_byte{};
  std::array<int16_t, 0x144> byte_of_codepoint{};  // the alphabet ends below U+0144

  ByteLevelAlphabet() {
    byte_of_codepoint.fill(-1);
    uint32_t next_shifted = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      const uint32_t cpt = stands_for_itself(byte) ? static_cast<uint32_t>(byte) : next_shifted++;
      codepoint_of_byte[static_cast<size_t>(byte)] = cpt;
      byte_of_codepoint[cpt] = static_cast<int16_t>(byte);
    }
  }
};

const ByteLevelAlphabet& alphabet() {
  static const ByteLevelAlphabet instance;
  return instance;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t byte) { return alphabet().codepoint_of_byte[byte]; }

int codepoint_to_byte(uint32_t cpt) {
  return cpt < alphabet().byte_of_codepoint.size() ? alphabet().byte_of_codepoint[cpt] : -1;
}

}  // namespace peak::tokenizer
