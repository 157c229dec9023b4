#include "runtime/context.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/cpu_topology.h"
#include "model/decoder.h"
#include "runtime/pass_group.h"

namespace peak::runtime {

using kernels::GgmlType;

namespace {

constexpr int64_t kDefaultMaxContext = 4096;

KvCacheParams cache_params(const model::Model& model, const ContextParams& p) {
  const model::ArchSpec& spec = model.hparams().spec();
  if (spec.encoder) {
    throw std::invalid_argument(
        std::string("a ") + spec.name +
        " model is an encoder: it embeds text (runtime::Encoder) and has no output head to generate with");
  }
  if (p.n_ctx < 0) throw std::invalid_argument("n_ctx must not be negative");
  KvCacheParams c;
  c.n_ctx = p.n_ctx > 0 ? p.n_ctx : std::min(model.hparams().n_ctx_train, kDefaultMaxContext);
  c.type_k = p.type_k;
  c.type_v = p.type_v;
  return c;
}

}  // namespace

// One pass that vectorizes; the culprit is looked for only when there is one.
void require_finite_logits(const float* row, int64_t n_vocab) {
  bool all_finite = true;
  for (int64_t i = 0; i < n_vocab; ++i) all_finite &= std::fabs(row[i]) <= FLT_MAX;
  if (all_finite) return;
  int64_t id = 0;
  while (std::fabs(row[id]) <= FLT_MAX) ++id;
  throw NonFiniteLogits("the model produced NaN/Inf logits (logit " + std::to_string(id) + " is " +
                        std::to_string(row[id]) + "): its weights hold non-finite values or overflow");
}

Context::Context(const model::Model& model, const ContextParams& params)
    : model_(model),
      kv_(model.hparams(), cache_params(model, params)),
      n_batch_(params.n_batch),
      n_threads_(core::pass_threads(params.n_threads)),
      logits_all_(params.logits_all),
      max_logit_rows_(params.max_logit_rows),
      pool_(n_threads_),
      rope_factors_(model::rope_factors_for_context(model.weights(), model.hparams(), kv_.size())),
      adapters_(params.adapters),
      bound_adapters_(std::make_unique<BoundAdapters>(model, params.adapters)),
      logits_(static_cast<size_t>(model.hparams().n_vocab)),
      group_(nullptr),
      activity_(params.activity),
      background_(params.background) {
  if (n_batch_ <= 0) throw std::invalid_argument("n_batch must be positive");
  set_pass_group(params.pass_group);
  n_batch_ = std::min(n_batch_, kv_.size());
  if (max_logit_rows_ < 1) {
    throw std::invalid_argument("max_logit_rows must be at least 1, not " + std::to_string(max_logit_rows_));
  }
  max_logit_rows_ = logits_all_ ? n_batch_ : std::min(max_logit_rows_, n_batch_);
  reserve();
}

ContextMemory Context::memory_needed(const model::Model& model, const ContextParams& params) {
  const KvCacheParams cache = cache_params(model, params);
  ContextParams one_batch = params;
  one_batch.n_ctx = std::min(cache.n_ctx, std::max<int64_t>(params.n_batch, 1));
  one_batch.pass_group = nullptr;  // a probe joins no group
  const Context probe(model, one_batch);
  ContextMemory m;
  m.kv_bytes = KvCache::bytes_needed(model.hparams(), cache);
  m.compute_bytes = probe.memory().compute_bytes;
  return m;
}

ContextMemory Context::memory() const {
  ContextMemory m;
  m.kv_bytes = kv_.bytes_held();  // as KvCache::bytes_needed counts it
  m.compute_bytes = compute_bytes() + allocator_.work_buffer().size + logits_.size() * sizeof(float);
  return m;
}

void Context::reserve() {
  // The worst case: a full batch whose attention spans the whole cache.
  model::Batch worst;
  worst.n_tokens = n_batch_;
  worst.first_cell = kv_.size() - n_batch_;
  worst.output_rows = max_logit_rows_;
  graph_.reset();
  allocator_ = core::GraphAllocator();  // plans for other adapters are void
  model::DecoderBuilder builder(graph_, model_.hparams(), model_.weights(), kv_.layers(), worst, rope_factors_,
                                bound_adapters_->decoder());
  model::build_forward(builder);
  allocator_.reserve(graph_, n_threads_);
  // ... and the same of embedding rows attending both ways (eval_embeddings),
  worst.output_rows = 1;
  worst.embeddings = true;
  worst.bidirectional = true;
  graph_.reset();
  model::DecoderBuilder rows(graph_, model_.hparams(), model_.weights(), kv_.layers(), worst, rope_factors_,
                             bound_adapters_->decoder());
  model::build_forward(rows);
  allocator_.reserve(graph_, n_threads_);
  // ... and the largest KV shift (n_batch cells), which needs its own scratch.
  build_shift_graph(0, n_batch_);
  allocator_.reserve(graph_, n_threads_);
}

void Context::set_adapters(const Adapters& adapters) {
  auto bound = std::make_unique<BoundAdapters>(model_, adapters);  // checked before anything changes
  std::swap(bound_adapters_, bound);
  try {
    reserve();
  } catch (...) {
    std::swap(bound_adapters_, bound);
    reserve();
    throw;
  }
  adapters_ = adapters;
  group_serves_ = group_ && group_->serves(adapters_, rope_factors_);
}

void Context::set_pass_group(PassGroup* group) {
  if (group) {
    KvCacheParams cache;
    cache.n_ctx = kv_.size();
    cache.type_k = kv_.type_k();
    cache.type_v = kv_.type_v();
    group->admit(model_, cache);
    group_logits_.resize(logits_.size());
  }
  group_ = group;
  group_serves_ = group_ && group_->serves(adapters_, rope_factors_);
}

void Context::set_threads(int n_threads) {
  const int n = core::pass_threads(n_threads);
  if (n > pool_.max_threads()) {
    throw std::invalid_argument("n_threads " + std::to_string(n) + " exceeds the " +
                                std::to_string(pool_.max_threads()) + " this context was created with");
  }
  n_threads_ = n;
}

void Context::check_tokens(const int32_t* tokens, int64_t n) const {
  if (n < 0 || (n > 0 && !tokens)) throw std::invalid_argument("eval: no tokens given");
  const int64_t n_vocab = model_.hparams().n_vocab;
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      throw std::invalid_argument("token id " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                                  " is outside the vocabulary of " + std::to_string(n_vocab));
    }
  }
}

