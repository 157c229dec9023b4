// Shared plumbing of the C API: the thread-local last error and the guard that
// turns every C++ exception into a status code, so none crosses the boundary.
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>

#include "gguf/gguf_error.h"
#include "image/image.h"
#include "io/mapped_file.h"
#include "jinja/error.h"
#include "kernels/ggml_type.h"
#include "model/model.h"
#include "model/model_error.h"
#include "runtime/context.h"
#include "runtime/kv_cache.h"
#include "tokenizer/vocab.h"
#include "peak/peak.h"

namespace peak::capi {

// Records `message` as this thread's last error and returns `status`.
peak_status fail(peak_status status, const std::string& message);

// Runs `body` (returning peak_status) and maps exceptions to statuses.
template <typename Body>
peak_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const gguf::GgufTypeError& e) {
    return fail(PEAK_ERR_TYPE_MISMATCH, e.what());
  } catch (const gguf::GgufError& e) {
    return fail(PEAK_ERR_FORMAT, e.what());
  } catch (const io::IoError& e) {
    return fail(PEAK_ERR_IO, e.what());
  } catch (const image::ImageError& e) {
    return fail(PEAK_ERR_FORMAT, e.what());
  } catch (const model::InvalidModel& e) {
    return fail(PEAK_ERR_FORMAT, e.what());
  } catch (const model::UnsupportedModel& e) {
    return fail(PEAK_ERR_UNSUPPORTED, e.what());
  } catch (const model::LoadCancelled& e) {
    return fail(PEAK_ERR_CANCELLED, e.what());
  } catch (const runtime::Cancelled& e) {
    return fail(PEAK_ERR_CANCELLED, e.what());
  } catch (const tokenizer::TokenizerError& e) {
    return fail(PEAK_ERR_UNSUPPORTED, e.what());
  } catch (const jinja::TemplateError& e) {
    return fail(PEAK_ERR_TEMPLATE, e.what());
  } catch (const runtime::NonFiniteLogits& e) {
    return fail(PEAK_ERR_NON_FINITE, e.what());
  } catch (const runtime::ContextFull& e) {
    return fail(PEAK_ERR_CONTEXT_FULL, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::out_of_range& e) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(PEAK_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(PEAK_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(PEAK_ERR_INTERNAL, "unknown internal error");
  }
}

// Fails with PEAK_ERR_INVALID_ARGUMENT naming `what` when `p` is NULL.
#define PEAK_CHECK_ARG(p, what)                                                        \
  do {                                                                                 \
    if (!(p)) return ::peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL"); \
  } while (0)

// Copies `bytes` (the `what` of an API call, e.g. "prompt") and a terminating NUL
// into buf when both fit; reports the length without the NUL either way, and
// PEAK_ERR_BUFFER_TOO_SMALL (writing nothing) when they do not fit.
inline peak_status copy_out(const std::string& bytes, const char* what, char* buf, size_t capacity, size_t* length) {
  *length = bytes.size();
  if (bytes.size() >= capacity) {
    return fail(PEAK_ERR_BUFFER_TOO_SMALL, std::string("the ") + what + " needs " + std::to_string(bytes.size() + 1) +
                                               " bytes with its NUL, the buffer holds " + std::to_string(capacity));
  }
  std::memcpy(buf, bytes.c_str(), bytes.size() + 1);
  return PEAK_OK;
}

// The integer a C caller stored in an enum. Loading an enum object that holds a
// value outside its enumerators is undefined in C++, so read the bytes.
template <typename Enum>
int raw_enum(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Checks a KV cache type from a params struct (F32, F16, Q8_0 or Q4_0); `which`
// names the field in the message.
inline bool kv_type_ok(const peak_type& type, const char* which) {
  const int raw = raw_enum(type);
  if (raw == PEAK_TYPE_F32 || raw == PEAK_TYPE_F16 || raw == PEAK_TYPE_Q8_0 || raw == PEAK_TYPE_Q4_0) return true;
  fail(PEAK_ERR_INVALID_ARGUMENT, std::string(which) + " " + std::to_string(raw) + " (" +
                                      kernels::ggml_type_name(static_cast<uint32_t>(raw)) +
                                      ") is not a KV cache type (F32, F16, Q8_0, Q4_0)");
  return false;
}

// Counts of tokens and cells, like positions, are int32_t inside: no count may
// exceed INT32_MAX.
constexpr size_t kMaxTokenCount = INT32_MAX;

// A thread count from the caller as the engine's int. Counts beyond int become
// INT_MAX, which the engine refuses with a message naming its real limit.
inline int thread_count(size_t n_threads) {
  return n_threads > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n_threads);
}

// Checks a size_t from the caller against the largest value the engine takes for
// it; `what` names the field. A negative number the caller converted to size_t
// lands here as a huge one.
inline bool at_most(size_t value, size_t max, const char* what) {
  if (value <= max) return true;
  fail(PEAK_ERR_INVALID_ARGUMENT, std::string(what) + " is " + std::to_string(value) + ", more than the " +
                                      std::to_string(max) + " it can be");
  return false;
}

// Checks a params struct's declared size against this library's.
inline bool struct_size_ok(size_t declared, size_t expected, const char* struct_name) {
  if (declared == expected) return true;
  fail(PEAK_ERR_INVALID_ARGUMENT, std::string(struct_name) + ".struct_size is " + std::to_string(declared) +
                                      ", this library expects " + std::to_string(expected) +
                                      " (initialise it with the matching *_default_params function)");
  return false;
}

// Reads a params struct that grew at its end: a caller built against an older
// header declares the size of an earlier version (one of `earlier_sizes`) and
// the fields it does not have keep their defaults. NULL `given`: the defaults.
template <typename Params>
bool read_versioned_params(const Params* given, const Params& defaults, std::initializer_list<size_t> earlier_sizes,
                           const char* struct_name, Params* out) {
  *out = defaults;
  if (!given) return true;
  for (const size_t size : earlier_sizes) {
    if (given->struct_size == size) {
      std::memcpy(static_cast<void*>(out), given, size);
      return true;
    }
  }
  if (!struct_size_ok(given->struct_size, sizeof(Params), struct_name)) return false;
  *out = *given;
  return true;
}

}  // namespace peak::capi
