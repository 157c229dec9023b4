#include "capi/capi_guard.h"
#include "kernels/ggml_type.h"

namespace {
thread_local std::string g_last_error;
}

namespace peak::capi {

peak_status fail(peak_status status, const std::string& message) {
  try {
    g_last_error = message;
  } catch (...) {
    // Not even the message fits in memory: keep the status.
  }
  return status;
}

}  // namespace peak::capi

extern "C" {

const char* peak_last_error(void) { return g_last_error.c_str(); }

const char* peak_status_name(peak_status status) {
  switch (peak::capi::raw_enum(status)) {
    case PEAK_OK: return "PEAK_OK";
    case PEAK_ERR_INVALID_ARGUMENT: return "PEAK_ERR_INVALID_ARGUMENT";
    case PEAK_ERR_IO: return "PEAK_ERR_IO";
    case PEAK_ERR_FORMAT: return "PEAK_ERR_FORMAT";
    case PEAK_ERR_UNSUPPORTED: return "PEAK_ERR_UNSUPPORTED";
    case PEAK_ERR_TYPE_MISMATCH: return "PEAK_ERR_TYPE_MISMATCH";
    case PEAK_ERR_NOT_FOUND: return "PEAK_ERR_NOT_FOUND";
    case PEAK_ERR_OUT_OF_MEMORY: return "PEAK_ERR_OUT_OF_MEMORY";
    case PEAK_ERR_BUFFER_TOO_SMALL: return "PEAK_ERR_BUFFER_TOO_SMALL";
    case PEAK_ERR_CONTEXT_FULL: return "PEAK_ERR_CONTEXT_FULL";
    case PEAK_ERR_CANCELLED: return "PEAK_ERR_CANCELLED";
    case PEAK_ERR_TEMPLATE: return "PEAK_ERR_TEMPLATE";
    case PEAK_ERR_NON_FINITE: return "PEAK_ERR_NON_FINITE";
    case PEAK_ERR_INTERNAL: return "PEAK_ERR_INTERNAL";
  }
  return "PEAK_ERR_UNKNOWN";
}

const char* peak_version(void) { return PEAK_VERSION_STRING; }

// peak_type must name every id a GGUF file may hold: when ggml assigns a new id,
// the engine's table grows and this stops compiling until peak.h names it too.
static_assert(peak::kernels::kGgmlTypeIdCount == PEAK_TYPE_MXFP4 + 1,
              "name the new ggml type ids in peak_type (peak.h)");

const char* peak_type_name(peak_type type) {
  return peak::kernels::ggml_type_name(static_cast<uint32_t>(peak::capi::raw_enum(type)));
}

}  // extern "C"
