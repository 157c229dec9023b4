// What a ChatSession keeps of its conversation beside the cells of its cache:
// the Summary and Recent segments (chat_session.h), the dropped text waiting
// for the next summary, every message, the statistics. Plain data with the
// bookkeeping of messages leaving Recent: what a session file holds, and what
// a session adopts from one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/conversation_images.h"

namespace peak::chat {

struct SessionStats {
  int64_t n_ctx = 0;  // main context cells
  int64_t prefix_tokens = 0;
  int64_t summary_tokens = 0;
  int64_t recent_tokens = 0;
  int64_t recent_messages = 0;
  int64_t dropped_since_summary = 0;  // tokens dropped and not yet in a summary (nor in a running job)
  int64_t dropped_total = 0;
  int64_t summaries = 0;         // summaries put in place
  bool summary_running = false;  // the worker writes a summary or rebuilds a cache
  double summary_seconds = 0;    // total, in the summary context
  double rebuild_seconds = 0;    // total time putting summaries in place (background: catching up)
  double last_rebuild_seconds = 0;
  double window_shift_seconds = 0;    // total time moving Recent after drops
  double worker_rebuild_seconds = 0;  // total, prefilling rebuilt caches on the summary worker
  int64_t summary_failures = 0;       // jobs whose summary or rebuild failed (last_summary_error())
  int64_t turns = 0;                  // answers in the conversation (generated or appended)
  size_t kv_bytes = 0;                // main + summary contexts
  size_t staging_kv_bytes = 0;        // a cache being rebuilt on the worker, while one exists
};

// Where a message of the conversation is, for the model.
enum class MessageState {
  InContext,   // the model reads it: the system prompt, or a message in Recent
  Summarized,  // dropped from Recent; the summary in place covers it
  Dropped,     // dropped from Recent and in no summary: waiting for the next job (ssskv), or forgotten (window)
};

// A message of the conversation as it happened.
struct LoggedMessage {
  std::string role;  // "user", "assistant" or "tool"
  std::string content;
  std::vector<ToolCall> tool_calls = {};  // assistant: the calls it made (content may be empty)
  std::string tool_call_id = {};          // tool: the call it answers
  std::string name = {};                  // tool: the called function
  ImageList images = {};                  // user: the pictures at its content's markers
};

// A message in the Recent segment.
struct RecentMessage {
  std::string role;
  std::string text;             // what was said (for the summarizer and the template)
  std::vector<int32_t> tokens;  // the cells it occupies, in order
  uint64_t serial = 0;          // 1, 2, ... in the order messages join Recent (a session's own count)
  ImageList images = {};        // whose rows its tokens hold
};

struct SessionState {
  std::string summary_text;
  std::vector<int32_t> summary_tokens;  // the Summary segment's cells
  std::deque<RecentMessage> recent;     // the Recent segment, oldest first
  std::string dropped_text;             // not yet handed to the summarizer
  // The whole conversation. Recent's messages are always its last ones (a
  // message leaves Recent only from the front, or with the turn taken back).
  std::vector<LoggedMessage> log;
  // The last messages of log not yet in Recent: tool results waiting for the
  // answer that reads them (ChatSession::continue_turn).
  size_t unsent = 0;
  size_t summarized_messages = 0;  // the first ones of log, which the summary in place covers
  SessionStats stats;

  int64_t recent_cells() const;
  // Where message `index` of the log is.
  MessageState where(size_t index) const;
  // The tokens of the main cache's cells: `prefix`, the Summary's, Recent's.
  std::vector<int32_t> cached_tokens(const std::vector<int32_t>& prefix) const;
  // The images Recent's tokens show (what evaluating cached_tokens() reads).
  ImageList recent_images() const;
  // Recent's oldest message leaves it for the dropped text; returns its cells.
  int64_t drop_front();
  // The first `n` cells of Recent's oldest message leave it: the dropped text
  // gets the message's start.
  void cut_front(int64_t n);
  // Cuts `segment` (the tokens of a message, or of a user message and its
  // answer, the user's first `user_part`) to its last `limit` tokens when
  // longer, counting the cut as dropped with the start of the message in the
  // dropped text; returns how many tokens were cut. `prompt_role`: whose
  // message it is (tool results answered in one turn are one segment).
  size_t cut_long_segment(std::vector<int32_t>& segment, int64_t limit, const std::string& user_text, size_t user_part,
                          const std::string& answer, const std::string& prompt_role = "user");
  void count_dropped(int64_t cells);
};

// The line the dropped text gets for a message dropped whole (kImageInSummary
// in place of each image marker, here and below).
std::string dropped_message_line(const std::string& role, const std::string& text);
// The same for one whose start was cut: about its first half.
std::string cut_message_line(const std::string& role, const std::string& text);
// What the summarizer reads of a message (RecentMessage::text): its content,
// and the calls an answer made ("[calls f({...})]") or the function whose
// result a tool message is.
std::string summary_text(const LoggedMessage& message);
// A logged message as the template renders it.
ChatMessage chat_message(const LoggedMessage& message);
std::vector<ChatMessage> chat_messages(const std::vector<LoggedMessage>& messages);
// Where the exchange that log[at] belongs to starts: its user message (0 when
// no user message comes before it).
size_t exchange_start(const std::vector<LoggedMessage>& log, size_t at);

}  // namespace peak::chat
