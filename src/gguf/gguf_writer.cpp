#include "gguf/gguf_writer.h"

#include <cstring>
#include <stdexcept>

#include "io/atomic_file.h"

namespace peak::gguf {

using kernels::ggml_row_bytes;
using kernels::ggml_type_is_storable;
using kernels::ggml_type_name;
using kernels::GgmlType;

namespace {

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);
  out.insert(out.end(), b, b + sizeof v);
}

void append_string(std::vector<uint8_t>& out, std::string_view s) {
  append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void check_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) throw GgufError("GGUF key must be 1 to 65535 bytes long");
  for (const char c : key) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      throw GgufError("GGUF key '" + std::string(key) + "' is not printable ASCII");
    }
  }
}

// Serializes an array value read from a file (element type, count, elements).
void append_array(std::vector<uint8_t>& out, const ArrayView& a) {
  append<uint32_t>(out, static_cast<uint32_t>(a.elem_type()));
  append<uint64_t>(out, a.size());
  if (a.elem_type() == ValueType::String) {
    for (uint64_t i = 0; i < a.size(); ++i) append_string(out, a.str(i));
  } else if (a.elem_type() == ValueType::Array) {
    for (uint64_t i = 0; i < a.size(); ++i) append_array(out, a.array(i));
  } else {
    const uint8_t* raw = a.raw();
    out.insert(out.end(), raw, raw + a.size() * value_type_size(a.elem_type()));
  }
}

}  // namespace

// Byte sink over a file being written or a vector, tracking the bytes written for padding.
class GgufWriter::Sink {
 public:
  explicit Sink(io::AtomicFile* file) : file_(file) {}
  explicit Sink(std::vector<uint8_t>* memory) : memory_(memory) {}

  void write(const void* data, size_t n) {
    if (n == 0) return;
    if (memory_) {
      const auto* p = static_cast<const uint8_t*>(data);
      memory_->insert(memory_->end(), p, p + n);
    } else {
      file_->write(data, n);
    }
    written_ += n;
  }
  void pad_to(uint64_t alignment) {
    static const uint8_t kZeros[256] = {};
    while (written_ % alignment != 0) {
      const uint64_t gap = alignment - written_ % alignment;
      write(kZeros, static_cast<size_t>(gap < sizeof kZeros ? gap : sizeof kZeros));
    }
  }
  uint64_t written() const { return written_; }

 private:
  io::AtomicFile* file_ = nullptr;
  std::vector<uint8_t>* memory_ = nullptr;
  uint64_t written_ = 0;
};

GgufWriter::Entry& GgufWriter::entry_for(std::string_view key) {
  check_key(key);
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.bytes.clear();
      return e;
    }
  }
  entries_.push_back({std::string(key), {}});
  return entries_.back();
}

void GgufWriter::set_scalar(std::string_view key, ValueType type, const void* v, size_t size) {
  Entry& e = entry_for(key);
  append<uint32_t>(e.bytes, static_cast<uint32_t>(type));
  const auto* p = static_cast<const uint8_t*>(v);
  e.bytes.insert(e.bytes.end(), p, p + size);
}

void GgufWriter::set_u8(std::string_view k, uint8_t v) { set_scalar(k, ValueType::UInt8, &v, sizeof v); }
void GgufWriter::set_i8(std::string_view k, int8_t v) { set_scalar(k, ValueType::Int8, &v, sizeof v); }
void GgufWriter::set_u16(std::string_view k, uint16_t v) { set_scalar(k, ValueType::UInt16, &v, sizeof v); }
void GgufWriter::set_i16(std::string_view k, int16_t v) { set_scalar(k, ValueType::Int16, &v, sizeof v); }
void GgufWriter::set_u32(std::string_view k, uint32_t v) { set_scalar(k, ValueType::UInt32, &v, sizeof v); }
void GgufWriter::set_i32(std::string_view k, int32_t v) { set_scalar(k, ValueType::Int32, &v, sizeof v); }
void GgufWriter::set_u64(std::string_view k, uint64_t v) { set_scalar(k, ValueType::UInt64, &v, sizeof v); }
void GgufWriter::set_i64(std::string_view k, int64_t v) { set_scalar(k, ValueType::Int64, &v, sizeof v); }
void GgufWriter::set_f32(std::string_view k, float v) { set_scalar(k, ValueType::Float32, &v, sizeof v); }
void GgufWriter::set_f64(std::string_view k, double v) { set_scalar(k, ValueType::Float64, &v, sizeof v); }
void GgufWriter::set_bool(std::string_view k, bool v) {
  const uint8_t b = v ? 1 : 0;
  set_scalar(k, ValueType::Bool, &b, 1);
}

void GgufWriter::set_string(std::string_view key, std::string_view v) {
  Entry& e = entry_for(key);
  append<uint32_t>(e.bytes, static_cast<uint32_t>(ValueType::String));
  append_string(e.bytes, v);
}

void GgufWriter::set_array(std::string_view key, ValueType elem_type, const void* data, uint64_t count) {
  const size_t elem_size = value_type_size(elem_type);
  if (elem_size == 0) throw GgufError("set_array takes fixed-size elements; use set_string_array for strings");
  Entry& e = entry_for(key);
  append<uint32_t>(e.bytes, static_cast<uint32_t>(ValueType::Array));
  append<uint32_t>(e.bytes, static_cast<uint32_t>(elem_type));
  append<uint64_t>(e.bytes, count);
  const auto* p = static_cast<const uint8_t*>(data);
  e.bytes.insert(e.bytes.end(), p, p + count * elem_size);
}

