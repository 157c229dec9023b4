// An inference context: one sequence's KV cache plus everything needed to run
// the model's forward graph (graph, allocator, thread pool, logits), all
// reserved at creation for the worst case (a full batch over a full cache), so
// evaluating tokens allocates nothing. A context is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/executor.h"
#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"
#include "model/model.h"
#include "runtime/adapters.h"
#include "runtime/foreground_activity.h"
#include "runtime/kv_cache.h"

namespace peak::runtime {

class PassGroup;

// A forward pass produced a NaN or infinite logit: the model's weights (or
// the state it was given) are broken, and a token sampled from it would be
// garbage. Context::eval leaves the cache as it was before the call.
class NonFiniteLogits : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws NonFiniteLogits when a logit of `row` (n_vocab values) is NaN or infinite.
void require_finite_logits(const float* row, int64_t n_vocab);

// Context::eval stopped because its cancellation was requested; it left the
// cache as it was before the call.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled while the prompt was evaluated; the context is as before it") {}
};

struct ContextParams {
  int64_t n_ctx = 0;       // cells of the KV cache; 0: the model's training context, at most 4096
  int64_t n_batch = 512;   // tokens per forward pass when prefilling
  int n_threads = 0;       // 0: the fast cores the process may use (core::default_threads)
  kernels::GgmlType type_k = kernels::GgmlType::F16;
  kernels::GgmlType type_v = kernels::GgmlType::F16;
  // Reserve room for the logits of every token of a batch (n_batch × n_vocab
  // floats of compute memory), needed to pass `all_logits` to eval().
  bool logits_all = false;
  // The most rows of logits eval_last_rows() hands out (at least 1; n_batch
  // when larger or with logits_all): speculative decoding verifies a token and the
  // tokens drafted after it in one pass, draft_max + 1 rows. Each row
  // reserves n_vocab floats (and the head's activations) of compute memory.
  int64_t max_logit_rows = 1;
  // LoRA adapters and control vectors to run the model with (set_adapters changes them).
  Adapters adapters;
  // Evaluate through passes shared with the group's other contexts (it
  // outlives the context; PassGroup::admit). eval() without all_logits and
  // eval_last_rows() of at most PassGroup::max_request_tokens() go there
  // while the group serves the context's adapters (PassGroup::serves);
  // everything else runs on the context's own graph.
  PassGroup* pass_group = nullptr;
  // The session's foreground and background work (it outlives the context):
  // a foreground context marks each of its passes there (a member of a pass
  // group, the group's instead: PassGroup::activity); a background one
  // (`background` not null) waits before each pass until the foreground has
  // been quiet, or until `background` is requested (the work is cancelled, or
  // the foreground waits for it), which it outlives.
  ForegroundActivity* activity = nullptr;
  const core::Cancellation* background = nullptr;
};

// The memory a context holds, in bytes.
struct ContextMemory {
  size_t kv_bytes = 0;       // the KV cache
  size_t compute_bytes = 0;  // the compute, work and logits buffers
  size_t total() const { return kv_bytes + compute_bytes; }
};

class Context {
 public:
  // Throws std::invalid_argument for unusable parameters.
  Context(const model::Model& model, const ContextParams& params);
  // The memory a context with `params` would hold: its KV cache (computed, not
  // allocated) plus its compute, work and logits buffers, measured on a context
  // of one batch of cells (they depend on the batch, not on the cache length).
  // So a caller can refuse a context that cannot fit before allocating it. The
  // model may be a layout (model::Model::load_layout).
  static ContextMemory memory_needed(const model::Model& model, const ContextParams& params);
  // The memory this context holds.
  ContextMemory memory() const;

  const model::Model& model() const { return model_; }
  int64_t n_ctx() const { return kv_.size(); }
  int64_t n_batch() const { return n_batch_; }
  int n_threads() const { return n_threads_; }
  void set_threads(int n_threads);
  KvCache& kv() { return kv_; }
  const KvCache& kv() const { return kv_; }

