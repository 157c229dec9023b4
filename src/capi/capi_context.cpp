// peak_context_* and KV cache editing through the C API.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"

namespace {

using peak::capi::at_most;
using peak::capi::fail;
using peak::capi::guarded;
using peak::capi::kMaxTokenCount;

// The first version of peak_context_params ended at logits_all.
constexpr size_t kContextParamsFirstSize = offsetof(peak_context_params, max_logit_rows);
// The second at max_logit_rows.
constexpr size_t kContextParamsSecondSize = offsetof(peak_context_params, pass_group);

}  // namespace

extern "C" {

peak_context_params peak_context_default_params(void) {
  peak_context_params p{};
  p.struct_size = sizeof(peak_context_params);
  p.n_ctx = 4096;
  p.n_batch = 512;
  p.n_threads = 0;
  p.type_k = PEAK_TYPE_F16;
  p.type_v = PEAK_TYPE_F16;
  p.logits_all = 0;
  p.max_logit_rows = 1;
  return p;
}

}  // extern "C"

namespace peak::capi {

peak_status context_params_from_c(const peak_context_params* params, const peak_model* model,
                                  peak::runtime::ContextParams* cp) {
  peak_context_params p;
  if (!peak::capi::read_versioned_params(params, peak_context_default_params(),
                                         {kContextParamsFirstSize, kContextParamsSecondSize}, "peak_context_params",
                                         &p)) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (p.max_logit_rows == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "max_logit_rows must be at least 1");
  if (!peak::capi::kv_type_ok(p.type_k, "type_k") || !peak::capi::kv_type_ok(p.type_v, "type_v")) return PEAK_ERR_INVALID_ARGUMENT;
  if (p.n_ctx == 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                "n_ctx must be at least 1" +
                    (model ? " (this model was trained with " +
                                 std::to_string(model->model->hparams().n_ctx_train) + ")"
                           : std::string()));
  }
  if (p.n_batch == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "n_batch must be at least 1");
  if (!at_most(p.n_ctx, kMaxTokenCount, "n_ctx") || !at_most(p.n_batch, kMaxTokenCount, "n_batch")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  cp->n_ctx = static_cast<int64_t>(p.n_ctx);
  cp->n_batch = static_cast<int64_t>(p.n_batch);
  cp->n_threads = peak::capi::thread_count(p.n_threads);
  cp->type_k = static_cast<peak::kernels::GgmlType>(p.type_k);
  cp->type_v = static_cast<peak::kernels::GgmlType>(p.type_v);
  cp->logits_all = p.logits_all != 0;
  cp->max_logit_rows = static_cast<int64_t>(std::min(p.max_logit_rows, peak::capi::kMaxTokenCount));
  cp->pass_group = p.pass_group ? p.pass_group->group.get() : nullptr;
  return PEAK_OK;
}

}  // namespace peak::capi

