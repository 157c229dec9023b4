// SSSKV-lite's exact rebuild off the hot path (RebuildStrategy::Background).
//
// When a summary job starts, the session hands over what the new main cache
// must hold: the Prefix's cells (copied: the Prefix is kept, never recomputed)
// and the tokens of the Recent messages at that moment. After writing the
// summary, the summary worker builds
//
//   [ Prefix cells ][ new Summary segment ][ Recent tokens at the start ]
//
// in a staging context of the main context's shape on the shared weights,
// prefilled in batches, checking the job's cancel flag between them. The
// staging context is allocated there, on the worker, and lives only until the
// session catches it up with what changed since and swaps it in (chat_session.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"

namespace peak::chat {

class CacheRebuild {
 public:
  struct Start {
    runtime::ContextParams params;          // the main context's
    std::vector<uint8_t> prefix_cells;      // KvCache::snapshot_first of the Prefix's cells
    std::vector<int32_t> prefix_positions;  // 0, 1, ... as many
    std::vector<int32_t> recent_tokens;     // the Recent messages' cells, in order
  };

  CacheRebuild(const model::Model& model, Start start);
  CacheRebuild(const CacheRebuild&) = delete;
  CacheRebuild& operator=(const CacheRebuild&) = delete;

  // On the worker: fills a new staging context with the Prefix cells, then
  // evaluates `summary_segment` and the Recent tokens after them. Once
  // `cancel` is set it stops at the next batch and keeps nothing.
  void run(const std::vector<int32_t>& summary_segment, const std::atomic<int>& cancel);

  // The rest is for the caller's thread once the worker is done with run().
  bool ready() const { return staging_ != nullptr; }
  // The Summary segment the staging cache holds after the Prefix.
  const std::vector<int32_t>& summary_segment() const { return summary_segment_; }
  // Hands over the staging context (null when none was built).
  std::unique_ptr<runtime::Context> take();
  double seconds() const { return seconds_; }  // the worker's time in run()

  // The staging cache's bytes while it exists (0 before and after); any thread.
  size_t staging_kv_bytes() const { return staging_kv_bytes_.load(); }

 private:
  const model::Model& model_;
  Start start_;
  std::unique_ptr<runtime::Context> staging_;
  std::vector<int32_t> summary_segment_;
  double seconds_ = 0;
  std::atomic<size_t> staging_kv_bytes_{0};
};

}  // namespace peak::chat
