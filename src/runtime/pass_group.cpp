#include "runtime/pass_group.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/cpu_topology.h"
#include "core/executor.h"
#include "runtime/context.h"

namespace peak::runtime {

using kernels::GgmlType;

namespace {

// Each sequence adds about a dozen tensors per layer (its slices, cache views
// and copies, its attention) to the ones a single sequence's pass needs.
constexpr size_t kTensorsPerSequenceLayer = 16;
constexpr size_t kTensorsPerLayer = 64;

size_t graph_capacity(const model::HParams& hp, int max_sequences) {
  return static_cast<size_t>(hp.n_layer) *
             (kTensorsPerLayer + kTensorsPerSequenceLayer * static_cast<size_t>(max_sequences)) +
         1024;
}

const PassGroupParams& checked(const PassGroupParams& p) {
  if (p.n_ctx < 1) throw std::invalid_argument("pass group: n_ctx must be positive");
  if (p.max_sequences < 1 || p.max_sequences > 64) {
    throw std::invalid_argument("pass group: max_sequences must be 1 to 64, not " + std::to_string(p.max_sequences));
  }
  if (p.prefill_chunk < 1) throw std::invalid_argument("pass group: prefill_chunk must be positive");
  if (p.max_logit_rows < 1) throw std::invalid_argument("pass group: max_logit_rows must be at least 1");
  if (p.gather_wait.count() < 0) throw std::invalid_argument("pass group: gather_wait must not be negative");
  return p;
}

}  // namespace

PassGroup::PassGroup(const model::Model& model, const PassGroupParams& params)
    : model_(model),
      params_(checked(params)),
      max_request_tokens_(std::min(params.n_ctx, std::max(params.prefill_chunk, params.max_logit_rows))),
      max_pass_tokens_(max_request_tokens_ + (params.max_sequences - 1) * params.max_logit_rows),
      n_threads_(core::pass_threads(params.n_threads)),
      pool_(n_threads_),
      graph_(graph_capacity(model.hparams(), params.max_sequences)),
      rope_factors_(model::rope_factors_for_context(model.weights(), model.hparams(), params.n_ctx)),
      bound_adapters_(std::make_unique<BoundAdapters>(model, params.adapters)),
      passes_by_sequences_(static_cast<size_t>(params.max_sequences), 0) {
  if (model.hparams().spec().encoder) throw std::invalid_argument("pass group: an encoder has no KV cache to step");
  params_.type_k = kv_type_fitting(model.hparams(), params.type_k);
  params_.type_v = kv_type_fitting(model.hparams(), params.type_v);
  sequences_.reserve(static_cast<size_t>(params.max_sequences));
  taken_.reserve(static_cast<size_t>(params.max_sequences));
  regulars_.reserve(static_cast<size_t>(params.max_sequences));
  queue_.reserve(64);
  reserve();
}

void PassGroup::reserve() {
  // Worst cases: k sequences at full depth, the first with a whole request
  // and the others with a draft each, for every k (best fit is not monotonic).
  const model::HParams& hp = model_.hparams();
  KvCacheParams cache;
  cache.n_ctx = params_.n_ctx;
  cache.type_k = params_.type_k;
  cache.type_v = params_.type_v;
  std::vector<core::Tensor> layout = KvCache::layout(hp, cache);
  std::vector<model::LayerKv> kv;
  for (size_t l = 0; l < layout.size(); l += 2) kv.push_back({&layout[l], &layout[l + 1]});
  const int64_t rows = std::min(params_.max_logit_rows, max_request_tokens_);
  for (int k = 1; k <= params_.max_sequences; ++k) {
    sequences_.clear();
    for (int s = 0; s < k; ++s) {
      model::Batch cells;
      cells.n_tokens = s == 0 ? max_request_tokens_ : rows;
      cells.first_cell = params_.n_ctx - cells.n_tokens;
      cells.output_rows = rows;
      sequences_.push_back({&kv, cells});
    }
    graph_.reset();
    model::DecoderBuilder builder(graph_, hp, model_.weights(), sequences_.data(), k, rope_factors_,
                                  bound_adapters_->decoder());
    model::build_forward(builder);
    allocator_.reserve(graph_, n_threads_);
  }
  sequences_.clear();
  graph_.reset();
}

void PassGroup::admit(const model::Model& model, const KvCacheParams& cache) {
  if (&model != &model_) throw std::invalid_argument("pass group: the context runs another model than the group");
  if (kv_type_fitting(model.hparams(), cache.type_k) != params_.type_k ||
      kv_type_fitting(model.hparams(), cache.type_v) != params_.type_v) {
    throw std::invalid_argument("pass group: the context's cache types differ from the group's");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (cache.n_ctx <= params_.n_ctx) return;
  wake_.wait(lock, [&] { return !running_; });
  running_ = true;  // no pass starts while the plan changes
  const int64_t before = params_.n_ctx;
  params_.n_ctx = cache.n_ctx;
  try {
    reserve();
  } catch (...) {
    params_.n_ctx = before;
    running_ = false;
    wake_.notify_all();
    throw;
  }
  running_ = false;
  wake_.notify_all();
}

bool PassGroup::serves(const Adapters& adapters, const core::Tensor* rope_factors) const {
  return rope_factors == rope_factors_ && same_adapters(adapters, params_.adapters);
}

void PassGroup::run(const KvCache& kv, const int32_t* tokens, int64_t n_tokens, int64_t first_cell, int64_t output_rows,
                    float* logits) {
  if (n_tokens < 1 || n_tokens > max_request_tokens_ || output_rows < 1 ||
      output_rows > std::min(n_tokens, params_.max_logit_rows)) {
    throw std::invalid_argument("pass group: a request of " + std::to_string(n_tokens) + " tokens and " +
                                std::to_string(output_rows) + " rows of logits; it takes 1 to " +
                                std::to_string(max_request_tokens_) + " tokens and 1 to " +
                                std::to_string(params_.max_logit_rows) + " rows");
  }
  Request request;
  request.kv = &kv;
  request.tokens = tokens;
  request.n_tokens = n_tokens;
  request.first_cell = first_cell;
  request.output_rows = output_rows;
  request.logits = logits;
  request.queued_at = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  queue_.push_back(&request);
  wake_.notify_all();
  while (!request.done) {
    const auto now = std::chrono::steady_clock::now();
    if (!running_ && ready(now)) {
      lead(lock);
    } else if (!running_ && !queue_.empty()) {
      wake_.wait_until(lock, gather_deadline());
    } else {
      wake_.wait(lock);
    }
  }
  if (request.error) std::rethrow_exception(request.error);
}

std::chrono::steady_clock::time_point PassGroup::gather_deadline() const {
  return std::max(queue_.front()->queued_at, last_pass_end_) + params_.gather_wait;
}

bool PassGroup::ready(std::chrono::steady_clock::time_point now) const {
  if (queue_.empty()) return false;
  if (now >= gather_deadline()) return true;
  if (queue_.size() >= static_cast<size_t>(params_.max_sequences)) return true;
  int64_t tokens = 0;
  for (const Request* r : queue_) tokens += r->n_tokens;
  if (tokens >= max_pass_tokens_) return true;
  for (const KvCache* regular : regulars_) {
    const bool back = std::any_of(queue_.begin(), queue_.end(), [&](const Request* r) { return r->kv == regular; });
    if (!back) return false;
  }
  return true;
}

void PassGroup::lead(std::unique_lock<std::mutex>& lock) {
  // In arrival order, as many as fit one pass; the first always does.
  taken_.clear();
  int64_t tokens = 0;
  for (auto it = queue_.begin(); it != queue_.end() && taken_.size() < static_cast<size_t>(params_.max_sequences);) {
    if (!taken_.empty() && tokens + (*it)->n_tokens > max_pass_tokens_) {
      ++it;
      continue;
    }
    tokens += (*it)->n_tokens;
    taken_.push_back(*it);
    it = queue_.erase(it);
  }
  running_ = true;
  lock.unlock();
  std::exception_ptr failure;
  try {
    run_pass(0, taken_.size());
  } catch (const std::length_error&) {
    // This mix of sequences planned above the reserved worst cases: each alone
    // fits the one-sequence plan.
    for (size_t i = 0; i < taken_.size(); ++i) {
      try {
        run_pass(i, 1);
      } catch (...) {
        taken_[i]->error = std::current_exception();
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }
  lock.lock();
  regulars_.clear();
  for (Request* r : taken_) {
    if (failure) r->error = failure;
    r->done = true;
    regulars_.push_back(r->kv);
  }
  ++passes_by_sequences_[taken_.size() - 1];
  tokens_ += static_cast<uint64_t>(tokens);
  running_ = false;
  last_pass_end_ = std::chrono::steady_clock::now();
  wake_.notify_all();
}

void PassGroup::run_pass(size_t first, size_t count) {
  sequences_.clear();
  for (size_t i = first; i < first + count; ++i) {
    const Request& r = *taken_[i];
    model::Batch cells;
    cells.n_tokens = r.n_tokens;
    cells.first_cell = r.first_cell;
    cells.output_rows = r.output_rows;
    sequences_.push_back({&r.kv->layers(), cells});
  }
  graph_.reset();
  const model::HParams& hp = model_.hparams();
  model::DecoderBuilder builder(graph_, hp, model_.weights(), sequences_.data(), static_cast<int64_t>(count),
                                rope_factors_, bound_adapters_->decoder());
  const core::Tensor* out = model::build_forward(builder);
  allocator_.allocate(graph_);

  const model::ForwardInputs& in = builder.inputs();
  int64_t token = 0;
  int64_t row = 0;
  for (size_t i = first; i < first + count; ++i) {
    const Request& r = *taken_[i];
    std::memcpy(static_cast<int32_t*>(in.tokens->data) + token, r.tokens,
                static_cast<size_t>(r.n_tokens) * sizeof(int32_t));
    r.kv->rope_positions(r.first_cell, r.n_tokens, static_cast<int32_t*>(in.positions->data) + token,
                         builder.inputs().positions->ne[0] / core::rope_positions_per_token(hp.rope.mode));
    if (in.output_rows != nullptr) {
      for (int64_t j = r.n_tokens - r.output_rows; j < r.n_tokens; ++j) {
        static_cast<int32_t*>(in.output_rows->data)[row++] = static_cast<int32_t>(token + j);
      }
    }
    token += r.n_tokens;
  }
  {
    const model::Model::ForwardPass pass(model_);
    core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer());
  }
  const size_t row_bytes = static_cast<size_t>(hp.n_vocab) * sizeof(float);
  row = 0;
  for (size_t i = first; i < first + count; ++i) {
    Request& r = *taken_[i];
    try {
      for (int64_t j = 0; j < r.output_rows; ++j) {
        const float* logits = reinterpret_cast<const float*>(out->row_ptr(row + j));
        require_finite_logits(logits, hp.n_vocab);
        std::memcpy(r.logits + j * hp.n_vocab, logits, row_bytes);
      }
    } catch (...) {
      r.error = std::current_exception();
    }
    row += r.output_rows;
  }
}

PassGroupStats PassGroup::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  PassGroupStats s;
  s.passes_by_sequences = passes_by_sequences_;
  s.tokens = tokens_;
  return s;
}

}  // namespace peak::runtime
