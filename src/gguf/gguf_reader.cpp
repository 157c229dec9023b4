// GGUF layout (all little-endian):
//   header:  magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv ×   string key | u32 value_type | value
//   n_tensors × string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset
//   padding to `general.alignment`, then the data section holding the tensors.
//   string = u64 length | bytes;  array = u32 elem_type | u64 count | elements.
//
// Validation rules, each refused with the key or tensor name and byte offset:
// magic; version 2 or 3 (1 and byte-swapped files named as such); counts against
// the bytes left before anything is reserved; string lengths; keys non-empty,
// printable ASCII, at most 65535 bytes, unique; value and element types known;
// array nesting depth; bools 0 or 1; general.alignment a uint32 power of two;
// tensor names non-empty, at most 63 bytes, unique; n_dims 1..4; dims >= 1;
// element count and byte size without overflow; rows a whole number of blocks;
// type ids known and not removed; offsets aligned; data inside the file; no
// two tensors overlapping.
#include "gguf/gguf_reader.h"

#include "gguf/printable.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace peak::gguf {

using kernels::ggml_row_bytes;
using kernels::ggml_type_traits;
using kernels::GgmlType;
using kernels::GgmlTypeTraits;

const char* value_type_name(ValueType type) {
  static const char* const kNames[kValueTypeCount] = {
      "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
      "bool", "string", "array", "uint64", "int64", "float64"};
  const auto id = static_cast<uint32_t>(type);
  return id < kValueTypeCount ? kNames[id] : "unknown";
}

size_t value_type_size(ValueType type) {
  switch (type) {
    case ValueType::UInt8: case ValueType::Int8: case ValueType::Bool: return 1;
    case ValueType::UInt16: case ValueType::Int16: return 2;
    case ValueType::UInt32: case ValueType::Int32: case ValueType::Float32: return 4;
    case ValueType::UInt64: case ValueType::Int64: case ValueType::Float64: return 8;
    case ValueType::String: case ValueType::Array: return 0;
  }
  return 0;
}

namespace {

template <typename T>
T load_le(const uint8_t* p) {
  // GGUF is little-endian and so are the hosts peak supports (x86-64, arm64).
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string quoted(std::string_view kind, std::string_view name) {
  std::string s(kind);
  s += " '";
  s += printable(name);  // from the file
  s += "'";
  return s;
}

}  // namespace

// Reads the file front to back, validating as it goes.
class Parser {
 public:
  explicit Parser(GgufFile& file) : f_(file), data_(file.data_), size_(file.size_) {}

  void run() {
    read_header();
    read_metadata();
    read_alignment();
    read_tensor_infos();
    place_tensor_data();
  }

 private:
  // ---- cursor ----------------------------------------------------------------
  uint64_t left() const { return size_ - pos_; }

  void need(uint64_t n, std::string_view what) {
    if (n > left()) {
      throw_format_error("file ends inside " + std::string(what) + " (needs " + std::to_string(n) +
                             " bytes, " + std::to_string(left()) + " left)",
                         subject_, pos_);
    }
  }

  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    const T v = load_le<T>(data_ + pos_);
    pos_ += sizeof(T);
    return v;
  }