void GgufWriter::set_string_array(std::string_view key, const std::vector<std::string>& items) {
  Entry& e = entry_for(key);
  append<uint32_t>(e.bytes, static_cast<uint32_t>(ValueType::Array));
  append<uint32_t>(e.bytes, static_cast<uint32_t>(ValueType::String));
  append<uint64_t>(e.bytes, items.size());
  for (const std::string& s : items) append_string(e.bytes, s);
}

void GgufWriter::copy_value(const Value& value) {
  Entry& e = entry_for(value.key());
  append<uint32_t>(e.bytes, static_cast<uint32_t>(value.type()));
  switch (value.type()) {
    case ValueType::String: append_string(e.bytes, value.str()); break;
    case ValueType::Array: append_array(e.bytes, value.array()); break;
    case ValueType::UInt8: append(e.bytes, value.u8()); break;
    case ValueType::Int8: append(e.bytes, value.i8()); break;
    case ValueType::UInt16: append(e.bytes, value.u16()); break;
    case ValueType::Int16: append(e.bytes, value.i16()); break;
    case ValueType::UInt32: append(e.bytes, value.u32()); break;
    case ValueType::Int32: append(e.bytes, value.i32()); break;
    case ValueType::UInt64: append(e.bytes, value.u64()); break;
    case ValueType::Int64: append(e.bytes, value.i64()); break;
    case ValueType::Float32: append(e.bytes, value.f32()); break;
    case ValueType::Float64: append(e.bytes, value.f64()); break;
    case ValueType::Bool: append<uint8_t>(e.bytes, value.boolean() ? 1 : 0); break;
  }
}

void GgufWriter::remove(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.erase(it);
      return;
    }
  }
}

bool GgufWriter::has(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

void GgufWriter::add_tensor(std::string_view name, GgmlType type, uint32_t n_dims, const int64_t* ne,
                            const void* data) {
  const std::string where = "tensor '" + std::string(name) + "'";
  if (name.empty() || name.size() > kMaxTensorNameBytes) throw GgufError(where + ": name must be 1 to 63 bytes");
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) throw GgufError(where + ": added twice");
  }
  if (n_dims < 1 || n_dims > kMaxTensorDims) throw GgufError(where + ": must have 1 to 4 dimensions");
  if (!ggml_type_is_storable(static_cast<uint32_t>(type))) throw GgufError(where + ": type cannot be stored");
  PendingTensor t{std::string(name), type, n_dims, {1, 1, 1, 1}, 0, data};
  uint64_t rows = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    if (ne[d] < 1) throw GgufError(where + ": every dimension must be at least 1");
    t.ne[d] = ne[d];
    if (d > 0) rows *= static_cast<uint64_t>(ne[d]);
  }
  const uint64_t row_bytes = ggml_row_bytes(static_cast<uint32_t>(type), static_cast<uint64_t>(ne[0]));
  if (row_bytes == 0) {
    throw GgufError(where + ": row of " + std::to_string(ne[0]) + " is not a multiple of " +
                    ggml_type_name(static_cast<uint32_t>(type)) + "'s block size");
  }
  t.n_bytes = row_bytes * rows;
  tensors_.push_back(std::move(t));
}

uint32_t GgufWriter::alignment() const {
  for (const Entry& e : entries_) {
    if (e.key == "general.alignment") {
      uint32_t type = 0, value = 0;
      std::memcpy(&type, e.bytes.data(), 4);
      if (type != static_cast<uint32_t>(ValueType::UInt32)) throw GgufError("general.alignment must be uint32");
      std::memcpy(&value, e.bytes.data() + 4, 4);
      if (value == 0 || (value & (value - 1)) != 0) throw GgufError("general.alignment must be a power of two");
      return value;
    }
  }
  return kDefaultAlignment;
}

void GgufWriter::write_to(Sink& sink, const TensorFillFn& fill) const {
  const uint32_t align = alignment();
  std::vector<uint8_t> head;
  head.insert(head.end(), {'G', 'G', 'U', 'F'});
  append<uint32_t>(head, 3);
  append<uint64_t>(head, tensors_.size());
  append<uint64_t>(head, entries_.size());
  for (const Entry& e : entries_) {
    append_string(head, e.key);
    head.insert(head.end(), e.bytes.begin(), e.bytes.end());
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    append_string(head, t.name);
    append<uint32_t>(head, t.n_dims);
    for (uint32_t d = 0; d < t.n_dims; ++d) append<uint64_t>(head, static_cast<uint64_t>(t.ne[d]));
    append<uint32_t>(head, static_cast<uint32_t>(t.type));
    append<uint64_t>(head, offset);
    offset += (t.n_bytes + align - 1) / align * align;
  }
  sink.write(head.data(), head.size());
  if (tensors_.empty()) return;  // like llama.cpp's vocab-only files: no data section
  sink.pad_to(align);

  std::vector<uint8_t> scratch;  // one tensor at a time when streaming
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const PendingTensor& t = tensors_[i];
    if (t.data) {
      sink.write(t.data, static_cast<size_t>(t.n_bytes));
    } else {
      if (!fill) throw GgufError("tensor '" + t.name + "' has no data and no fill function was given");
      scratch.resize(static_cast<size_t>(t.n_bytes));
      fill(i, scratch.data(), t.n_bytes);
      sink.write(scratch.data(), scratch.size());
    }
    sink.pad_to(align);
  }
}

std::vector<uint8_t> GgufWriter::write_memory(const TensorFillFn& fill) const {
  std::vector<uint8_t> out;
  Sink sink(&out);
  write_to(sink, fill);
  return out;
}

void GgufWriter::write_file(const std::string& path, const TensorFillFn& fill) const {
  io::AtomicFile file(path);  // removes its temporary file if anything below throws
  Sink sink(&file);
  write_to(sink, fill);
  file.commit();
}

}  // namespace peak::gguf
