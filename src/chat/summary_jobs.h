// The summaries of an ssskv session (chat_session.h): when a job starts, what
// it is handed, how the cache rebuilt beside it hears of the turns sent
// meanwhile, and how a finished job is put in place (by the session's
// RebuildStrategy: the rebuilt cache swapped in, the new Summary evaluated and
// Recent shifted after it, or everything prefilled again).
//
// A job is handed the dropped text (taken out of the session's state, and
// given back when the job fails or is cancelled) and, for a background
// rebuild, copies of the Prefix's cells and Recent's tokens. Its worker reads
// nothing else but the TurnEncoder this shares with the session, which is
// immutable.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/adapters.h"
#include "runtime/context.h"
#include "chat/cache_rebuild.h"
#include "chat/session_settings.h"
#include "chat/session_state.h"
#include "chat/summarizer.h"
#include "chat/turn_encoder.h"

namespace peak::chat {

class SummaryJobs {
 public:
  // Throws std::invalid_argument when the summary's framing leaves too little
  // of summary_max for its text, and what the Summarizer throws.
  // A background job's passes wait while `activity` (the session's
  // foreground, may be null) is busy.
  SummaryJobs(const model::Model& model, std::shared_ptr<const TurnEncoder> encoder, const SessionSettings& settings,
              runtime::ForegroundActivity* activity);
  ~SummaryJobs();  // cancels a running job: its worker stops before what it writes goes
  SummaryJobs(const SummaryJobs&) = delete;
  SummaryJobs& operator=(const SummaryJobs&) = delete;

  bool has_job() const { return summarizer_.has_job(); }
  // The worker writes a summary or rebuilds a cache.
  bool running() const { return summarizer_.running(); }
  // Whether a job can be put in place now: one is done, or one runs and `wait`.
  bool ready(bool wait) const { return has_job() && (wait || !running()); }

  // Starts a job when trigger_discard tokens were dropped since the last one
  // and none runs: it takes `state`'s dropped text; with the background
  // strategy it starts rebuilding `ctx`'s cache (its first `prefix_cells`
  // cells kept) around the new summary. Messages joining Recent from now on
  // get serials from `next_serial`.
  void maybe_start(SessionState& state, const runtime::Context& ctx, int64_t prefix_cells, uint64_t next_serial);
  // After each turn (or appended message): tells a rebuild how Recent changed
  // since the last update; when its worker is done, it applies that there
  // while the user reads.
  void after_turn(const std::deque<RecentMessage>& recent, uint64_t next_serial);
  // The messages from `serial` on left Recent's end (taken back): a rebuild
  // may hold their cells. What the next update says, until it is sent.
  void take_back_from(uint64_t serial);
  uint64_t taken_back_from() const { return taken_back_from_; }
  void restore_taken_back_from(uint64_t serial) { taken_back_from_ = serial; }

  // Puts the job in place (waiting for it to end; see ready()): the new
  // summary into `state` and its segment into the cells of `ctx`, which a
  // rebuilt cache replaces (`catch_up` gets the seconds swapping it in took).
  // A failed summary changes no cell: the old one stays and the job's dropped
  // text goes back into `state` for the next job (returns false). A failed
  // rebuild puts the summary in place by a shift.
  bool put_in_place(std::unique_ptr<runtime::Context>& ctx, const std::vector<int32_t>& prefix, SessionState& state,
                    double& catch_up);
  // Cancels a job (waiting for its worker), forgetting it.
  void cancel();
  // Cancels it, its dropped text back in front of `state`'s, as a failed job's.
  void cancel_keeping_text(SessionState& state);
  // What cancel_keeping_text() gives back, given to `dropped_text` and `stats`
  // instead (a state kept aside), while there is a job.
  void give_back_text(std::string& dropped_text, SessionStats& stats) const;

  // Why the last failed job failed ("" before any failed).
  const std::string& last_error() const { return last_error_; }
  const Summarizer& summarizer() const { return summarizer_; }
  void set_adapters(const runtime::Adapters& adapters) { summarizer_.set_adapters(adapters); }
  size_t kv_bytes() const { return summarizer_.kv_bytes(); }
  // A cache being rebuilt on the worker, while one exists.
  size_t staging_kv_bytes() const { return rebuild_ ? rebuild_->staging_kv_bytes() : 0; }

 private:
  // The new Summary segment evaluated in place of the old, Recent shifted after
  // it; with the reprefill strategy, every cell evaluated again.
  void put_summary_into(runtime::Context& ctx, const std::vector<int32_t>& prefix, SessionState& state,
                        const std::string& summary) const;
  // The rebuilt cache in place of `ctx`.
  static void swap_in(CacheRebuild& rebuild, std::unique_ptr<runtime::Context>& ctx, SessionState& state,
                      const std::string& summary, double& catch_up);

  const model::Model& model_;
  std::shared_ptr<const TurnEncoder> encoder_;
  RebuildStrategy strategy_;
  int64_t summary_max_;
  int64_t trigger_discard_;
  bool background_;
  Summarizer summarizer_;
  // The background rebuild of the running job: its worker writes it, this
  // thread reads it only once the job is taken or cancelled.
  std::unique_ptr<CacheRebuild> rebuild_;
  uint64_t next_serial_ = 0;  // messages from this serial on were not yet sent to it
  // Messages from this serial on were taken back from Recent's end since the last update.
  uint64_t taken_back_from_ = CacheRebuild::kNoneTakenBack;
  std::string job_dropped_text_;  // handed to the running (or last) job: back to the state if it fails
  int64_t job_dropped_tokens_ = 0;
  size_t job_messages_ = 0;  // the messages the running (or last) job's summary covers
  std::string last_error_;
};

}  // namespace peak::chat
