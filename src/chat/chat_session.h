// SSSKV-lite: a long conversation in a fixed-size KV cache.
//
// The main context holds three contiguous segments:
//
//   [ Prefix ][ Summary ][ Recent ...................... ][ headroom ]
//     BOS +     <= summary_max   <= recent_max tokens:      overflow room
//     system    tokens: rolling  the latest messages,       for the answer
//     prompt    summary of the   dropped from the left      being written
//     (fixed)   dropped history  at message boundaries      (<= headroom)
//
// Dropped messages are kept as text. Once trigger_discard tokens were dropped
// since the last summary, the Summarizer (its own small context on the same
// model) rewrites "old summary + dropped text" into a new summary on a
// background worker after the answer, while the app waits for the user. The
// next turn puts the new summary in place, by one of three strategies:
// - `background` (the default): the same worker then builds the new cache
//   exactly (cache_rebuild.h): the Prefix's cells, copied when the job starts,
//   plus the new Summary and the Recent tokens of that moment, prefilled in a
//   staging context, and keeps it up to date with the turns sent meanwhile
//   (messages dropped from Recent's front are removed and the rest shifted, as
//   exact as `shift`; messages added are evaluated). The next turn swaps it in:
//   the hot path only catches up what the worker has not yet applied (nothing,
//   when the user took longer to write than the worker). The staging context exists from
//   the worker's allocation to the swap, a second main cache: for qwen3-0.6b
//   (28 layers, 8 KV heads of 128) with Q8_0 KV at recent_max 4096, summary_max
//   256 and headroom 512, KvCache::bytes_needed gives 60,932 bytes a cell, so
//   282.6 MiB plus 59.5 KiB per Prefix token (296,373,248 + 60,932 x Prefix
//   bytes): 282.7 MiB without a system prompt (`peak chat` on that model shows
//   kv_bytes 345.7 MiB, this cache's size plus the summary context's 63.0 MiB).
// - `shift` keeps the Prefix's and the Recent segment's keys and values,
//   prefills only the new Summary and moves Recent to its new positions by
//   re-rotating its keys: cheap, but with more than one layer Recent's deeper
//   keys and values still saw the old summary and dropped text (not a fresh prefill).
// - `reprefill` clears the cache and prefills Prefix + Summary + Recent again:
//   exact, but the user waits for it.
//
// Modes: `ssskv` (the above), `window` (drop without summarizing: StreamingLLM
// with the Prefix as attention sink) and `none` (never drop; a clear error when
// the context is full). A session is used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "sampling/sampler_chain.h"
#include "chat/chat_template.h"
#include "chat/reasoning.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "chat/cache_rebuild.h"
#include "chat/summarizer.h"

namespace peak::chat {

enum class MemoryMode { Ssskv, Window, None };
enum class RebuildStrategy { Shift, Reprefill, Background };

struct SessionSettings {
  MemoryMode mode = MemoryMode::Ssskv;
  std::string system_prompt;
  std::string template_name;       // "" the model's own, "raw" no template
  // Thinking models: let the model reason before it answers. Off (the default),
  // the template asks it not to; either way the reasoning is streamed apart and
  // never kept in the conversation, and the summarizer never thinks.
  bool enable_thinking = false;
  int64_t recent_max = 4096;       // tokens of the Recent segment
  int64_t summary_max = 256;       // tokens of the Summary segment
  int64_t trigger_discard = 2048;  // dropped tokens that trigger a new summary
  int64_t headroom = 512;          // overflow cells for the answer: its length limit
  GgmlType type_k = GgmlType::Q8_0;  // main KV cache; F16 when its blocks do not divide the head size
  GgmlType type_v = GgmlType::Q8_0;
  RebuildStrategy rebuild = RebuildStrategy::Background;
  bool wait_for_summary = false;   // a turn arriving while a summary runs waits for it
  bool background_summary = true;  // false: summarize before the turn returns (deterministic tests)
  SummarizerSettings summarizer;   // its n_ctx, KV type, generation length
  int n_threads = 0;
  int64_t n_batch = 512;
  sampling::SamplerParams sampler;
};

struct SessionStats {
  int64_t n_ctx = 0;                 // main context cells
  int64_t prefix_tokens = 0;
  int64_t summary_tokens = 0;
  int64_t recent_tokens = 0;
  int64_t recent_messages = 0;
  int64_t dropped_since_summary = 0;  // tokens dropped and not yet in a summary (nor in a running job)
  int64_t dropped_total = 0;
  int64_t summaries = 0;              // summaries put in place
  bool summary_running = false;       // the worker writes a summary or rebuilds a cache
  double summary_seconds = 0;         // total, in the summary context
  double rebuild_seconds = 0;         // total time putting summaries in place (background: catching up)
  double last_rebuild_seconds = 0;
  double window_shift_seconds = 0;    // total time moving Recent after drops
  double worker_rebuild_seconds = 0;  // total, prefilling rebuilt caches on the summary worker
  int64_t summary_failures = 0;       // jobs whose summary or rebuild failed (last_summary_error())
  int64_t turns = 0;
  size_t kv_bytes = 0;                // main + summary contexts
  size_t staging_kv_bytes = 0;        // a cache being rebuilt on the worker, while one exists
};

// Where a turn's time went on the caller's thread, in seconds.
struct TurnTimes {
  double rebuild = 0;       // putting a new summary in place first (waiting for it included, catch_up not)
  double catch_up = 0;      // bringing a cache rebuilt on the worker up to date and swapping it in
  double window_shift = 0;  // dropping messages from Recent, and after the answer moving the rest down
  double prefill = 0;       // evaluating the user's message
  double generation = 0;    // sampling and evaluating the answer
  double settle = 0;        // evaluating the turn again as later prompts show it
};

struct TurnResult {
  runtime::GenerateResult generation;
  std::string answer;                 // what the conversation keeps
  std::string reasoning;              // a thinking model's reasoning, without its markers
  int64_t dropped_messages = 0;
  bool rebuilt = false;               // a new summary was put in place first
  bool summary_started = false;       // a summary job started after the answer
  TurnTimes times;
};

class ChatSession {
 public:
  // Throws std::invalid_argument for inconsistent settings.
  ChatSession(const model::Model& model, const SessionSettings& settings);
  ~ChatSession();