  // Runs the model with other adapters from the next evaluation on (the cache
  // keeps what earlier ones computed). Between evaluations only: it plans the
  // worst-case graph again and reallocates the compute buffers for it, so
  // evaluating still allocates nothing. Throws std::invalid_argument (see
  // BoundAdapters) and leaves the adapters as they were on any failure.
  void set_adapters(const Adapters& adapters);
  const Adapters& adapters() const { return adapters_; }

  PassGroup* pass_group() const { return group_; }
  // Evaluates through `group` (null: alone) from now on, as
  // ContextParams::pass_group; between evaluations. Throws as the constructor
  // does for a group it cannot join, changing nothing.
  void set_pass_group(PassGroup* group);

  // Appends `n` tokens to the sequence (positions continue from the cache) and
  // runs them through the model in batches of n_batch. Afterwards logits() holds
  // the last token's logits; when `all_logits` is given (n × n_vocab floats) it
  // receives every token's logits, row by row. On failure the cache and
  // logits() are left as they were. Throws std::invalid_argument for bad ids
  // (or all_logits without ContextParams::logits_all), ContextFull when the
  // tokens do not fit, NonFiniteLogits when a logit it hands out is NaN or
  // infinite, Cancelled when `cancel` was requested before the last batch
  // ended (polled before each batch and between the nodes of each).
  void eval(const int32_t* tokens, int64_t n, float* all_logits = nullptr,
            const core::Cancellation* cancel = nullptr);
  // Evaluates `n` tokens into cells [first, first + n) that KvCache::insert
  // opened: they attend to the cells before them only, never to later ones.
  // logits() stays as it was.
  void eval_into(int64_t first, const int32_t* tokens, int64_t n);
  // Appends `n` embedding rows (n x n_embd floats, row by row: an image's
  // tokens from runtime::ImageEncoder) as eval() appends tokens; they enter
  // the layers as they are. With `bidirectional` (Gemma 3's image tokens)
  // they also attend to each other both ways, which needs them in one batch
  // (n <= n_batch). Afterwards logits() holds the last row's logits. Throws
  // std::invalid_argument for n < 1, too many rows for one bidirectional
  // batch or a value that is not finite (naming its row), and otherwise as
  // eval() does; on failure the cache and logits() are as they were.
  // picture_cols > 0 (a model with multimodal rotary positions, whose cache
  // keeps places: Qwen2-VL): the rows are a picture's tokens, picture_cols
  // across, row by row; they share one position, each turned by its row and
  // column (KvCache::append_picture), and the next token comes one past the
  // picture's largest row or column. The rows are its first n tokens (a
  // cache checked cell by cell may end inside a picture).
  void eval_embeddings(const float* rows, int64_t n, bool bidirectional, const core::Cancellation* cancel = nullptr,
                       int64_t picture_cols = 0);
  // Evaluates `n` tokens in one batch (n <= n_batch) and writes the logits
  // after each of the last `rows` of them to `logits` (rows x n_vocab, row by
  // row); logits() holds the last row. 1 <= rows <= min(n, max_logit_rows()),
  // else std::invalid_argument; otherwise throws and fails as eval() does.
  void eval_last_rows(const int32_t* tokens, int64_t n, int64_t rows, float* logits);
  int64_t max_logit_rows() const { return max_logit_rows_; }
  // Drops the last `n` cells (tokens evaluated ahead of being chosen, such as
  // a draft the sampler did not take) and makes logits() `logits_after_kept`,
  // the row eval_last_rows() gave for the last cell kept (n_vocab floats).
  void drop_last(int64_t n, const float* logits_after_kept);
  const float* logits() const { return logits_.data(); }
  int64_t n_vocab() const { return model_.hparams().n_vocab; }

  // Moves cells [first, first + n) by `delta` positions: updates their positions
  // and re-rotates their keys, so attention sees them as if computed there.
  void shift_positions(int64_t first, int64_t n, int32_t delta);