template <typename RunPass>
void Context::append_in_batches(int64_t n, int64_t batch, const core::Cancellation* cancel, RunPass run_pass,
                                int64_t picture_cols) {
  kv_.require_free(n);  // before any batch runs, so a prompt that cannot fit leaves no trace
  const int64_t used_before = kv_.used();
  const int32_t picture_position = kv_.next_position();
  const float* last = nullptr;  // the last row's logits
  try {
    for (int64_t done = 0; done < n; done += batch) {
      const ForegroundActivity::Pass pass = take_turn();
      if (cancel && cancel->requested()) throw Cancelled();
      const int64_t count = std::min(batch, n - done);
      const int64_t first = picture_cols > 0 ? kv_.append_picture(count, picture_position, done, picture_cols)
                                             : kv_.append(count, kv_.next_position());
      last = run_pass(done, count, first);
      if (!last) throw Cancelled();
    }
  } catch (...) {
    kv_.drop_last(kv_.used() - used_before);
    throw;
  }
  // Only now, so that a failed or cancelled call leaves the last logits as they were.
  if (last) std::memcpy(logits_.data(), last, logits_.size() * sizeof(float));
}

void Context::eval(const int32_t* tokens, int64_t n, float* all_logits, const core::Cancellation* cancel) {
  if (all_logits && !logits_all_) {
    throw std::invalid_argument("eval: per-token logits need a context created with logits_all");
  }
  check_tokens(tokens, n);
  const int64_t n_vocab = model_.hparams().n_vocab;
  // In a group the tokens go in its requests' chunks, each pass's last row to group_logits_.
  const bool shared = !all_logits && in_group();
  const int64_t batch = shared ? group_->max_request_tokens() : n_batch_;
  append_in_batches(n, batch, cancel, [&](int64_t done, int64_t count, int64_t first) -> const float* {
    if (shared) {
      group_->run(kv_, tokens + done, count, first, 1, group_logits_.data());
      return group_logits_.data();
    }
    const core::Tensor* out = run_batch({tokens + done}, count, first, all_logits ? count : 1, cancel);
    if (!out) return nullptr;
    if (all_logits) {
      for (int64_t r = 0; r < count; ++r) {
        std::memcpy(all_logits + (done + r) * n_vocab, out->row_ptr(r), static_cast<size_t>(n_vocab) * sizeof(float));
      }
    }
    return reinterpret_cast<const float*>(out->row_ptr(out->ne[1] - 1));
  });
}

void Context::eval_into(int64_t first, const int32_t* tokens, int64_t n) {
  check_tokens(tokens, n);
  if (first < 0 || first + n > kv_.used()) throw std::out_of_range("eval_into: cells outside the used part of the cache");
  for (int64_t done = 0; done < n; done += n_batch_) {
    const ForegroundActivity::Pass pass = take_turn();
    run_batch({tokens + done}, std::min(n_batch_, n - done), first + done, 1, nullptr);
  }
}

