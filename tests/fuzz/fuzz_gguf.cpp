// libFuzzer target: any byte string must either parse, after which every value
// and tensor it reports can be read in bounds, or be refused with GgufError.
// Anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf_reader.h"

namespace {

using peak::gguf::ArrayView;
using peak::gguf::ValueType;

volatile uint64_t g_sink;  // keeps the reads from being optimised away

void touch_array(const ArrayView& a) {
  for (uint64_t i = 0; i < a.size(); ++i) {
    switch (a.elem_type()) {
      case ValueType::String: g_sink = g_sink + a.str(i).size(); break;
      case ValueType::Array: touch_array(a.array(i)); break;
      case ValueType::Bool: g_sink = g_sink + a.at<bool>(i); break;
      default: g_sink = g_sink + a.raw()[i * peak::gguf::value_type_size(a.elem_type())]; break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<peak::gguf::GgufFile> file;
  try {
    file = peak::gguf::GgufFile::parse(data, size);
  } catch (const peak::gguf::GgufError&) {
    return 0;
  }
  for (size_t i = 0; i < file->n_kv(); ++i) {
    const peak::gguf::Value v = file->value(i);
    switch (v.type()) {
      case ValueType::String: g_sink = g_sink + v.str().size(); break;
      case ValueType::Array: touch_array(v.array()); break;
      case ValueType::Bool: g_sink = g_sink + v.boolean(); break;
      case ValueType::Float32: case ValueType::Float64: g_sink = g_sink + static_cast<uint64_t>(v.as_float() != 0); break;
      default:
        try {
          g_sink = g_sink + static_cast<uint64_t>(v.as_int());
        } catch (const peak::gguf::GgufError&) {
          // A uint64 above INT64_MAX: refused by as_int, which is correct.
        }
        break;
    }
  }
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const peak::gguf::TensorInfo& t = file->tensor(i);
    g_sink = g_sink + t.data[0] + t.data[t.n_bytes - 1];
  }
  return 0;
}