  // A length-prefixed string: returns a view into the file.
  std::string_view read_string(std::string_view what) {
    const uint64_t at = pos_;
    const uint64_t len = read<uint64_t>(what);
    if (len > left()) {
      const uint64_t bytes_left = left();
      pos_ = at;
      throw_format_error(std::string(what) + " length " + std::to_string(len) + " exceeds the " +
                             std::to_string(bytes_left) + " bytes left",
                         subject_, at);
    }
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

  // A count of items, each at least `min_item_bytes` long, checked against the
  // bytes left so nothing is ever reserved for items that cannot exist.
  void check_count(uint64_t count, uint64_t min_item_bytes, std::string_view what, uint64_t at) {
    if (min_item_bytes > 0 && count > left() / min_item_bytes) {
      throw_format_error(std::string(what) + " " + std::to_string(count) + " cannot fit in the " +
                             std::to_string(left()) + " bytes left",
                         subject_, at);
    }
  }

  // ---- header ----------------------------------------------------------------
  void read_header() {
    if (size_ < 4 || std::memcmp(data_, "GGUF", 4) != 0) {
      throw_format_error("not a GGUF file (bad magic)", "", 0);
    }
    pos_ = 4;
    const uint32_t version = read<uint32_t>("the version");
    if (version == 0x01000000u || version == 0x02000000u || version == 0x03000000u) {
      throw_format_error("big-endian GGUF files are not supported", "", 4);
    }
    if (version == 1) {
      throw_format_error("GGUF version 1 is not supported (re-convert the model to version 3)", "", 4);
    }
    if (version != 2 && version != 3) {
      throw_format_error("unsupported GGUF version " + std::to_string(version) + " (peak reads versions 2 and 3)", "", 4);
    }
    f_.version_ = version;
    n_tensors_at_ = pos_;
    n_tensors_ = read<uint64_t>("the tensor count");
    n_kv_at_ = pos_;
    n_kv_ = read<uint64_t>("the metadata count");
  }

  // ---- metadata --------------------------------------------------------------
  // Containers whose entries are larger in memory than the smallest item in the
  // file grow with the items actually parsed instead of reserving for the
  // declared count, so a hostile count cannot make the parser allocate more
  // than the file holds.
  void read_metadata() {
    // Smallest key/value: 8-byte key length, 1 key byte, 4-byte type, 1 value byte.
    check_count(n_kv_, 14, "metadata count", n_kv_at_);
    for (uint64_t i = 0; i < n_kv_; ++i) {
      subject_.clear();
      const uint64_t key_at = pos_;
      const std::string_view key = read_string("a key");
      validate_key(key, key_at);
      subject_ = quoted("key", key);
      if (f_.kv_index_.count(key)) throw_format_error("duplicate key", subject_, key_at);
      const uint64_t type_at = pos_;
      const uint32_t type = read<uint32_t>("a value type");
      const ValueNode node = read_value(type, type_at, 0);
      f_.kv_index_.emplace(key, f_.kvs_.size());
      f_.kvs_.push_back({key, node});
    }
    subject_.clear();
  }

  void validate_key(std::string_view key, uint64_t at) {
    if (key.empty()) throw_format_error("empty key", "", at);
    if (key.size() > kMaxKeyBytes) {
      throw_format_error("key of " + std::to_string(key.size()) + " bytes (at most 65535)", "", at);
    }
    for (const char c : key) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u > 0x7e) {
        throw_format_error("key is not printable ASCII", quoted("key", key), at);
      }
    }
  }

  static bool is_known_value_type(uint32_t type) { return type < kValueTypeCount; }

  ValueNode read_value(uint32_t type_id, uint64_t type_at, uint32_t depth) {
    if (!is_known_value_type(type_id)) {
      throw_format_error("unknown value type " + std::to_string(type_id), subject_, type_at);
    }
    ValueNode node;
    node.type = static_cast<ValueType>(type_id);
    node.offset = pos_;
    switch (node.type) {
      case ValueType::String: {
        const std::string_view s = read_string("a string value");
        node.count = s.size();
        node.offset = pos_ - s.size();
        break;
      }
      case ValueType::Array:
        read_array(node, depth);
        break;
      case ValueType::Bool: {
        const uint8_t b = read<uint8_t>("a bool value");
        if (b > 1) throw_format_error("bool value " + std::to_string(b) + " (must be 0 or 1)", subject_, node.offset);
        break;
      }
      default:
        need(value_type_size(node.type), value_type_name(node.type));
        pos_ += value_type_size(node.type);
        break;
    }
    return node;
  }

  void read_array(ValueNode& node, uint32_t depth) {
    if (depth >= kMaxArrayNesting) {
      throw_format_error("arrays nested more than " + std::to_string(kMaxArrayNesting) + " deep", subject_, pos_);
    }
    const uint64_t elem_at = pos_;
    const uint32_t elem_type = read<uint32_t>("an array element type");
    if (!is_known_value_type(elem_type)) {
      throw_format_error("unknown array element type " + std::to_string(elem_type), subject_, elem_at);
    }
    node.elem_type = static_cast<ValueType>(elem_type);
    const uint64_t count_at = pos_;
    node.count = read<uint64_t>("an array length");
    node.offset = pos_;
    switch (node.elem_type) {
      case ValueType::String: {
        // One 8-byte offset per element, each element at least 8 bytes in the
        // file: reserving for the declared count never exceeds the file size.
        check_count(node.count, 8, "array length", count_at);
        node.side_index = f_.string_offsets_.size();
        f_.string_offsets_.reserve(f_.string_offsets_.size() + node.count);
        for (uint64_t i = 0; i < node.count; ++i) {
          f_.string_offsets_.push_back(pos_);
          read_string("an array string");
        }
        break;
      }
      case ValueType::Array: {
        check_count(node.count, 12, "array length", count_at);
        // Inner arrays are parsed first (they may append their own side entries),
        // then stored contiguously so element i is nested_arrays_[side_index + i].
        // No reserve: a node is larger than an inner array's 12-byte minimum.
        std::vector<ValueNode> inner;
        for (uint64_t i = 0; i < node.count; ++i) {
          ValueNode child;
          child.type = ValueType::Array;
          read_array(child, depth + 1);
          inner.push_back(child);
        }
        node.side_index = f_.nested_arrays_.size();
        f_.nested_arrays_.insert(f_.nested_arrays_.end(), inner.begin(), inner.end());
        break;
      }
      default: {
        const uint64_t elem_size = value_type_size(node.elem_type);
        check_count(node.count, elem_size, "array length", count_at);
        if (node.elem_type == ValueType::Bool) {
          for (uint64_t i = 0; i < node.count; ++i) {
            if (data_[pos_ + i] > 1) {
              throw_format_error("bool array element " + std::to_string(i) + " is " +
                                     std::to_string(data_[pos_ + i]) + " (must be 0 or 1)",
                                 subject_, pos_ + i);
            }
          }
        }
        pos_ += node.count * elem_size;
        break;
      }
    }
  }

  void read_alignment() {
    const auto it = f_.kv_index_.find("general.alignment");
    if (it == f_.kv_index_.end()) return;
    const ValueNode& node = f_.kvs_[it->second].node;
    const std::string subject = "key 'general.alignment'";
    if (node.type != ValueType::UInt32) {
      throw_format_error(std::string("alignment must be uint32, not ") + value_type_name(node.type), subject, node.offset);
    }
    const uint32_t alignment = load_le<uint32_t>(data_ + node.offset);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      throw_format_error("alignment " + std::to_string(alignment) + " is not a power of two", subject, node.offset);
    }
    f_.alignment_ = alignment;
  }

  // ---- tensors ---------------------------------------------------------------
  void read_tensor_infos() {
    // Smallest tensor info: 8 + 1 name bytes, 4 n_dims, 8 one dim, 4 type, 8 offset.
    check_count(n_tensors_, 33, "tensor count", n_tensors_at_);
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      subject_ = "tensor #" + std::to_string(i);
      const uint64_t name_at = pos_;
      TensorInfo t;
      t.name = read_string("a tensor name");
      if (t.name.empty()) throw_format_error("empty tensor name", subject_, name_at);
      subject_ = quoted("tensor", t.name);
      if (t.name.size() > kMaxTensorNameBytes) {
        throw_format_error("tensor name of " + std::to_string(t.name.size()) + " bytes (at most 63)", subject_, name_at);
      }
      if (f_.tensor_index_.count(t.name)) throw_format_error("duplicate tensor name", subject_, name_at);

      const uint64_t dims_at = pos_;
      t.n_dims = read<uint32_t>("a tensor's dimension count");
      if (t.n_dims < 1 || t.n_dims > kMaxTensorDims) {
        throw_format_error("tensor has " + std::to_string(t.n_dims) + " dimensions (must be 1 to 4)", subject_, dims_at);
      }
      uint64_t n_elements = 1;
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        const uint64_t dim_at = pos_;
        const uint64_t ne = read<uint64_t>("a tensor dimension");
        if (ne < 1) throw_format_error("dimension " + std::to_string(d) + " is 0", subject_, dim_at);
        if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n_elements) {
          throw_format_error("element count overflows 63 bits", subject_, dim_at);
        }
        n_elements *= ne;
        t.ne[d] = static_cast<int64_t>(ne);
      }

      const uint64_t type_at = pos_;
      const uint32_t type = read<uint32_t>("a tensor type");
      const GgmlTypeTraits* traits = ggml_type_traits(type);
      if (!traits) throw_format_error("unknown tensor type " + std::to_string(type), subject_, type_at);
      if (traits->removed) {
        throw_format_error("tensor type " + std::to_string(type) + " (" + traits->name +
                               ") was removed from the format",
                           subject_, type_at);
      }
      t.type = static_cast<GgmlType>(type);
      const uint64_t row = static_cast<uint64_t>(t.ne[0]);
      if (row % traits->block_elems != 0) {
        throw_format_error("row of " + std::to_string(row) + " elements is not a multiple of " + traits->name +
                               "'s block size " + std::to_string(traits->block_elems),
                           subject_, dims_at);
      }
      const uint64_t row_bytes = ggml_row_bytes(type, row);  // 0 when one row's bytes overflow
      const uint64_t n_rows = n_elements / row;
      if (row_bytes == 0 || n_rows > std::numeric_limits<uint64_t>::max() / row_bytes) {
        throw_format_error("byte size overflows 64 bits", subject_, dims_at);
      }
      t.n_bytes = row_bytes * n_rows;

      const uint64_t offset_at = pos_;
      t.offset = read<uint64_t>("a tensor offset");
      if (t.offset % f_.alignment_ != 0) {
        throw_format_error("data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                               std::to_string(f_.alignment_),
                           subject_, offset_at);
      }
      tensor_info_offsets_.push_back(offset_at);
      f_.tensor_index_.emplace(t.name, f_.tensors_.size());
      f_.tensors_.push_back(t);
    }
    subject_.clear();
  }

  void place_tensor_data() {
    const uint64_t align = f_.alignment_;
    const uint64_t end_of_infos = pos_;
    f_.data_offset_ = (end_of_infos + align - 1) / align * align;
    if (f_.tensors_.empty()) return;  // vocab-only files may end right after the metadata
    if (f_.data_offset_ > size_) {
      throw_format_error("data section starts at " + std::to_string(f_.data_offset_) + ", past the end of the file",
                         "", end_of_infos);
    }
    const uint64_t data_size = size_ - f_.data_offset_;
    for (size_t i = 0; i < f_.tensors_.size(); ++i) {
      TensorInfo& t = f_.tensors_[i];
      if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
        throw_format_error("data [" + std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                               ") runs past the end of the file (data section holds " +
                               std::to_string(data_size) + " bytes)",
                           quoted("tensor", t.name), tensor_info_offsets_[i]);
      }
      t.data = data_ + f_.data_offset_ + t.offset;
    }
    std::vector<size_t> order(f_.tensors_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return f_.tensors_[a].offset < f_.tensors_[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
      const TensorInfo& prev = f_.tensors_[order[k - 1]];
      const TensorInfo& cur = f_.tensors_[order[k]];
      if (prev.offset + prev.n_bytes > cur.offset) {
        throw_format_error("data overlaps tensor '" + std::string(prev.name) + "'", quoted("tensor", cur.name),
                           tensor_info_offsets_[order[k]]);
      }
    }
  }

  GgufFile& f_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint64_t n_tensors_ = 0, n_tensors_at_ = 0;
  uint64_t n_kv_ = 0, n_kv_at_ = 0;
  std::string subject_;
  std::vector<uint64_t> tensor_info_offsets_;
};

