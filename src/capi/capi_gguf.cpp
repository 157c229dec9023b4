// peak_gguf_*: read-only inspection of GGUF files through the C API.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"

namespace {

using peak::capi::fail;
using peak::capi::guarded;
using peak::gguf::ArrayView;
using peak::gguf::Value;
using peak::gguf::ValueType;

// In the file every string is its 8-byte length, then its bytes; in
// peak_gguf::strings it is its bytes, then one NUL: 7 bytes less each.
constexpr size_t kBytesSavedPerString = sizeof(uint64_t) - 1;

// Calls visit(key index, text) for every string value, a string array's
// elements in order.
template <typename Visit>
void for_each_string(const peak::gguf::GgufFile& f, Visit&& visit) {
  for (size_t i = 0; i < f.n_kv(); ++i) {
    const Value v = f.value(i);
    if (v.type() == ValueType::String) visit(i, v.str());
    if (v.type() != ValueType::Array || v.array().elem_type() != ValueType::String) continue;
    const ArrayView a = v.array();
    for (uint64_t k = 0; k < a.size(); ++k) visit(i, a.str(k));
  }
}

// Lays every string value out in g.strings with a NUL after each, in file
// order, in memory sized exactly.
void copy_strings(peak_gguf& g) {
  size_t total = 0;
  for_each_string(*g.file, [&total](size_t, std::string_view text) { total += text.size() + 1; });
  g.strings.reserve(total);
  g.string_at.assign(g.file->n_kv(), 0);
  size_t previous_key = SIZE_MAX;
  for_each_string(*g.file, [&](size_t key, std::string_view text) {
    if (key != previous_key) g.string_at[key] = g.strings.size();
    previous_key = key;
    g.strings.insert(g.strings.end(), text.begin(), text.end());
    g.strings.push_back('\0');
  });
}

// The copy of element k of the string array at metadata index `index`. The
// file holds the elements back to back, so element k starts k * 7 bytes
// earlier in the copy than in the file, counted from element 0: no table of
// positions is needed.
const char* array_string_copy(const peak_gguf& g, size_t index, const ArrayView& a, uint64_t k) {
  const auto from_first = static_cast<size_t>(a.str(k).data() - a.str(0).data());
  return g.strings.data() + g.string_at[index] + from_first - static_cast<size_t>(k) * kBytesSavedPerString;
}

bool valid_kv(const peak_gguf* g, size_t index) {
  if (!g) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "peak_gguf handle is NULL");
    return false;
  }
  if (index >= g->file->n_kv()) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "metadata index " + std::to_string(index) + " is out of range (file has " +
                                        std::to_string(g->file->n_kv()) + " keys)");
    return false;
  }
  return true;
}

// Runs `read(value)` for a valid index and a non-null output.
template <typename Out, typename Read>
peak_status read_kv(const peak_gguf* g, size_t index, Out* out, Read&& read) {
  if (!valid_kv(g, index)) return PEAK_ERR_INVALID_ARGUMENT;
  PEAK_CHECK_ARG(out, "output pointer");
  return guarded([&] {
    *out = read(g->file->value(index));
    return PEAK_OK;
  });
}

// Runs `read(array, i)` for a valid array element and a non-null output.
template <typename Out, typename Read>
peak_status read_element(const peak_gguf* g, size_t index, size_t i, Out* out, Read&& read) {
  if (!valid_kv(g, index)) return PEAK_ERR_INVALID_ARGUMENT;
  PEAK_CHECK_ARG(out, "output pointer");
  return guarded([&] {
    const Value& v = g->file->value(index);
    const ArrayView a = v.array();
    if (i >= a.size()) {
      return fail(PEAK_ERR_INVALID_ARGUMENT, "index " + std::to_string(i) + " is past the end of array '" +
                                                 std::string(v.key()) + "' (" + std::to_string(a.size()) +
                                                 " elements)");
    }
    *out = read(a, i);
    return PEAK_OK;
  });
}

uint64_t element_as_uint(const ArrayView& a, uint64_t i);

int64_t element_as_int(const ArrayView& a, uint64_t i) {
  switch (a.elem_type()) {
    case ValueType::Int8: return a.at<int8_t>(i);
    case ValueType::Int16: return a.at<int16_t>(i);
    case ValueType::Int32: return a.at<int32_t>(i);
    case ValueType::Int64: return a.at<int64_t>(i);
    case ValueType::UInt64: {
      const uint64_t v = a.at<uint64_t>(i);
      if (v > static_cast<uint64_t>(INT64_MAX)) throw peak::gguf::GgufError("array element too large for int64");
      return static_cast<int64_t>(v);
    }
    default: return static_cast<int64_t>(element_as_uint(a, i));
  }
}

