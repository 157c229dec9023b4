// A session's cache against the reference it should equal: a fresh context
// prefilled with the same tokens (runtime::Context, not the session's code).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "chat/chat_session.h"
#include "chat/conversation_images.h"
#include "model/model.h"
#include "runtime/context.h"

namespace peak::chat::testing {

// The logits after `tokens` in a fresh context of the session's size with a
// `type` cache (one thread: the order of sums is the same on every run), the
// rows of the pictures among them taken from `images` (evaluate_cells).
inline std::vector<float> fresh_prefill_logits(const model::Model& m, const ChatSession& session,
                                               const std::vector<int32_t>& tokens, kernels::GgmlType type,
                                               const ImageList& images = {}) {
  runtime::ContextParams p;
  p.n_ctx = session.context().n_ctx();
  p.n_threads = 1;
  p.type_k = p.type_v = type;
  runtime::Context fresh(m, p);
  evaluate_cells(fresh, tokens.data(), static_cast<int64_t>(tokens.size()), images);
  return std::vector<float>(fresh.logits(), fresh.logits() + fresh.n_vocab());
}

inline double max_abs_diff(const std::vector<float>& a, const float* b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
  return d;
}

// The logits after `probe` (the next message's tokens) evaluated on a copy of
// the session's KV cache, after the tokens it has not settled yet, as the
// session's next turn evaluates them (ChatSession::settle()).
inline std::vector<float> logits_after(const model::Model& m, const ChatSession& session, std::vector<int32_t> probe) {
  const runtime::Context& live = session.context();
  runtime::ContextParams p;
  p.n_ctx = live.n_ctx();
  p.n_threads = 1;
  p.type_k = live.kv().type_k();
  p.type_v = live.kv().type_v();
  runtime::Context copy(m, p);
  copy.kv().copy_from(live.kv());
  const std::vector<int32_t> cached = session.cached_tokens();
  probe.insert(probe.begin(), cached.end() - session.unsettled_tokens(), cached.end());
  copy.eval(probe.data(), static_cast<int64_t>(probe.size()));
  return std::vector<float>(copy.logits(), copy.logits() + copy.n_vocab());
}

// The largest |logit| difference after `probe` between a copy of the
// session's KV cache and a fresh `fresh_type` prefill of cached_tokens() + probe.
inline double deviation_from_fresh_prefill(const model::Model& m, const ChatSession& session,
                                           const std::vector<int32_t>& probe, kernels::GgmlType fresh_type) {
  std::vector<int32_t> tokens = session.cached_tokens();
  tokens.insert(tokens.end(), probe.begin(), probe.end());
  return max_abs_diff(fresh_prefill_logits(m, session, tokens, fresh_type), logits_after(m, session, probe).data());
}

}  // namespace peak::chat::testing
