// GGUF writer: collects metadata and tensor descriptions, then writes a GGUF v3
// file with the alignment padding readers expect (used by quantize and synth).
// The output is a pure function of what was added, so writing twice gives
// byte-identical files. Tensor data may be supplied up front or streamed one
// tensor at a time while writing, so a large model never has to be held whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_reader.h"

namespace peak::gguf {

// Fills `dst` (n_bytes long) with the data of tensor `index` (in add order).
using TensorFillFn = std::function<void(size_t index, uint8_t* dst, uint64_t n_bytes)>;

class GgufWriter {
 public:
  // Scalars and strings. Setting an existing key replaces its value in place.
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  // Arrays of fixed-size elements (`count` elements of `elem_type` at `data`).
  void set_array(std::string_view key, ValueType elem_type, const void* data, uint64_t count);
  void set_string_array(std::string_view key, const std::vector<std::string>& items);
  // Copies a value read from another file, whatever its type (arrays of arrays too).
  void copy_value(const Value& value);
  void remove(std::string_view key);
  bool has(std::string_view key) const;

  // Tensors are written in the order they were added. `data`, when given, must
  // stay valid until the file is written; otherwise `fill` supplies the bytes.
  void add_tensor(std::string_view name, kernels::GgmlType type, uint32_t n_dims, const int64_t* ne,
                  const void* data = nullptr);
  size_t n_tensors() const { return tensors_.size(); }
  uint64_t tensor_bytes(size_t index) const { return tensors_.at(index).n_bytes; }

  // Writes to `path` through io::AtomicFile: a failed or cancelled write (`fill`
  // throwing) leaves neither a truncated file nor a temporary one behind, a link
  // is written through, and a path that is not a regular file is refused.
  // Throws io::IoError with the path and cause.
  void write_file(const std::string& path, const TensorFillFn& fill = {}) const;
  // The same bytes in memory (tests, fuzz seeds).
  std::vector<uint8_t> write_memory(const TensorFillFn& fill = {}) const;

 private:
  struct Entry {
    std::string key;
    std::vector<uint8_t> bytes;  // u32 type followed by the serialized value
  };
  struct PendingTensor {
    std::string name;
    kernels::GgmlType type;
    uint32_t n_dims;
    int64_t ne[kMaxTensorDims];
    uint64_t n_bytes;
    const void* data;
  };
  class Sink;

  Entry& entry_for(std::string_view key);
  void set_scalar(std::string_view key, ValueType type, const void* v, size_t size);
  uint32_t alignment() const;
  void write_to(Sink& sink, const TensorFillFn& fill) const;

  std::vector<Entry> entries_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace peak::gguf
