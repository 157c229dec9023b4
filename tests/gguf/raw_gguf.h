// Builds GGUF byte images field by field, so tests can write files that are
// malformed in exactly one way (the writer only produces valid files).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace peak::test {

class RawGguf {
 public:
  std::vector<uint8_t> bytes;

  RawGguf& raw(std::string_view s) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  template <typename T>
  RawGguf& put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof v);
    bytes.insert(bytes.end(), b, b + sizeof v);
    return *this;
  }
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& str(std::string_view s) {
    u64(s.size());
    return raw(s);
  }
  // "GGUF", version, tensor count, metadata count.
  RawGguf& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    raw("GGUF");
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  RawGguf& kv_u32(std::string_view key, uint32_t v) {
    str(key);
    u32(4);
    return u32(v);
  }
  RawGguf& kv_string(std::string_view key, std::string_view v) {
    str(key);
    u32(8);
    return str(v);
  }
  // Tensor info: name, dims, ggml type id, offset in the data section.
  RawGguf& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name);
    u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    u32(type);
    return u64(offset);
  }
  RawGguf& pad(size_t alignment = 32) {
    while (bytes.size() % alignment) bytes.push_back(0);
    return *this;
  }
  RawGguf& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  size_t size() const { return bytes.size(); }
};

}  // namespace peak::test