uint64_t element_as_uint(const ArrayView& a, uint64_t i) {
  switch (a.elem_type()) {
    case ValueType::UInt8: return a.at<uint8_t>(i);
    case ValueType::UInt16: return a.at<uint16_t>(i);
    case ValueType::UInt32: return a.at<uint32_t>(i);
    case ValueType::UInt64: return a.at<uint64_t>(i);
    case ValueType::Int8: case ValueType::Int16: case ValueType::Int32: case ValueType::Int64: {
      const int64_t v = element_as_int(a, i);
      if (v < 0) throw peak::gguf::GgufError("array element is negative");
      return static_cast<uint64_t>(v);
    }
    default:
      throw peak::gguf::GgufTypeError("array '" + std::string(a.key()) + "' holds " +
                                      peak::gguf::value_type_name(a.elem_type()) + ", not integers");
  }
}

}  // namespace

extern "C" {

peak_gguf_params peak_gguf_default_params(void) {
  peak_gguf_params p{};
  p.struct_size = sizeof(peak_gguf_params);
  p.use_mmap = 1;
  return p;
}

peak_status peak_gguf_open(const char* path, const peak_gguf_params* params, peak_gguf** out) {
  PEAK_CHECK_ARG(out, "peak_gguf_open: out");
  *out = nullptr;
  PEAK_CHECK_ARG(path, "peak_gguf_open: path");
  const peak_gguf_params p = params ? *params : peak_gguf_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_gguf_params), "peak_gguf_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    peak::io::MapOptions options;
    options.use_mmap = p.use_mmap != 0;
    auto g = std::make_unique<peak_gguf>();
    g->file = peak::gguf::GgufFile::open(path, options);
    g->keys.reserve(g->file->n_kv());
    for (size_t i = 0; i < g->file->n_kv(); ++i) g->keys.emplace_back(g->file->key(i));
    g->tensor_names.reserve(g->file->n_tensors());
    for (size_t i = 0; i < g->file->n_tensors(); ++i) g->tensor_names.emplace_back(g->file->tensor(i).name);
    copy_strings(*g);
    *out = g.release();
    return PEAK_OK;
  });
}

void peak_gguf_free(peak_gguf* gguf) { delete gguf; }

uint32_t peak_gguf_version(const peak_gguf* g) { return g ? g->file->version() : 0; }
uint32_t peak_gguf_alignment(const peak_gguf* g) { return g ? g->file->alignment() : 0; }
uint64_t peak_gguf_data_offset(const peak_gguf* g) { return g ? g->file->data_offset() : 0; }
uint64_t peak_gguf_file_size(const peak_gguf* g) { return g ? g->file->size() : 0; }

size_t peak_gguf_n_kv(const peak_gguf* g) { return g ? g->file->n_kv() : 0; }

const char* peak_gguf_key(const peak_gguf* g, size_t index) {
  return valid_kv(g, index) ? g->keys[index].c_str() : nullptr;
}

peak_status peak_gguf_lookup_key(const peak_gguf* g, const char* key, size_t* index) {
  PEAK_CHECK_ARG(g, "peak_gguf_lookup_key: gguf");
  PEAK_CHECK_ARG(key, "peak_gguf_lookup_key: key");
  PEAK_CHECK_ARG(index, "peak_gguf_lookup_key: index");
  return guarded([&] {
    const std::optional<size_t> found = g->file->find_index(key);
    if (!found) return fail(PEAK_ERR_NOT_FOUND, "the file has no key '" + std::string(key) + "'");
    *index = *found;
    return PEAK_OK;
  });
}

peak_gguf_type peak_gguf_kv_type(const peak_gguf* g, size_t index) {
  if (!valid_kv(g, index)) return PEAK_GGUF_TYPE_INVALID;
  return static_cast<peak_gguf_type>(g->file->value(index).type());
}

const char* peak_gguf_type_name(peak_gguf_type type) {
  const int raw = peak::capi::raw_enum(type);
  return raw >= 0 ? peak::gguf::value_type_name(static_cast<peak::gguf::ValueType>(raw)) : "unknown";
}

peak_status peak_gguf_get_uint(const peak_gguf* g, size_t index, uint64_t* out) {
  return read_kv(g, index, out, [](const Value& v) { return v.as_uint(); });
}

