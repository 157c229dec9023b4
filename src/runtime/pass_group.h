// Forward passes shared by several contexts of one model. Decode reads every
// weight once per step whether the step computes one token or eight, so
// contexts that step at the same time (a server's slots) gain by stepping in
// one pass: each matrix is read once for all their tokens, each sequence
// attends to its own KV cache (model::BatchSequence).
//
// A member context (ContextParams::pass_group) evaluates through run(): its
// thread queues the tokens and waits; whichever waiting thread finds the
// queue ready runs one pass for the queued requests, on the group's graph and
// threads, and wakes their owners. The queue is ready when every context of
// the previous pass is back in it (they step in lockstep), when it holds
// as many tokens or sequences as a pass takes, or when its oldest request has
// waited `gather_wait` since it could run (a context that stopped stepping
// holds the others up once). A context alone never waits. A prompt goes in
// chunks of prefill_chunk tokens, one per pass, so the others' steps go on
// beside it.
//
// Thread-safe: members call run() from their own threads. Per step a member
// takes the group's mutex twice and allocates nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/adapters.h"
#include "runtime/foreground_activity.h"
#include "runtime/kv_cache.h"

namespace peak::runtime {

struct PassGroupParams {
  int64_t n_ctx = 4096;         // cells of the largest member cache (a larger one grows it, PassGroup::admit)
  int max_sequences = 4;        // sequences in one pass
  int64_t prefill_chunk = 128;  // prompt tokens of one member per pass
  // Rows of logits one sequence takes from a pass: a draft's verification
  // needs draft_max + 1 (runtime::Context::eval_last_rows).
  int64_t max_logit_rows = 1;
  int n_threads = 0;  // 0: core::default_threads
  kernels::GgmlType type_k = kernels::GgmlType::F16;
  kernels::GgmlType type_v = kernels::GgmlType::F16;
  std::chrono::microseconds gather_wait{3000};
  // The adapters of every member that joins the passes; a context with others
  // evaluates alone.
  Adapters adapters;
};

// Passes run so far, by how many sequences they took (index 0: one).
struct PassGroupStats {
  std::vector<uint64_t> passes_by_sequences;
  uint64_t tokens = 0;  // evaluated in shared passes
};

class PassGroup {
 public:
  // Throws std::invalid_argument for unusable parameters.
  PassGroup(const model::Model& model, const PassGroupParams& params);
  PassGroup(const PassGroup&) = delete;
  PassGroup& operator=(const PassGroup&) = delete;

  const model::Model& model() const { return model_; }
  const PassGroupParams& params() const { return params_; }
  // The most tokens one request may hold: a prefill chunk, or a draft with
  // the token before it.
  int64_t max_request_tokens() const { return max_request_tokens_; }
  // Lets a context with this model and cache join: plans the passes again
  // (allocating) when its cache is larger than the group's so far, once no
  // pass runs. Throws std::invalid_argument for another model or other cache
  // types.
  void admit(const model::Model& model, const KvCacheParams& cache);
  // A context with these adapters and rope factors (model::rope_factors_for_context
  // of its size) evaluates in the group's passes; with others, alone.
  bool serves(const Adapters& adapters, const core::Tensor* rope_factors) const;

  // Evaluates tokens [0, n_tokens) of the sequence held by `kv`, whose cells
  // [first_cell, first_cell + n_tokens) the caller appended for them, in a
  // pass shared with the other waiting members, and writes the logits after
  // each of its last `output_rows` tokens to `logits` (output_rows x n_vocab).
  // n_tokens <= max_request_tokens(), output_rows <= max_logit_rows. Throws
  // NonFiniteLogits for this sequence's rows, or what the pass threw; the
  // caller drops the cells then.
  void run(const KvCache& kv, const int32_t* tokens, int64_t n_tokens, int64_t first_cell, int64_t output_rows,
           float* logits);

  PassGroupStats stats() const;

  // The members' passes, which background work beside them (a member
  // session's summary worker) waits for: one member's worker waits for every
  // member's turns.
  ForegroundActivity& activity() { return activity_; }

 private:
  struct Request {
    const KvCache* kv = nullptr;
    const int32_t* tokens = nullptr;
    int64_t n_tokens = 0;
    int64_t first_cell = 0;
    int64_t output_rows = 0;
    float* logits = nullptr;
    std::chrono::steady_clock::time_point queued_at;
    bool done = false;
    std::exception_ptr error;
  };

  // The queue is ready for a pass (under the lock).
  bool ready(std::chrono::steady_clock::time_point now) const;
  // When the queue stops waiting for the last pass's sequences: gather_wait
  // after its oldest request came or, when that came during a pass, after
  // the pass ended (the others could not be back before).
  std::chrono::steady_clock::time_point gather_deadline() const;
  // Takes the requests of one pass from the queue and runs it, the lock
  // released meanwhile; wakes their owners.
  void lead(std::unique_lock<std::mutex>& lock);
  // One pass over taken_[first, first + count); throws what the pass throws.
  void run_pass(size_t first, size_t count);
  void reserve();

  const model::Model& model_;
  PassGroupParams params_;
  int64_t max_request_tokens_;
  int64_t max_pass_tokens_;
  int n_threads_;
  core::ThreadPool pool_;
  core::Graph graph_;
  core::GraphAllocator allocator_;
  core::Tensor* rope_factors_;
  std::unique_ptr<BoundAdapters> bound_adapters_;
  std::vector<model::BatchSequence> sequences_;  // of the pass being built, max_sequences reserved

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Request*> queue_;           // in arrival order
  std::vector<Request*> taken_;           // the running pass's
  std::vector<const KvCache*> regulars_;  // the sequences of the last pass
  bool running_ = false;
  std::chrono::steady_clock::time_point last_pass_end_;
  std::vector<uint64_t> passes_by_sequences_;
  uint64_t tokens_ = 0;
  ForegroundActivity activity_;
};

}  // namespace peak::runtime