extern "C" {

peak_status peak_context_create(const peak_model* model, const peak_context_params* params, peak_context** out) {
  PEAK_CHECK_ARG(out, "peak_context_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_context_create: model");
  if (!has_weights(model, "peak_context_create")) return PEAK_ERR_INVALID_ARGUMENT;
  peak::runtime::ContextParams cp;
  if (const peak_status st = peak::capi::context_params_from_c(params, model, &cp); st != PEAK_OK) return st;
  return guarded([&] {
    auto c = std::make_unique<peak_context>();
    c->model = model;
    c->context = std::make_unique<peak::runtime::Context>(*model->model, cp);
    *out = c.release();
    return PEAK_OK;
  });
}

peak_status peak_context_memory_needed(const peak_model* model, const peak_context_params* params, size_t* bytes) {
  PEAK_CHECK_ARG(bytes, "peak_context_memory_needed: bytes");
  *bytes = 0;
  PEAK_CHECK_ARG(model, "peak_context_memory_needed: model");
  if (!has_weights(model, "peak_context_memory_needed")) return PEAK_ERR_INVALID_ARGUMENT;
  peak::runtime::ContextParams cp;
  if (const peak_status st = peak::capi::context_params_from_c(params, model, &cp); st != PEAK_OK) return st;
  return guarded([&] {
    *bytes = peak::runtime::Context::memory_needed(*model->model, cp).total();
    return PEAK_OK;
  });
}

void peak_context_free(peak_context* ctx) { delete ctx; }

peak_status peak_draft_model_create(const peak_model* model, const peak_context_params* params,
                                    peak_draft_model** out) {
  PEAK_CHECK_ARG(out, "peak_draft_model_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_draft_model_create: model");
  if (!has_weights(model, "peak_draft_model_create")) return PEAK_ERR_INVALID_ARGUMENT;
  peak::runtime::ContextParams cp;
  if (const peak_status st = peak::capi::context_params_from_c(params, model, &cp); st != PEAK_OK) return st;
  return guarded([&] {
    auto d = std::make_unique<peak_draft_model>();
    d->model = model;
    d->draft = std::make_unique<peak::runtime::DraftModel>(*model->model, cp);
    *out = d.release();
    return PEAK_OK;
  });
}

void peak_draft_model_free(peak_draft_model* draft) { delete draft; }

size_t peak_context_n_ctx(const peak_context* ctx) {
  return ctx ? static_cast<size_t>(ctx->context->n_ctx()) : 0;
}

size_t peak_context_n_used(const peak_context* ctx) {
  return ctx ? static_cast<size_t>(ctx->context->kv().used()) : 0;
}

peak_status peak_context_set_threads(peak_context* ctx, size_t n_threads) {
  PEAK_CHECK_ARG(ctx, "peak_context_set_threads: ctx");
  return guarded([&] {
    ctx->context->set_threads(peak::capi::thread_count(n_threads));
    return PEAK_OK;
  });
}

peak_status peak_context_eval(peak_context* ctx, const int32_t* tokens, size_t n_tokens) {
  return peak_context_eval_all_logits(ctx, tokens, n_tokens, nullptr);
}

peak_status peak_context_eval_all_logits(peak_context* ctx, const int32_t* tokens, size_t n_tokens, float* logits) {
  PEAK_CHECK_ARG(ctx, "peak_context_eval: ctx");
  if (!tokens && n_tokens > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_context_eval: tokens is NULL");
  if (n_tokens > static_cast<size_t>(ctx->context->n_ctx())) {
    return fail(PEAK_ERR_CONTEXT_FULL, std::to_string(n_tokens) + " tokens cannot fit in a context of " +
                                           std::to_string(ctx->context->n_ctx()));
  }
  return guarded([&] {
    ctx->context->eval(tokens, static_cast<int64_t>(n_tokens), logits);
    return PEAK_OK;
  });
}

peak_status peak_context_eval_embeddings(peak_context* ctx, const float* rows, size_t n_rows, int bidirectional) {
  PEAK_CHECK_ARG(ctx, "peak_context_eval_embeddings: ctx");
  PEAK_CHECK_ARG(rows, "peak_context_eval_embeddings: rows");
  if (n_rows == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_context_eval_embeddings: n_rows is 0");
  const int64_t free_cells = ctx->context->kv().free_cells();
  if (n_rows > static_cast<size_t>(free_cells)) {
    return fail(PEAK_ERR_CONTEXT_FULL, "peak_context_eval_embeddings: " + std::to_string(n_rows) +
                                           " rows do not fit in the " + std::to_string(free_cells) +
                                           " free cells of a context of " + std::to_string(ctx->context->n_ctx()));
  }
  return guarded([&] {
    ctx->context->eval_embeddings(rows, static_cast<int64_t>(n_rows), bidirectional != 0);
    return PEAK_OK;
  });
}

peak_status peak_context_eval_picture(peak_context* ctx, const float* rows, size_t n_rows, uint32_t token_cols) {
  PEAK_CHECK_ARG(ctx, "peak_context_eval_picture: ctx");
  PEAK_CHECK_ARG(rows, "peak_context_eval_picture: rows");
  if (n_rows == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_context_eval_picture: n_rows is 0");
  if (token_cols == 0 || n_rows % token_cols != 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_context_eval_picture: " + std::to_string(n_rows) +
                                               " rows are not whole rows of a picture " + std::to_string(token_cols) +
                                               " tokens across");
  }
  const int64_t free_cells = ctx->context->kv().free_cells();
  if (n_rows > static_cast<size_t>(free_cells)) {
    return fail(PEAK_ERR_CONTEXT_FULL, "peak_context_eval_picture: " + std::to_string(n_rows) +
                                           " rows do not fit in the " + std::to_string(free_cells) +
                                           " free cells of a context of " + std::to_string(ctx->context->n_ctx()));
  }
  return guarded([&] {
    const bool placed = ctx->context->kv().keeps_places();
    ctx->context->eval_embeddings(rows, static_cast<int64_t>(n_rows), false, nullptr, placed ? token_cols : 0);
    return PEAK_OK;
  });
}

const float* peak_context_get_logits(const peak_context* ctx) { return ctx ? ctx->context->logits() : nullptr; }

peak_status peak_context_kv_clear(peak_context* ctx) {
  PEAK_CHECK_ARG(ctx, "peak_context_kv_clear: ctx");
  ctx->context->kv().clear();
  return PEAK_OK;
}

peak_status peak_context_kv_remove(peak_context* ctx, size_t first, size_t n) {
  PEAK_CHECK_ARG(ctx, "peak_context_kv_remove: ctx");
  if (!at_most(first, kMaxTokenCount, "first") || !at_most(n, kMaxTokenCount, "n")) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    ctx->context->kv().remove(static_cast<int64_t>(first), static_cast<int64_t>(n));
    return PEAK_OK;
  });
}

peak_status peak_context_kv_shift(peak_context* ctx, size_t first, size_t n, int32_t delta) {
  PEAK_CHECK_ARG(ctx, "peak_context_kv_shift: ctx");
  if (!at_most(first, kMaxTokenCount, "first") || !at_most(n, kMaxTokenCount, "n")) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    ctx->context->shift_positions(static_cast<int64_t>(first), static_cast<int64_t>(n), delta);
    return PEAK_OK;
  });
}

}  // extern "C"

