#include "log/log.h"

#include <atomic>
#include <cstdio>

namespace peak::log {
namespace {

// Plain atomics, constant-initialised: a message written during another
// object's static initialisation (the kernels' PEAK_ISA check) finds them set.
std::atomic<Sink> g_sink{nullptr};
std::atomic<int> g_min_level{static_cast<int>(Level::Warn)};

}  // namespace

void set_sink(Sink sink) { g_sink.store(sink, std::memory_order_release); }

void set_min_level(Level level) { g_min_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool enabled(Level level) { return static_cast<int>(level) <= g_min_level.load(std::memory_order_relaxed); }

void write(Level level, const std::string& message) {
  if (!enabled(level)) return;
  const Sink sink = g_sink.load(std::memory_order_acquire);
  (sink ? sink : write_to_stderr)(level, message.c_str());
}

void write_to_stderr(Level, const char* message) { std::fprintf(stderr, "peak: %s\n", message); }

}  // namespace peak::log
