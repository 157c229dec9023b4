#include "chat/summary_jobs.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "runtime/kv_cache.h"
#include "runtime/stopwatch.h"

namespace peak::chat {
namespace {

constexpr int64_t kMinSummaryText = 8;  // tokens of summary text, at least, besides its framing

// The summarizer's settings: the summary text gets what the segment's own
// framing leaves of summary_max.
SummarizerSettings summarizer_settings(const TurnEncoder& encoder, const SessionSettings& settings,
                                       runtime::ForegroundActivity* activity) {
  SummarizerSettings ss = settings.summarizer;
  ss.raw = encoder.raw();
  ss.activity = activity;
  ss.n_threads = settings.n_threads;
  const auto framing = static_cast<int64_t>(encoder.summary_segment("").size());
  ss.summary_max = settings.summary_max - framing;
  if (ss.summary_max < kMinSummaryText) {
    throw std::invalid_argument("summary_max is " + std::to_string(settings.summary_max) +
                                "; with this chat template it must be at least " +
                                std::to_string(framing + kMinSummaryText) + " (the summary's framing takes " +
                                std::to_string(framing) + " tokens)");
  }
  return ss;
}

}  // namespace

SummaryJobs::SummaryJobs(const model::Model& model, std::shared_ptr<const TurnEncoder> encoder,
                         const SessionSettings& settings, runtime::ForegroundActivity* activity)
    : model_(model),
      encoder_(std::move(encoder)),
      strategy_(settings.rebuild),
      summary_max_(settings.summary_max),
      trigger_discard_(settings.trigger_discard),
      background_(settings.background_summary),
      summarizer_(model, encoder_->chat_template(), summarizer_settings(*encoder_, settings, activity)) {}

SummaryJobs::~SummaryJobs() { cancel(); }

void SummaryJobs::maybe_start(SessionState& state, const runtime::Context& ctx, int64_t prefix_cells,
                              uint64_t next_serial) {
  if (summarizer_.has_job() || state.stats.dropped_since_summary < trigger_discard_) return;
  Summarizer::AfterSummary rebuild;
  if (strategy_ == RebuildStrategy::Background) {
    CacheRebuild::Start start;
    const runtime::KvCache& kv = ctx.kv();
    start.params.n_ctx = ctx.n_ctx();
    start.params.n_batch = ctx.n_batch();
    start.params.n_threads = ctx.n_threads();
    start.params.type_k = kv.type_k();
    start.params.type_v = kv.type_v();
    start.params.max_logit_rows = ctx.max_logit_rows();
    start.params.adapters = ctx.adapters();
    start.params.activity = ctx.activity();
    start.params.background = background_ ? summarizer_.stop_waiting() : nullptr;
    start.prefix_cells = kv.snapshot_first(prefix_cells);
    start.prefix_positions.assign(kv.positions().begin(), kv.positions().begin() + prefix_cells);
    for (const RecentMessage& m : state.recent) start.recent.push_back({m.serial, m.tokens, m.images});
    next_serial_ = next_serial;
    taken_back_from_ = CacheRebuild::kNoneTakenBack;
    rebuild_ = std::make_unique<CacheRebuild>(model_, std::move(start));
    // On the worker: it reads the shared encoder, never the session.
    rebuild = [encoder = encoder_, summary_max = summary_max_, job = rebuild_.get()](const std::string& summary,
                                                                                     const std::atomic<int>& cancel) {
      job->run(encoder->summary_cells(summary, summary_max), cancel);
    };
  }
  summarizer_.start(state.summary_text, state.dropped_text, background_, std::move(rebuild));
  job_dropped_text_ = std::move(state.dropped_text);  // now in the job
  job_dropped_tokens_ = state.stats.dropped_since_summary;
  job_messages_ = state.log.size() - state.recent.size();
  state.dropped_text.clear();
  state.stats.dropped_since_summary = 0;
}

void SummaryJobs::after_turn(const std::deque<RecentMessage>& recent, uint64_t next_serial) {
  if (!rebuild_) return;
  std::vector<CacheRebuild::Message> added;
  for (const RecentMessage& m : recent) {
    if (m.serial >= next_serial_) added.push_back({m.serial, m.tokens, m.images});
  }
  next_serial_ = next_serial;
  const uint64_t taken_back_from = taken_back_from_;
  taken_back_from_ = CacheRebuild::kNoneTakenBack;
  const uint64_t first_kept = recent.empty() ? next_serial : recent.front().serial;
  if (!rebuild_->update(first_kept, taken_back_from, std::move(added))) {
    // The worker is done: it applies this turn while the user reads.
    summarizer_.continue_job([job = rebuild_.get()](const std::atomic<int>& cancel) { job->drain(cancel); });
  }
}

void SummaryJobs::take_back_from(uint64_t serial) {
  if (rebuild_) taken_back_from_ = std::min(taken_back_from_, serial);
}

bool SummaryJobs::put_in_place(std::unique_ptr<runtime::Context>& ctx, const std::vector<int32_t>& prefix,
                               SessionState& state, double& catch_up) {
  // The worker is done with the job (or take() waits for it) and its rebuild.
  const std::unique_ptr<CacheRebuild> rebuild = std::move(rebuild_);
  SummaryResult r;
  try {
    r = summarizer_.take();
  } catch (const std::exception& e) {
    // A failed summary must not fail the user's turn nor lose what it was to
    // summarize: the old summary stays, and the job's dropped text goes back
    // in front of what was dropped since, for the next job.
    give_back_text(state.dropped_text, state.stats);
    ++state.stats.summary_failures;
    last_error_ = e.what();
    return false;
  }
  state.stats.summary_seconds += r.seconds;
  if (rebuild) state.stats.worker_rebuild_seconds += rebuild->seconds();
  if (!r.work_error.empty()) {
    ++state.stats.summary_failures;
    last_error_ = "rebuilding the cache: " + r.work_error + " (the summary was put in place by a shift)";
  }
  if (rebuild && rebuild->ready() && r.work_error.empty()) {
    swap_in(*rebuild, ctx, state, r.text, catch_up);
  } else {
    put_summary_into(*ctx, prefix, state, r.text);  // a shift, unless the strategy is reprefill
  }
  state.summarized_messages = job_messages_;
  return true;
}

void SummaryJobs::put_summary_into(runtime::Context& ctx, const std::vector<int32_t>& prefix, SessionState& state,
                                   const std::string& summary) const {
  const runtime::Stopwatch stopwatch;
  const std::vector<int32_t> segment = encoder_->summary_cells(summary, summary_max_);
  if (strategy_ == RebuildStrategy::Reprefill) {
    state.summary_tokens = segment;
    const std::vector<int32_t> all = state.cached_tokens(prefix);
    ctx.kv().clear();
    evaluate_cells(ctx, all.data(), static_cast<int64_t>(all.size()), state.recent_images());
  } else {
    // Keep Prefix and Recent; replace the Summary cells and move Recent after them.
    const auto p = static_cast<int64_t>(prefix.size());
    const auto old_s = static_cast<int64_t>(state.summary_tokens.size());
    const auto new_s = static_cast<int64_t>(segment.size());
    runtime::KvCache& kv = ctx.kv();
    kv.remove(p, old_s);
    kv.insert(p, new_s, static_cast<int32_t>(p));
    ctx.eval_into(p, segment.data(), new_s);
    ctx.shift_positions(p + new_s, state.recent_cells(), static_cast<int32_t>(new_s - old_s));
    state.summary_tokens = segment;
  }
  state.summary_text = summary;
  state.stats.last_rebuild_seconds = stopwatch.seconds();
  state.stats.rebuild_seconds += state.stats.last_rebuild_seconds;
  ++state.stats.summaries;
}

void SummaryJobs::swap_in(CacheRebuild& rebuild, std::unique_ptr<runtime::Context>& ctx, SessionState& state,
                          const std::string& summary, double& catch_up) {
  const runtime::Stopwatch stopwatch;
  // Nothing is left to apply: every turn since the job started sent its
  // update as it ended (after_turn()), and the worker applied each before it
  // let the job end (take() waited for it, and for a continuation the last one
  // needed).
  const std::vector<int32_t> segment = rebuild.summary_segment();
  runtime::PassGroup* group = ctx->pass_group();
  ctx = rebuild.take();  // the old main cache is freed here
  // Its threads were started on the low-priority worker: the turns need them at ours.
  ctx->restart_threads();
  // It evaluated alone in the background; the turns share the old one's passes
  // and are the foreground.
  ctx->set_pass_group(group);
  ctx->set_background(nullptr);
  state.summary_tokens = segment;
  state.summary_text = summary;
  catch_up = stopwatch.seconds();
  state.stats.last_rebuild_seconds = catch_up;
  state.stats.rebuild_seconds += catch_up;
  ++state.stats.summaries;
}

void SummaryJobs::cancel() {
  summarizer_.cancel();
  rebuild_.reset();
}

void SummaryJobs::cancel_keeping_text(SessionState& state) {
  if (!summarizer_.has_job()) return;
  cancel();
  give_back_text(state.dropped_text, state.stats);
}

void SummaryJobs::give_back_text(std::string& dropped_text, SessionStats& stats) const {
  dropped_text = job_dropped_text_ + dropped_text;
  stats.dropped_since_summary += job_dropped_tokens_;
}

}  // namespace peak::chat
