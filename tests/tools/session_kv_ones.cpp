// Writes a session file (peak chat's /save, with its KV cells) again with every
// value of its cells set to 1.0, its checksum made right: cells the file's
// checks take (sizes right, values finite) that no model computed, for
// peak chat --verify-kv to catch.
//   session_kv_ones IN OUT
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include "session_file_edit.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: session_kv_ones IN OUT\n");
    return 2;
  }
  try {
    auto file = peak::chat::testing::EditableSessionFile::parse(peak::chat::testing::read_bytes(argv[1]));
    constexpr uint32_t kF32 = 0, kF16 = 1;  // GGML type ids
    if (!file.has_kv || file.type_k != file.type_v || (file.type_k != kF32 && file.type_k != kF16)) {
      std::fprintf(stderr, "session_kv_ones: %s has no F32 or F16 cells of one type\n", argv[1]);
      return 1;
    }
    const float one = 1.0f;
    const uint16_t half_one = 0x3c00;
    const size_t step = file.type_k == kF32 ? 4 : 2;
    for (size_t at = 0; at + step <= file.kv.size(); at += step) {
      std::memcpy(&file.kv[at], step == 4 ? static_cast<const void*>(&one) : &half_one, step);
    }
    peak::chat::testing::write_bytes(argv[2], file.bytes());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "session_kv_ones: %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