extern "C" {

peak_status peak_context_set_profiling(peak_context* ctx, int enabled) {
  PEAK_CHECK_ARG(ctx, "peak_context_set_profiling: ctx");
  ctx->context->set_profiling(enabled != 0);
  return PEAK_OK;
}

peak_status peak_context_get_profile(const peak_context* ctx, peak_op_profile* entries, size_t capacity,
                                     size_t* n_entries) {
  PEAK_CHECK_ARG(ctx, "peak_context_get_profile: ctx");
  PEAK_CHECK_ARG(n_entries, "peak_context_get_profile: n_entries");
  if (!entries && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_context_get_profile: entries is NULL");
  const peak::core::OpTimes& t = ctx->context->op_times();
  std::vector<peak_op_profile> found;
  for (int op = 0; op < peak::core::kOpCount; ++op) {
    if (t.calls[op] == 0) continue;
    found.push_back(
        {peak::core::op_name(static_cast<peak::core::Op>(op)), static_cast<size_t>(t.calls[op]), t.seconds[op]});
  }
  std::sort(found.begin(), found.end(),
            [](const peak_op_profile& a, const peak_op_profile& b) { return a.seconds > b.seconds; });
  const size_t n = found.size();
  *n_entries = n;
  if (n > capacity) {
    return fail(PEAK_ERR_BUFFER_TOO_SMALL, "the profile has " + std::to_string(n) + " entries, the buffer holds " +
                                               std::to_string(capacity));
  }
  std::copy(found.begin(), found.end(), entries);
  return PEAK_OK;
}

void peak_context_reset_profile(peak_context* ctx) {
  if (ctx) ctx->context->reset_op_times();
}

}  // extern "C"
