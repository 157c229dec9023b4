// peak_pass_group_*: forward passes shared by several contexts and sessions.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "capi/capi_adapter.h"
#include "capi/capi_guard.h"
#include "capi/capi_handles.h"

namespace {

using peak::capi::at_most;
using peak::capi::fail;
using peak::capi::guarded;
using peak::capi::kMaxTokenCount;

// Never more than a minute: a member that stopped stepping holds the others
// up once by this much.
constexpr size_t kMaxGatherWaitUs = 60'000'000;

}  // namespace

extern "C" {

peak_pass_group_params peak_pass_group_default_params(void) {
  peak_pass_group_params p{};
  p.struct_size = sizeof(peak_pass_group_params);
  p.n_ctx = 4096;
  p.max_sequences = 4;
  p.prefill_chunk = 128;
  p.max_logit_rows = 1;
  p.n_threads = 0;
  p.type_k = PEAK_TYPE_Q8_0;
  p.type_v = PEAK_TYPE_Q8_0;
  p.gather_wait_us = 3000;
  p.adapters = nullptr;
  return p;
}

peak_status peak_pass_group_create(const peak_model* model, const peak_pass_group_params* params,
                                   peak_pass_group** out) {
  PEAK_CHECK_ARG(out, "peak_pass_group_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_pass_group_create: model");
  if (!has_weights(model, "peak_pass_group_create")) return PEAK_ERR_INVALID_ARGUMENT;
  peak_pass_group_params p;
  if (!peak::capi::read_versioned_params(params, peak_pass_group_default_params(), {}, "peak_pass_group_params", &p)) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (p.n_ctx == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_pass_group_params.n_ctx must be at least 1");
  if (p.max_sequences == 0 || p.max_sequences > PEAK_PASS_GROUP_MAX_SEQUENCES) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_pass_group_params.max_sequences is " +
                                               std::to_string(p.max_sequences) + "; it must be 1 to " +
                                               std::to_string(PEAK_PASS_GROUP_MAX_SEQUENCES));
  }
  if (p.prefill_chunk == 0)
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_pass_group_params.prefill_chunk must be at least 1");
  if (p.max_logit_rows == 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_pass_group_params.max_logit_rows must be at least 1");
  }
  if (!at_most(p.n_ctx, kMaxTokenCount, "n_ctx") || !at_most(p.prefill_chunk, kMaxTokenCount, "prefill_chunk") ||
      !at_most(p.max_logit_rows, kMaxTokenCount, "max_logit_rows") ||
      !at_most(p.gather_wait_us, kMaxGatherWaitUs, "gather_wait_us")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (!peak::capi::kv_type_ok(p.type_k, "type_k") || !peak::capi::kv_type_ok(p.type_v, "type_v")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  peak::runtime::PassGroupParams gp;
  if (const peak_status st = peak::capi::adapters_from_c(model, p.adapters, &gp.adapters); st != PEAK_OK) return st;
  gp.n_ctx = static_cast<int64_t>(p.n_ctx);
  gp.max_sequences = static_cast<int>(p.max_sequences);
  gp.prefill_chunk = static_cast<int64_t>(p.prefill_chunk);
  gp.max_logit_rows = static_cast<int64_t>(p.max_logit_rows);
  gp.n_threads = peak::capi::thread_count(p.n_threads);
  gp.type_k = static_cast<peak::kernels::GgmlType>(p.type_k);
  gp.type_v = static_cast<peak::kernels::GgmlType>(p.type_v);
  gp.gather_wait = std::chrono::microseconds(static_cast<int64_t>(p.gather_wait_us));
  return guarded([&] {
    auto g = std::make_unique<peak_pass_group>();
    g->model = model;
    g->group = std::make_unique<peak::runtime::PassGroup>(*model->model, gp);
    *out = g.release();
    return PEAK_OK;
  });
}

void peak_pass_group_free(peak_pass_group* group) { delete group; }

peak_status peak_pass_group_get_stats(const peak_pass_group* group, peak_pass_group_stats* stats) {
  PEAK_CHECK_ARG(group, "peak_pass_group_get_stats: group");
  PEAK_CHECK_ARG(stats, "peak_pass_group_get_stats: stats");
  if (!peak::capi::struct_size_ok(stats->struct_size, sizeof(peak_pass_group_stats), "peak_pass_group_stats")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    const peak::runtime::PassGroupStats s = group->group->stats();
    peak_pass_group_stats out{};
    out.struct_size = sizeof out;
    for (size_t k = 0; k < s.passes_by_sequences.size() && k < PEAK_PASS_GROUP_MAX_SEQUENCES; ++k) {
      out.passes_by_sequences[k] = s.passes_by_sequences[k];
      out.passes += s.passes_by_sequences[k];
      out.sequences += s.passes_by_sequences[k] * (k + 1);
    }
    out.tokens = s.tokens;
    *stats = out;
    return PEAK_OK;
  });
}

}  // extern "C"