  // One user turn: makes room, evaluates the message, generates and streams the
  // answer through options.on_text and a thinking model's reasoning through
  // on_reasoning (dropped when empty). Afterwards the cache holds the turn as the
  // template renders it in history: the reasoning is removed and what followed
  // it evaluated again. Throws runtime::ContextFull in mode `none` when the
  // conversation no longer fits. A turn that throws (a callback's exception, a
  // failed evaluation or sampling) leaves the session as it was before the turn:
  // its cells, segments, statistics and sampler; only a finished summary it put
  // in place first stays, as wait_for_summary() would have put it.
  TurnResult chat(const std::string& user_text, const runtime::GenerateOptions& options,
                  const std::function<bool(const std::string&)>& on_reasoning = nullptr);
  // Forgets the conversation (keeps the Prefix); cancels a running summary or rebuild.
  void reset();
  // Runs every context of the session with `adapters` (runtime/adapters.h):
  // puts a running summary in place first, then evaluates the cached
  // conversation again, so the cache is what the new adapters compute. Throws
  // std::invalid_argument for adapters the context refuses, and whatever the
  // evaluation throws, leaving the session with its old adapters.
  void set_adapters(const runtime::Adapters& adapters);
  // Blocks until a running summary (and its rebuild) is done and puts it in
  // place: what an app does between turns so the next one starts with nothing
  // left to rebuild.
  void wait_for_summary();
  // Puts a finished summary in place now (every turn starts with this); with
  // `wait`, waits for a running one (and its rebuild) first. Returns whether one
  // was put in place. A turn sent while the worker runs and not waiting goes on
  // with the old summary and cache; a later turn swaps the rebuilt one in.
  bool apply_pending_summary(bool wait);

  SessionStats stats() const;
  // The times of the last turn that succeeded (zero before the first).
  const TurnTimes& last_turn_times() const { return last_turn_times_; }
  const std::string& summary() const { return summary_text_; }
  // Why the last failed summary job failed ("" before any failed). A failed
  // summary keeps the old one and its dropped text waits for the next job; a
  // failed background rebuild puts the new summary in place by a shift.
  const std::string& last_summary_error() const { return last_summary_error_; }
  // Dropped messages not yet handed to the summarizer, as it will read them.
  const std::string& dropped_text() const { return dropped_text_; }
  const SessionSettings& settings() const { return settings_; }
  const runtime::Context& context() const { return *ctx_; }
  const ChatTemplate& chat_template() const { return chat_; }
  // The conversation as it happened (every message, dropped or not).
  struct LoggedMessage {
    std::string role;
    std::string content;
  };
  const std::vector<LoggedMessage>& log() const { return log_; }
  // The tokens of the main context's cells, in order: Prefix, Summary, Recent.
  std::vector<int32_t> cached_tokens() const;
  // What the model would read if `user_text` came next, as things stand (before
  // the turn makes room): the cells' text and the framed message, control
  // tokens written out.
  std::string preview_prompt(const std::string& user_text) const;

