// GGUF reader: parses and validates a whole GGUF (v2/v3) file held in memory or
// mapped from disk, then answers questions about its metadata and tensors
// without copying: strings, arrays and tensor data are views into the bytes.
//
// Everything is validated up front (see gguf_reader.cpp for the rules), so a
// GgufFile that exists is internally consistent: every offset and length it
// reports lies inside the file. Every count is checked against the bytes left
// before anything is reserved for it, so no count in a hostile file can make the
// parser allocate more than the file itself.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/gguf_error.h"
#include "gguf/gguf_value_type.h"
#include "io/mapped_file.h"
#include "kernels/ggml_type.h"

namespace peak::gguf {

constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxTensorDims = 4;
constexpr size_t kMaxTensorNameBytes = 63;   // ggml keeps names in a 64-byte buffer with a terminator
constexpr size_t kMaxKeyBytes = 65535;
constexpr uint32_t kMaxArrayNesting = 8;     // arrays of arrays of ... at most this deep

class GgufFile;
class ArrayView;

// Where a value lives in the file. Arrays of strings and arrays of arrays also
// index into side tables of the file (their elements have variable sizes).
struct ValueNode {
  ValueType type = ValueType::UInt8;
  ValueType elem_type = ValueType::UInt8;  // arrays only
  uint64_t count = 0;      // arrays: elements; strings: bytes
  uint64_t offset = 0;     // payload: scalar bytes, string bytes or first array element
  uint64_t side_index = 0; // arrays of strings / arrays: first entry in the side table
};

// A typed handle on one metadata value. Accessors check the stored type and throw
// GgufError naming the key when it differs: asking for a uint32 stored as a
// string is an error, never a reinterpretation.
class Value {
 public:
  Value(const GgufFile* file, std::string_view key, ValueNode node) : file_(file), key_(key), node_(node) {}

  ValueType type() const { return node_.type; }
  std::string_view key() const { return key_; }

  uint8_t u8() const;
  int8_t i8() const;
  uint16_t u16() const;
  int16_t i16() const;
  uint32_t u32() const;
  int32_t i32() const;
  uint64_t u64() const;
  int64_t i64() const;
  float f32() const;
  double f64() const;
  bool boolean() const;
  std::string_view str() const;
  ArrayView array() const;

  // Lenient numeric reads for hyper-parameters, whose integer width differs
  // between converters: any integer type, range-checked; any float type.
  uint64_t as_uint() const;
  int64_t as_int() const;
  double as_float() const;

 private:
  void expect(ValueType wanted) const;
  const GgufFile* file_;
  std::string_view key_;
  ValueNode node_;
};

// A view of an array value. Element accessors check the element type.
class ArrayView {
 public:
  ArrayView(const GgufFile* file, std::string_view key, ValueNode node) : file_(file), key_(key), node_(node) {}

  ValueType elem_type() const { return node_.elem_type; }
  uint64_t size() const { return node_.count; }
  std::string_view key() const { return key_; }

  // Element i of a numeric or bool array, read without alignment assumptions.
  template <typename T>
  T at(uint64_t i) const;
  std::string_view str(uint64_t i) const;
  ArrayView array(uint64_t i) const;
  // Raw little-endian bytes of a numeric array (elem_type's size × size()).
  const uint8_t* raw() const;

 private:
  void expect(ValueType wanted, uint64_t i) const;
  const GgufFile* file_;
  std::string_view key_;
  ValueNode node_;
};

struct TensorInfo {
  std::string_view name;
  kernels::GgmlType type = kernels::GgmlType::F32;
  uint32_t n_dims = 0;
  int64_t ne[kMaxTensorDims] = {1, 1, 1, 1};  // elements per dimension, ne[0] is the row
  uint64_t offset = 0;    // from the start of the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // into the file's bytes

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Maps (or reads) and parses a file. Throws GgufError for format problems and
  // io::IoError for I/O problems, each naming the cause.
  static std::unique_ptr<GgufFile> open(const std::string& path, const io::MapOptions& options = {});
  // The same for a region of an open file (io::FileSource): every offset and
  // size is checked against the region, and counts from its start.
  static std::unique_ptr<GgufFile> open(const io::FileSource& source, const io::MapOptions& options = {});
  // Parses bytes the caller keeps alive for the lifetime of the result.
  static std::unique_ptr<GgufFile> parse(const uint8_t* data, size_t size);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const uint8_t* bytes() const { return data_; }
  size_t size() const { return size_; }
  const io::MappedFile* mapping() const { return mapping_.get(); }

  size_t n_kv() const { return kvs_.size(); }
  std::string_view key(size_t i) const { return kvs_.at(i).key; }
  Value value(size_t i) const { return Value(this, kvs_.at(i).key, kvs_.at(i).node); }
  std::optional<Value> find(std::string_view key) const;
  std::optional<size_t> find_index(std::string_view key) const;
  // The value of a key that must exist: throws GgufError "missing key" otherwise.
  Value get(std::string_view key) const;

  size_t n_tensors() const { return tensors_.size(); }
  const TensorInfo& tensor(size_t i) const { return tensors_.at(i); }
  const TensorInfo* find_tensor(std::string_view name) const;

 private:
  friend class Parser;
  friend class Value;
  friend class ArrayView;
  struct KeyValue {
    std::string_view key;
    ValueNode node;
  };

  GgufFile() = default;

  std::unique_ptr<io::MappedFile> mapping_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kvs_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<uint64_t> string_offsets_;  // arrays of strings: offset of each element's length prefix
  std::vector<ValueNode> nested_arrays_;  // arrays of arrays: one node per inner array
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

}  // namespace peak::gguf
