// The library's messages to the program that uses it: warnings (a PEAK_ISA
// request this CPU cannot honour, weights that could not be locked in RAM),
// what a model load did, and detail for debugging. They are never how an
// error is reported (that is the thrown exception, then the C API's status and
// message): a program may ignore them.
//
// By default every message at the minimum level or above (Warn) is written to
// stderr as "peak: <message>\n"; set_sink sends them elsewhere (the C API's
// peak_set_log_callback, which an Android app routes to logcat).
//
// Any thread may write: the caller's, a chat session's summary worker, a
// model's background repacking thread. The sink is called on that thread,
// with no lock held, and may be called by several threads at once.
#pragma once

#include <string>

namespace peak::log {

// Most severe first; the minimum level lets through its own and those above it.
enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 3 };

// Receives one message: NUL-terminated, without a trailing newline, valid
// during the call. Must not throw.
using Sink = void (*)(Level level, const char* message);

// Sends every message to `sink`, or to stderr again when it is null. A message
// being written on another thread meanwhile may still reach the old sink.
void set_sink(Sink sink);
// Drops the messages below `level` (more detailed than it). Default: Warn.
void set_min_level(Level level);
// Whether a message at `level` would be written: check it before composing a
// message that costs something to build.
bool enabled(Level level);

void write(Level level, const std::string& message);
inline void error(const std::string& message) { write(Level::Error, message); }
inline void warn(const std::string& message) { write(Level::Warn, message); }
inline void info(const std::string& message) { write(Level::Info, message); }
inline void debug(const std::string& message) { write(Level::Debug, message); }

// The default sink: "peak: <message>\n" on stderr.
void write_to_stderr(Level level, const char* message);

}  // namespace peak::log