  // Save / restore: settings, segments and messages, and optionally the KV
  // cache, in a versioned file with a checksum. Saving first waits for a running
  // summary (and its rebuild) and puts it in place; restoring cancels one.
  // Restoring a bad file throws and leaves the session as it was. (session_file.cpp)
  void save(const std::string& path, bool include_kv);
  void restore(const std::string& path);

 private:
  struct Message {
    std::string role;
    std::string text;              // what was said (for the summarizer and the template)
    std::vector<int32_t> tokens;   // the cells it occupies, in order
    uint64_t serial = 0;           // 1, 2, ... in the order messages join Recent
  };
  friend struct SessionFile;

  FormatOptions format_options() const;
  // A render of `turn` less what every render starts with (render_base_, else
  // the BOS text the tokenizer adds).
  std::string format_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const;
  // Its tokens, control tokens parsed in the template's text only.
  std::vector<int32_t> encode_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const;
  std::vector<int32_t> user_segment(const std::string& text) const;
  // A finished turn as later prompts show it.
  std::vector<int32_t> history_tokens(const std::string& user_text, const std::string& answer) const;
  void settle_turn(int64_t turn_first_cell, const std::vector<int32_t>& user_tokens, size_t user_cut,
                   const std::string& user_text, const std::string& answer, const std::vector<int32_t>& generated);
  std::vector<int32_t> summary_segment(const std::string& summary) const;
  // The segment as the cells hold it, clipped to summary_max. Reads only what
  // construction set: the summary worker calls it too.
  std::vector<int32_t> summary_cells(const std::string& summary) const;
  int64_t recent_cells() const;
  int64_t first_recent_cell() const { return static_cast<int64_t>(prefix_.size() + summary_tokens_.size()); }
  // What a turn changes, kept until it has succeeded (see chat()).
  struct TurnUndo {
    explicit TurnUndo(const ChatSession& s);
    std::deque<Message> recent;
    std::string dropped_text;
    SessionStats stats;
    sampling::SamplerChain sampler;
    size_t log_size;
    int64_t kv_used;
    // When making room removed cells [removed_at, +n): their bytes and
    // positions, to be put back. Recent keeps its positions until the turn has
    // succeeded; then it moves down by n in finish_room().
    int64_t removed_at = -1;
    std::vector<uint8_t> removed_cells;
    std::vector<int32_t> removed_positions;
  };
  void run_turn(const std::string& user_text, std::vector<int32_t> segment, const runtime::GenerateOptions& options,
                const std::function<bool(const std::string&)>& on_reasoning, TurnResult& turn, TurnUndo& undo);
  void roll_back(TurnUndo& undo);
  void make_room(int64_t incoming, TurnResult& turn, TurnUndo& undo);
  void finish_room(TurnResult& turn, const TurnUndo& undo);
  void drop_front();
  bool put_pending_summary_in_place(bool wait, TurnTimes& times);
  void put_summary_in_place(const std::string& summary);
  void swap_in_rebuilt_cache(CacheRebuild& rebuild, const std::string& summary, TurnTimes& times);
  // Tells the rebuild how Recent changed since the last update; it applies
  // that on the worker (or here, at the swap).
  bool send_rebuild_update(CacheRebuild& rebuild);
  void prefill_all();
  void maybe_start_summary();
  void cancel_summary();
  void push_recent(const std::string& role, const std::string& text, std::vector<int32_t> tokens);

  const model::Model& model_;
  SessionSettings settings_;
  ChatTemplate chat_;
  bool raw_;
  std::string render_base_;  // what the template writes for no messages (BOS text, a dated system block)
  std::string system_role_;  // "system", or "user" when the template has no system role
  bool generation_opens_reasoning_ = false;  // the output starts inside the reasoning block
  std::unique_ptr<runtime::Context> ctx_;
  sampling::SamplerChain sampler_;
  std::unique_ptr<Summarizer> summarizer_;  // ssskv only
  // The background rebuild of the running summary job: its worker writes it,
  // this thread reads it only once the job is taken or cancelled.
  std::unique_ptr<CacheRebuild> rebuild_;
  uint64_t rebuild_next_serial_ = 0;  // messages from this serial on were not yet sent to it
  uint64_t next_serial_ = 1;

  std::vector<int32_t> prefix_;          // BOS + system prompt segment
  std::string summary_text_;
  std::vector<int32_t> summary_tokens_;  // the Summary segment's cells
  std::deque<Message> recent_;           // the Recent segment, oldest first
  std::string dropped_text_;             // not yet handed to the summarizer
  std::string job_dropped_text_;         // handed to the running (or last) job: back to dropped_text_ if it fails
  int64_t job_dropped_tokens_ = 0;
  std::string last_summary_error_;
  std::vector<LoggedMessage> log_;
  SessionStats stats_;
  TurnTimes last_turn_times_;
};

}  // namespace peak::chat