peak_status peak_gguf_get_int(const peak_gguf* g, size_t index, int64_t* out) {
  return read_kv(g, index, out, [](const Value& v) { return v.as_int(); });
}

peak_status peak_gguf_get_float(const peak_gguf* g, size_t index, double* out) {
  return read_kv(g, index, out, [](const Value& v) { return v.as_float(); });
}

peak_status peak_gguf_get_bool(const peak_gguf* g, size_t index, int* out) {
  return read_kv(g, index, out, [](const Value& v) { return v.boolean() ? 1 : 0; });
}

peak_status peak_gguf_get_string(const peak_gguf* g, size_t index, const char** data, size_t* length) {
  PEAK_CHECK_ARG(length, "length pointer");
  return read_kv(g, index, data, [&](const Value& v) {
    *length = v.str().size();
    return g->strings.data() + g->string_at[index];
  });
}

peak_status peak_gguf_get_array_info(const peak_gguf* g, size_t index, peak_gguf_type* elem_type, size_t* count) {
  PEAK_CHECK_ARG(count, "count pointer");
  return read_kv(g, index, elem_type, [&](const Value& v) {
    const ArrayView a = v.array();
    *count = static_cast<size_t>(a.size());
    return static_cast<peak_gguf_type>(a.elem_type());
  });
}

peak_status peak_gguf_get_array_uint(const peak_gguf* g, size_t index, size_t i, uint64_t* out) {
  return read_element(g, index, i, out, element_as_uint);
}

peak_status peak_gguf_get_array_int(const peak_gguf* g, size_t index, size_t i, int64_t* out) {
  return read_element(g, index, i, out, element_as_int);
}

peak_status peak_gguf_get_array_float(const peak_gguf* g, size_t index, size_t i, double* out) {
  return read_element(g, index, i, out, [](const ArrayView& a, uint64_t k) -> double {
    if (a.elem_type() == peak::gguf::ValueType::Float64) return a.at<double>(k);
    return a.at<float>(k);
  });
}

peak_status peak_gguf_get_array_bool(const peak_gguf* g, size_t index, size_t i, int* out) {
  return read_element(g, index, i, out, [](const ArrayView& a, uint64_t k) { return a.at<bool>(k) ? 1 : 0; });
}

peak_status peak_gguf_get_array_string(const peak_gguf* g, size_t index, size_t i, const char** data,
                                       size_t* length) {
  PEAK_CHECK_ARG(length, "length pointer");
  return read_element(g, index, i, data, [&](const ArrayView& a, uint64_t k) {
    *length = a.str(k).size();
    return array_string_copy(*g, index, a, k);
  });
}

size_t peak_gguf_n_tensors(const peak_gguf* g) { return g ? g->file->n_tensors() : 0; }

peak_status peak_gguf_get_tensor(const peak_gguf* g, size_t index, peak_gguf_tensor_info* out) {
  PEAK_CHECK_ARG(g, "peak_gguf handle");
  PEAK_CHECK_ARG(out, "output pointer");
  if (index >= g->file->n_tensors()) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "tensor index " + std::to_string(index) + " is out of range (file has " +
                                               std::to_string(g->file->n_tensors()) + " tensors)");
  }
  const peak::gguf::TensorInfo& t = g->file->tensor(index);
  out->name = g->tensor_names[index].c_str();
  out->type = static_cast<peak_type>(t.type);  // the reader accepts only ids peak_type names
  out->n_dims = t.n_dims;
  for (int d = 0; d < 4; ++d) out->ne[d] = t.ne[d];
  out->offset = t.offset;
  out->n_bytes = t.n_bytes;
  return PEAK_OK;
}

peak_status peak_gguf_lookup_tensor(const peak_gguf* g, const char* name, size_t* index) {
  PEAK_CHECK_ARG(g, "peak_gguf_lookup_tensor: gguf");
  PEAK_CHECK_ARG(name, "peak_gguf_lookup_tensor: name");
  PEAK_CHECK_ARG(index, "peak_gguf_lookup_tensor: index");
  return guarded([&] {
    const peak::gguf::TensorInfo* t = g->file->find_tensor(name);
    if (!t) return fail(PEAK_ERR_NOT_FOUND, "the file has no tensor '" + std::string(name) + "'");
    *index = static_cast<size_t>(t - &g->file->tensor(0));
    return PEAK_OK;
  });
}

}  // extern "C"
