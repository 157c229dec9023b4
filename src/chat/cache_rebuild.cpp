#include "chat/cache_rebuild.h"

#include <algorithm>
#include <chrono>

namespace peak::chat {

CacheRebuild::CacheRebuild(const model::Model& model, Start start) : model_(model), start_(std::move(start)) {}

void CacheRebuild::run(const std::vector<int32_t>& summary_segment, const std::atomic<int>& cancel) {
  const auto began = std::chrono::steady_clock::now();
  auto staging = std::make_unique<runtime::Context>(model_, start_.params);
  staging_kv_bytes_ = staging->kv().bytes();
  try {
    staging->kv().restore(start_.prefix_cells, start_.prefix_positions);
    std::vector<uint8_t>().swap(start_.prefix_cells);  // in the staging cache now
    std::vector<int32_t> tokens = summary_segment;
    tokens.insert(tokens.end(), start_.recent_tokens.begin(), start_.recent_tokens.end());
    const auto n = static_cast<int64_t>(tokens.size());
    for (int64_t at = 0; at < n; at += staging->n_batch()) {
      if (cancel.load() != 0) break;
      staging->eval(tokens.data() + at, std::min(staging->n_batch(), n - at));
    }
  } catch (...) {
    staging_kv_bytes_ = 0;
    throw;
  }
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (cancel.load() != 0) {
    staging_kv_bytes_ = 0;  // freed as `staging` goes
    return;
  }
  staging_ = std::move(staging);
  summary_segment_ = summary_segment;
}

std::unique_ptr<runtime::Context> CacheRebuild::take() { return std::move(staging_); }

}  // namespace peak::chat
