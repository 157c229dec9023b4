// peak_set_log_callback and peak_set_log_level: the library's messages
// (log/log.h) to the program's callback instead of stderr.
#include <mutex>

#include "capi/capi_guard.h"
#include "log/log.h"

namespace {

// The program's callback and its user_data change together: a message takes
// both under the lock and calls the callback after releasing it, so the
// callback may call these functions itself.
std::mutex g_mutex;
peak_log_fn g_callback = nullptr;
void* g_user_data = nullptr;

void forward(peak::log::Level level, const char* message) {
  peak_log_fn callback;
  void* user_data;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    callback = g_callback;
    user_data = g_user_data;
  }
  if (callback) {
    callback(static_cast<peak_log_level>(level), message, user_data);
  } else {  // cleared since this message began
    peak::log::write_to_stderr(level, message);
  }
}

static_assert(static_cast<int>(peak::log::Level::Error) == PEAK_LOG_ERROR &&
                  static_cast<int>(peak::log::Level::Warn) == PEAK_LOG_WARN &&
                  static_cast<int>(peak::log::Level::Info) == PEAK_LOG_INFO &&
                  static_cast<int>(peak::log::Level::Debug) == PEAK_LOG_DEBUG,
              "peak_log_level numbers the levels as log::Level does");

}  // namespace

extern "C" {

void peak_set_log_callback(peak_log_fn callback, void* user_data) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_callback = callback;
    g_user_data = user_data;
  }
  peak::log::set_sink(callback ? forward : nullptr);
}

peak_status peak_set_log_level(peak_log_level level) {
  const int raw = peak::capi::raw_enum(level);
  if (raw < PEAK_LOG_ERROR || raw > PEAK_LOG_DEBUG) {
    return peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, "peak_set_log_level: level " + std::to_string(raw) +
                                                           " is not a peak_log_level (0 error .. 3 debug)");
  }
  peak::log::set_min_level(static_cast<peak::log::Level>(raw));
  return PEAK_OK;
}

}  // extern "C"
