// Session files: a ChatSession's state (session_state.h) with the settings it
// was kept under and, optionally, the main KV cache's cells. Layout
// (little-endian):
//   "PKSS" | u32 format version | u64 payload bytes | payload | u64 FNV-1a of payload
// The payload's sections, in order:
//   model       a fingerprint of the model the session ran
//   settings    memory mode, recent_max, summary_max, headroom, system prompt, template name
//   pictures    format 4: each picture the log shows: its id, the FNV-1a of its
//               rows, tokens, width, whether they attend both ways, the rows
//               (f32); Recent's tokens hold its rows as image_token()s
//   segments    the Prefix tokens, the Summary text and tokens, the Recent messages
//   messages    the pending dropped text, the whole message log (format 3: with
//               each message's tool calls, or the call a tool result answers;
//               format 4: with the ids of the pictures it shows),
//               how many of its last messages are tool results waiting for their
//               answer (format 3), how many of its first messages the summary
//               covers (format 2; format 1 files lack it and it is worked out
//               from the dropped text)
//   statistics  dropped tokens, summaries, turns and timings
//   cells       whether they follow; then the K and V types, positions and bytes
//               of the main cache's used cells
// Everything is read and checked before the live session changes (bytes
// against the checksum, then what the bytes say: sizes, ids, roles and their
// order, positions, finite values), so a bad file leaves it as it was; then
// the saved conversation is fitted to the session's settings (see
// ChatSession::restore), still without changing it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"
#include "chat/chat_session.h"
#include "chat/session_state.h"
#include "chat/summarizer.h"
#include "chat/turn_encoder.h"

namespace peak::chat {

// The settings a file was saved with, those that shape its cells.
struct SavedSettings {
  MemoryMode mode = MemoryMode::Ssskv;
  int64_t recent_max = 0;
  int64_t summary_max = 0;
  int64_t headroom = 0;
  std::string system_prompt;
  std::string template_name;
  std::vector<int32_t> prefix;  // the Prefix tokens: what the template wrote for the system prompt
};

// What a session with these settings and Prefix tokens saves of them.
SavedSettings saved_settings(const SessionSettings& settings, const std::vector<int32_t>& prefix);

// The main cache's used cells as saved (KvCache::snapshot and positions),
// with their places in pictures worked out from the tokens they hold (empty
// unless the cache keeps places: cell_positions).
struct SavedCells {
  kernels::GgmlType type_k = kernels::GgmlType::F16;
  kernels::GgmlType type_v = kernels::GgmlType::F16;
  std::vector<int32_t> positions;
  std::vector<runtime::PicturePlace> places;
  std::vector<uint8_t> bytes;
};

// What a file holds, read and checked.
struct SessionFileContents {
  SavedSettings settings;
  SessionState state;
  std::optional<SavedCells> cells;
};

// The session a file is read into: what the file is checked and fitted against.
struct RestoringSession {
  const model::Model& model;
  const SessionSettings& settings;
  const std::vector<int32_t>& prefix;
  const TurnEncoder& encoder;
  const runtime::KvCache& cache;
  const Summarizer* summarizer;  // ssskv: clips a summary too long for this summary_max
  const SessionStats& stats;     // what the statistics the file does not hold keep
};

// Writes the file atomically (io::AtomicFile); `cells` null: without them.
// std::invalid_argument, writing nothing, when `path` names the model's file.
void write_session_file(const std::string& path, const model::Model& model, const SavedSettings& settings,
                        const SessionState& state, const runtime::KvCache* cells);

// Reads and checks a file. Throws SessionMismatch for another model or a mode
// the session cannot continue, std::runtime_error naming anything else wrong.
SessionFileContents read_session_file(const std::string& path, const RestoringSession& session);

// A file's conversation fitted to the session's settings.
struct FittedSession {
  SessionState state;
  std::optional<SavedCells> cells;  // when they hold what the session needs
  int64_t dropped_cells = 0;        // the saved cells of Recent's first messages, which are left out
};

// Fits what a file holds to the session (see ChatSession::restore): Throws
// SessionMismatch when mode none cannot hold its Recent messages.
FittedSession fit_session_file(SessionFileContents file, const RestoringSession& session, const std::string& path);

// Puts fitted cells into `ctx` (empty before): the first `segments` (Prefix
// and Summary), then Recent's after the dropped ones, moved down over them.
void load_saved_cells(runtime::Context& ctx, const FittedSession& fitted, int64_t segments);

}  // namespace peak::chat