void Context::eval_embeddings(const float* rows, int64_t n, bool bidirectional, const core::Cancellation* cancel,
                              int64_t picture_cols) {
  const int64_t n_embd = model_.hparams().n_embd;
  if (n < 1 || !rows) throw std::invalid_argument("eval_embeddings: no rows to evaluate");
  if (picture_cols < 0 || (picture_cols > 0 && !kv_.keeps_places())) {
    throw std::invalid_argument("eval_embeddings: " + std::to_string(n) + " rows as a picture " +
                                std::to_string(picture_cols) + " tokens across" +
                                (picture_cols < 0 ? "" : ", but this model places no token in a picture"));
  }
  if (bidirectional && n > n_batch_) {
    throw std::invalid_argument("eval_embeddings: " + std::to_string(n) +
                                " rows attending to each other must fit one batch of n_batch " +
                                std::to_string(n_batch_) + " (raise n_batch)");
  }
  for (int64_t i = 0; i < n * n_embd; ++i) {
    if (!std::isfinite(rows[i])) {
      throw std::invalid_argument("eval_embeddings: row " + std::to_string(i / n_embd) + " holds " +
                                  std::to_string(rows[i]) + " at " + std::to_string(i % n_embd) +
                                  "; embeddings must be finite");
    }
  }
  append_in_batches(
      n, n_batch_, cancel,
      [&](int64_t done, int64_t count, int64_t first) -> const float* {
        BatchInput input;
        input.embeddings = rows + done * n_embd;
        input.bidirectional = bidirectional;
        const core::Tensor* out = run_batch(input, count, first, 1, cancel);
        return out ? reinterpret_cast<const float*>(out->row_ptr(0)) : nullptr;
      },
      picture_cols);
}

void Context::drop_last(int64_t n, const float* logits_after_kept) {
  kv_.drop_last(n);
  std::memcpy(logits_.data(), logits_after_kept, logits_.size() * sizeof(float));
}

void Context::eval_last_rows(const int32_t* tokens, int64_t n, int64_t rows, float* logits) {
  if (n < 1 || n > n_batch_) {
    throw std::invalid_argument("eval_last_rows: " + std::to_string(n) + " tokens, one batch holds 1 to " +
                                std::to_string(n_batch_));
  }
  if (rows < 1 || rows > std::min(n, max_logit_rows_) || !logits) {
    throw std::invalid_argument("eval_last_rows: " + std::to_string(rows) +
                                " rows of logits, this context hands out 1 to " +
                                std::to_string(std::min(n, max_logit_rows_)) + " for " + std::to_string(n) + " tokens");
  }
  check_tokens(tokens, n);
  kv_.require_free(n);
  const ForegroundActivity::Pass pass = take_turn();
  const int64_t first = kv_.append(n, kv_.next_position());
  const size_t row_bytes = static_cast<size_t>(n_vocab()) * sizeof(float);
  try {
    if (in_group() && n <= group_->max_request_tokens() && rows <= group_->params().max_logit_rows) {
      group_->run(kv_, tokens, n, first, rows, logits);
    } else {
      const core::Tensor* out = run_batch({tokens}, n, first, rows, nullptr);
      for (int64_t r = 0; r < rows; ++r) std::memcpy(logits + r * n_vocab(), out->row_ptr(r), row_bytes);
    }
  } catch (...) {
    kv_.drop_last(n);
    throw;
  }
  std::memcpy(logits_.data(), logits + (rows - 1) * n_vocab(), row_bytes);
}

ForegroundActivity* Context::activity() const { return group_ ? &group_->activity() : activity_; }

ForegroundActivity::Pass Context::take_turn() const {
  ForegroundActivity* const activity = this->activity();
  if (activity && background_) {
    activity->wait_until_quiet(background_);
    return ForegroundActivity::Pass(nullptr);
  }
  return ForegroundActivity::Pass(activity);
}

