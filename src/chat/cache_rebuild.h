// SSSKV-lite's exact rebuild off the hot path (RebuildStrategy::Background).
//
// When a summary job starts, the session hands over what the new main cache
// must hold: the Prefix's cells (copied: the Prefix is kept, never recomputed)
// and the Recent messages at that moment. After writing the summary, the
// summary worker builds
//
//   [ Prefix cells ][ new Summary segment ][ Recent messages at the start ]
//
// in a staging context of the main context's shape on the shared weights,
// prefilled in batches, checking the job's cancel flag between them. The
// staging context is allocated there, on the worker, and lives only until the
// session swaps it in (SummaryJobs, summary_jobs.h).
//
// Turns go on meanwhile. After each one the session sends an update (Recent
// now starts at this message; the messages from that one on were taken back
// from its end; these messages joined it), and the worker applies it to the
// staging cache: messages taken back (a regenerated or edited turn, a user
// message given its answer by append) leave the end, exactly; messages dropped
// from Recent's front are removed and the later cells shifted down (that part
// is as exact as `shift`: the kept cells were computed attending to the
// removed ones); added messages are evaluated, exactly. So the cache is up to date by the time the user
// sends again, and the swap itself normally has nothing left to do.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "model/model.h"
#include "chat/conversation_images.h"
#include "runtime/context.h"

namespace peak::chat {

class CacheRebuild {
 public:
  // A Recent message: its serial (increasing in the order messages join
  // Recent) and the cells it occupies.
  struct Message {
    uint64_t serial = 0;
    std::vector<int32_t> tokens;
    ImageList images;  // whose rows its tokens hold (shared, immutable)
  };
  struct Start {
    runtime::ContextParams params;          // the main context's
    std::vector<uint8_t> prefix_cells;      // KvCache::snapshot_first of the Prefix's cells
    std::vector<int32_t> prefix_positions;  // 0, 1, ... as many
    std::vector<Message> recent;            // the Recent messages, oldest first
  };

  CacheRebuild(const model::Model& model, Start start);
  CacheRebuild(const CacheRebuild&) = delete;
  CacheRebuild& operator=(const CacheRebuild&) = delete;

  // On the worker: fills a new staging context with the Prefix cells, then
  // evaluates `summary_segment` and the Recent messages after them, then
  // applies the updates sent meanwhile (drain). Once `cancel` is set it stops
  // at the next batch and keeps nothing.
  void run(const std::vector<int32_t>& summary_segment, const std::atomic<int>& cancel);

  // No message was taken back (update's `taken_back_from`).
  static constexpr uint64_t kNoneTakenBack = UINT64_MAX;

  // On the caller's thread, after a turn: Recent now starts at the message
  // with serial `first_kept` (the next serial when it is empty), the messages
  // of serials `taken_back_from` and later left its end (kNoneTakenBack: none),
  // and then `added` joined it, all since the last update. Returns true when
  // the worker will apply it (it is still in run() or drain()); false when
  // nothing will until the caller runs drain() (on the worker, through
  // Summarizer::continue_job).
  bool update(uint64_t first_kept, uint64_t taken_back_from, std::vector<Message> added);
  // Applies the updates sent so far; stops when `cancel` is set and then
  // drops the staging cache.
  void drain(const std::atomic<int>& cancel);

  // The rest is for the caller's thread while the worker is not in run() or drain().
  bool ready() const { return staging_ != nullptr; }
  // The Summary segment the staging cache holds after the Prefix.
  const std::vector<int32_t>& summary_segment() const { return summary_segment_; }
  // Hands over the staging context (null when none was built).
  std::unique_ptr<runtime::Context> take();
  double seconds() const { return seconds_; }  // time spent in run() and drain()

  // The staging cache's bytes while it exists (0 before and after); any thread.
  size_t staging_kv_bytes() const { return staging_kv_bytes_.load(); }

 private:
  // Removes the messages taken back and those older than `first_kept`, then
  // evaluates `added`; false when cancelled half-way.
  bool apply(uint64_t first_kept, uint64_t taken_back_from, const std::vector<Message>& added,
             const std::atomic<int>& cancel);
  // Evaluates `tokens` into the staging cache in batches (an image's rows in
  // one); false when cancelled.
  bool evaluate(const std::vector<int32_t>& tokens, const ImageList& images, const std::atomic<int>& cancel);
  void drop_staging();

  const model::Model& model_;
  Start start_;
  std::unique_ptr<runtime::Context> staging_;
  std::vector<int32_t> summary_segment_;
  std::vector<std::pair<uint64_t, int64_t>> staged_;  // serial and cells of each Recent message staging_ holds
  double seconds_ = 0;
  std::atomic<size_t> staging_kv_bytes_{0};

  // Updates not yet applied, merged: shared by the caller's thread and the worker.
  std::mutex mutex_;
  bool worker_active_ = true;  // run() or drain() will look at the pending update again
  bool has_pending_ = false;
  uint64_t pending_first_kept_ = 0;
  uint64_t pending_taken_back_from_ = kNoneTakenBack;
  std::vector<Message> pending_added_;
};

}  // namespace peak::chat