// ---- GgufFile ----------------------------------------------------------------

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t* data, size_t size) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->data_ = data;
  file->size_ = size;
  Parser(*file).run();
  return file;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path, const io::MapOptions& options) {
  return open(io::FileSource::path(path), options);
}

std::unique_ptr<GgufFile> GgufFile::open(const io::FileSource& source, const io::MapOptions& options) {
  std::unique_ptr<io::MappedFile> mapping = io::MappedFile::open(source, options);
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->data_ = mapping->data();
  file->size_ = mapping->size();
  file->mapping_ = std::move(mapping);
  try {
    Parser(*file).run();
  } catch (const GgufError& e) {
    throw GgufError(source.name() + ": " + e.what());
  }
  return file;
}

std::optional<size_t> GgufFile::find_index(std::string_view key) const {
  const auto it = kv_index_.find(key);
  if (it == kv_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<Value> GgufFile::find(std::string_view key) const {
  const auto i = find_index(key);
  if (!i) return std::nullopt;
  return value(*i);
}

Value GgufFile::get(std::string_view key) const {
  const auto v = find(key);
  if (!v) throw GgufError("missing key '" + std::string(key) + "'");
  return *v;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

// ---- Value -------------------------------------------------------------------

void Value::expect(ValueType wanted) const {
  if (node_.type != wanted) {
    throw GgufTypeError("key '" + std::string(key_) + "' holds " + value_type_name(node_.type) + ", not " +
                    value_type_name(wanted));
  }
}

#define PEAK_GGUF_SCALAR_ACCESSOR(name, ctype, vtype)            \
  ctype Value::name() const {                                   \
    expect(ValueType::vtype);                                   \
    return load_le<ctype>(file_->data_ + node_.offset);         \
  }
PEAK_GGUF_SCALAR_ACCESSOR(u8, uint8_t, UInt8)
PEAK_GGUF_SCALAR_ACCESSOR(i8, int8_t, Int8)
PEAK_GGUF_SCALAR_ACCESSOR(u16, uint16_t, UInt16)
PEAK_GGUF_SCALAR_ACCESSOR(i16, int16_t, Int16)
PEAK_GGUF_SCALAR_ACCESSOR(u32, uint32_t, UInt32)
PEAK_GGUF_SCALAR_ACCESSOR(i32, int32_t, Int32)
PEAK_GGUF_SCALAR_ACCESSOR(u64, uint64_t, UInt64)
PEAK_GGUF_SCALAR_ACCESSOR(i64, int64_t, Int64)
PEAK_GGUF_SCALAR_ACCESSOR(f32, float, Float32)
PEAK_GGUF_SCALAR_ACCESSOR(f64, double, Float64)
#undef PEAK_GGUF_SCALAR_ACCESSOR

bool Value::boolean() const {
  expect(ValueType::Bool);
  return file_->data_[node_.offset] != 0;
}

std::string_view Value::str() const {
  expect(ValueType::String);
  return {reinterpret_cast<const char*>(file_->data_ + node_.offset), static_cast<size_t>(node_.count)};
}

ArrayView Value::array() const {
  expect(ValueType::Array);
  return ArrayView(file_, key_, node_);
}

[[noreturn]] static void throw_not_integer(std::string_view key, ValueType type) {
  throw GgufTypeError("key '" + std::string(key) + "' holds " + value_type_name(type) + ", not an integer");
}

uint64_t Value::as_uint() const {
  switch (node_.type) {
    case ValueType::UInt8: return u8();
    case ValueType::UInt16: return u16();
    case ValueType::UInt32: return u32();
    case ValueType::UInt64: return u64();
    case ValueType::Int8: case ValueType::Int16: case ValueType::Int32: case ValueType::Int64: {
      const int64_t v = as_int();
      if (v < 0) throw GgufError("key '" + std::string(key_) + "' is negative (" + std::to_string(v) + ")");
      return static_cast<uint64_t>(v);
    }
    default: throw_not_integer(key_, node_.type);
  }
}

int64_t Value::as_int() const {
  switch (node_.type) {
    case ValueType::Int8: return i8();
    case ValueType::Int16: return i16();
    case ValueType::Int32: return i32();
    case ValueType::Int64: return i64();
    case ValueType::UInt8: case ValueType::UInt16: case ValueType::UInt32:
      return static_cast<int64_t>(as_uint());
    case ValueType::UInt64: {
      const uint64_t v = u64();
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw GgufError("key '" + std::string(key_) + "' is too large (" + std::to_string(v) + ")");
      }
      return static_cast<int64_t>(v);
    }
    default: throw_not_integer(key_, node_.type);
  }
}

double Value::as_float() const {
  if (node_.type == ValueType::Float32) return f32();
  if (node_.type == ValueType::Float64) return f64();
  throw GgufTypeError("key '" + std::string(key_) + "' holds " + value_type_name(node_.type) + ", not a float");
}

// ---- ArrayView ---------------------------------------------------------------

void ArrayView::expect(ValueType wanted, uint64_t i) const {
  if (node_.elem_type != wanted) {
    throw GgufTypeError("key '" + std::string(key_) + "' is an array of " + value_type_name(node_.elem_type) +
                    ", not of " + value_type_name(wanted));
  }
  if (i >= node_.count) {
    throw GgufError("key '" + std::string(key_) + "': index " + std::to_string(i) + " is past the array's " +
                    std::to_string(node_.count) + " elements");
  }
}

template <typename T>
T ArrayView::at(uint64_t i) const {
  constexpr ValueType kType = std::is_same_v<T, uint8_t>    ? ValueType::UInt8
                              : std::is_same_v<T, int8_t>   ? ValueType::Int8
                              : std::is_same_v<T, uint16_t> ? ValueType::UInt16
                              : std::is_same_v<T, int16_t>  ? ValueType::Int16
                              : std::is_same_v<T, uint32_t> ? ValueType::UInt32
                              : std::is_same_v<T, int32_t>  ? ValueType::Int32
                              : std::is_same_v<T, uint64_t> ? ValueType::UInt64
                              : std::is_same_v<T, int64_t>  ? ValueType::Int64
                              : std::is_same_v<T, float>    ? ValueType::Float32
                              : std::is_same_v<T, double>   ? ValueType::Float64
                                                            : ValueType::Bool;
  expect(kType, i);
  if constexpr (std::is_same_v<T, bool>) {
    return file_->data_[node_.offset + i] != 0;
  } else {
    return load_le<T>(file_->data_ + node_.offset + i * sizeof(T));
  }
}

template uint8_t ArrayView::at<uint8_t>(uint64_t) const;
template int8_t ArrayView::at<int8_t>(uint64_t) const;
template uint16_t ArrayView::at<uint16_t>(uint64_t) const;
template int16_t ArrayView::at<int16_t>(uint64_t) const;
template uint32_t ArrayView::at<uint32_t>(uint64_t) const;
template int32_t ArrayView::at<int32_t>(uint64_t) const;
template uint64_t ArrayView::at<uint64_t>(uint64_t) const;
template int64_t ArrayView::at<int64_t>(uint64_t) const;
template float ArrayView::at<float>(uint64_t) const;
template double ArrayView::at<double>(uint64_t) const;
template bool ArrayView::at<bool>(uint64_t) const;

std::string_view ArrayView::str(uint64_t i) const {
  expect(ValueType::String, i);
  const uint64_t at = file_->string_offsets_[node_.side_index + i];
  const uint64_t len = load_le<uint64_t>(file_->data_ + at);
  return {reinterpret_cast<const char*>(file_->data_ + at + 8), static_cast<size_t>(len)};
}

ArrayView ArrayView::array(uint64_t i) const {
  expect(ValueType::Array, i);
  return ArrayView(file_, key_, file_->nested_arrays_[node_.side_index + i]);
}

const uint8_t* ArrayView::raw() const {
  if (value_type_size(node_.elem_type) == 0) {
    throw GgufTypeError("key '" + std::string(key_) + "' is an array of " + value_type_name(node_.elem_type) +
                        ", which has no flat byte layout");
  }
  return file_->data_ + node_.offset;
}

}  // namespace peak::gguf