  size_t compute_bytes() const { return allocator_.planned_bytes(); }

  // For a context that serves background work (a summary): gives its threads,
  // the calling one included, the lowest scheduling priority, so they only use
  // time the foreground's forward passes leave (core::lower_current_thread_priority).
  void lower_thread_priority() { pool_.lower_priority(); }
  // For a context built on such a thread and handed to the foreground: starts
  // its threads again from the calling thread, at its priority.
  void restart_threads() { pool_.restart_workers(); }
  // Whether this context's passes wait for the foreground to be quiet (a
  // request to stop waiting, as ContextParams::background) or are the
  // foreground's (null); between evaluations.
  void set_background(const core::Cancellation* background) { background_ = background; }
  // The activity its passes mark or wait for: its pass group's when it has
  // one, else ContextParams::activity (may be null).
  ForegroundActivity* activity() const;

  // Per-op wall time of every forward pass while enabled (a clock read per node).
  void set_profiling(bool enabled) { profiling_ = enabled; }
  const core::OpTimes& op_times() const { return op_times_; }
  void reset_op_times() { op_times_ = core::OpTimes{}; }

 private:
  struct ShiftInputs {
    core::Tensor* rows;    // I32 [n_head_kv * n]: the K rows to re-rotate, cell by cell
    core::Tensor* deltas;  // I32 [n]: the rotation of each, in positions
  };
  // One batch's inputs: token ids, or embedding rows (n_embd floats each),
  // attending causally or (embeddings only) both ways within the batch.
  struct BatchInput {
    const int32_t* tokens = nullptr;
    const float* embeddings = nullptr;
    bool bidirectional = false;
  };
  // Runs one batch into cells [first_cell, first_cell + n_tokens), already
  // claimed, and returns its output: [n_vocab, output_rows] logits of the last
  // output_rows tokens, checked finite; valid until the next graph runs. Null
  // when `cancel` stopped it.
  const core::Tensor* run_batch(const BatchInput& input, int64_t n_tokens, int64_t first_cell, int64_t output_rows,
                                const core::Cancellation* cancel);
  // Appends `n` cells in passes of at most `batch`: run_pass(done, count,
  // first) runs one into cells [first, first + count), claimed, and returns
  // its last row's logits (null: cancelled). On failure the cells appended go
  // again and logits() stays as it was; otherwise it becomes the last pass's.
  // picture_cols > 0: the cells are a picture's tokens (KvCache::append_picture).
  template <typename RunPass>
  void append_in_batches(int64_t n, int64_t batch, const core::Cancellation* cancel, RunPass run_pass,
                         int64_t picture_cols = 0);
  void check_tokens(const int32_t* tokens, int64_t n) const;
  bool in_group() const { return group_ != nullptr && group_serves_; }
  // Before each pass: a background context waits for the foreground to be
  // quiet; a foreground one's pass is marked until the result dies.
  ForegroundActivity::Pass take_turn() const;
  void reserve();
  ShiftInputs build_shift_graph(int64_t first, int64_t n);

  const model::Model& model_;
  KvCache kv_;
  int64_t n_batch_;
  int n_threads_;
  bool logits_all_;
  int64_t max_logit_rows_;  // reserved rows of logits for one batch
  core::ThreadPool pool_;
  core::Graph graph_;
  core::GraphAllocator allocator_;
  // The rope frequency factors for this context's size (LongRoPE's long or
  // short ones, Llama 3's), or null: model::rope_factors_for_context.
  core::Tensor* rope_factors_;
  Adapters adapters_;
  std::unique_ptr<BoundAdapters> bound_adapters_;
  std::vector<float> logits_;  // n_vocab
  PassGroup* group_;
  ForegroundActivity* activity_;
  const core::Cancellation* background_;
  bool group_serves_ = false;
  std::vector<float> group_logits_;  // n_vocab: a group pass's row until the whole eval succeeded
  bool profiling_ = false;
  core::OpTimes op_times_;
};

}  // namespace peak::runtime