const core::Tensor* Context::run_batch(const BatchInput& input, int64_t n_tokens, int64_t first_cell,
                                       int64_t output_rows, const core::Cancellation* cancel) {
  model::Batch batch;
  batch.n_tokens = n_tokens;
  batch.first_cell = first_cell;
  batch.output_rows = output_rows;
  batch.embeddings = input.embeddings != nullptr;
  batch.bidirectional = input.bidirectional;

  graph_.reset();
  model::DecoderBuilder builder(graph_, model_.hparams(), model_.weights(), kv_.layers(), batch, rope_factors_,
                                bound_adapters_->decoder());
  core::Tensor* out = model::build_forward(builder);
  allocator_.allocate(graph_);

  const model::ForwardInputs& in = builder.inputs();
  if (input.embeddings != nullptr) {
    std::memcpy(in.embeddings->data, input.embeddings,
                static_cast<size_t>(n_tokens * model_.hparams().n_embd) * sizeof(float));
  } else {
    std::memcpy(in.tokens->data, input.tokens, static_cast<size_t>(n_tokens) * sizeof(int32_t));
  }
  if (in.key_ranges != nullptr) {
    model::bidirectional_key_ranges(batch, 0, static_cast<int32_t*>(in.key_ranges->data));
  }
  if (in.sliding_key_ranges != nullptr) {
    model::bidirectional_key_ranges(batch, model_.hparams().sliding_window,
                                    static_cast<int32_t*>(in.sliding_key_ranges->data));
  }
  kv_.rope_positions(batch.first_cell, n_tokens, static_cast<int32_t*>(in.positions->data), n_tokens);
  {
    const model::Model::ForwardPass pass(model_);
    if (!core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer(), profiling_ ? &op_times_ : nullptr,
                             cancel)) {
      return nullptr;
    }
  }
  for (int64_t r = 0; r < out->ne[1]; ++r) {
    require_finite_logits(reinterpret_cast<const float*>(out->row_ptr(r)), out->ne[0]);
  }
  return out;
}

// Per layer that rotates: K rows of cells [first, first + n), dequantized ->
// rotated by the per-cell deltas with the layer's rope settings -> written
// back. Rotations compose, so a key rotated for position p and then by delta
// is the key for p + delta; the keys already carry the rope's magnitude
// factor, so the extra rotation has none.
Context::ShiftInputs Context::build_shift_graph(int64_t first, int64_t n) {
  const model::HParams& hp = model_.hparams();
  graph_.reset();
  ShiftInputs in;
  in.rows = graph_.input(GgmlType::I32, {hp.n_head_kv * n}, "rows");
  in.deltas = graph_.input(GgmlType::I32, {n}, "deltas");
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const model::LayerAttention& layer = hp.layer(il);
    if (!layer.rope) continue;
    core::RopeParams rotation = layer.rope_params;
    rotation.attn_factor = 1.0f;
    // A multimodal key moves by delta in all three of its positions, which
    // is neox's rotation by delta (the same frequencies, pair by pair).
    if (rotation.mode == core::RopeMode::Multi) rotation.mode = core::RopeMode::Neox;
    core::Tensor* k = kv_.k(il);
    // Every row of the head-major cache, nb[2] bytes apart (KvCache::key_cells_per_head).
    core::Tensor* rows = graph_.view(
        k, {hp.head_dim, (hp.n_head_kv - 1) * kv_.key_cells_per_head() + kv_.size()}, {k->nb[2]}, 0);
    core::Tensor* cur = graph_.reshape(graph_.get_rows(rows, in.rows), {hp.head_dim, hp.n_head_kv, n});
    cur = graph_.rope(cur, in.deltas, rotation, rope_factors_);
    core::Tensor* dst = graph_.view(k, {hp.head_dim, hp.n_head_kv, n}, {k->nb[1], k->nb[2]},
                                    static_cast<size_t>(first) * k->nb[2]);
    graph_.expand(graph_.copy(cur, dst));
  }
  return in;
}

void Context::shift_positions(int64_t first, int64_t n, int32_t delta) {
  if (first < 0 || n < 0 || first > kv_.used() - n) {
    throw std::out_of_range("shift_positions: cells outside the used part of the cache");
  }
  kv_.check_shift(first, n, delta);  // before any key is rotated
  if (n == 0 || delta == 0) return;
  // Graphs are reserved for n_batch rows: shift larger ranges in pieces.
  for (int64_t done = 0; done < n; done += n_batch_) {
    const int64_t count = std::min(n_batch_, n - done);
    const ForegroundActivity::Pass pass = take_turn();
    const ShiftInputs in = build_shift_graph(first + done, count);
    allocator_.allocate(graph_);
    const int64_t n_head_kv = model_.hparams().n_head_kv;
    const int64_t cells_per_head = kv_.key_cells_per_head();
    for (int64_t i = 0; i < count; ++i) {
      // Row (head h, cell c) of the head-major cache is row h * cells_per_head + c.
      for (int64_t h = 0; h < n_head_kv; ++h) {
        const int64_t row = h * cells_per_head + first + done + i;
        static_cast<int32_t*>(in.rows->data)[i * n_head_kv + h] = static_cast<int32_t>(row);
      }
      static_cast<int32_t*>(in.deltas->data)[i] = delta;
    }
    core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer());
  }
  kv_.add_to_positions(first, n, delta);
}

}  // namespace peak::runtime
