// Checks shared by the session tests: two sessions show the same conversation;
// a session's cells match its segments at positions 0, 1, ...
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "chat/chat_session.h"

namespace peak::chat::testing {

inline void expect_same_messages(const ChatSession& a, const ChatSession& b) {
  ASSERT_EQ(a.n_messages(), b.n_messages());
  for (size_t i = 0; i < a.n_messages(); ++i) {
    EXPECT_EQ(a.message(i).role, b.message(i).role) << i;
    EXPECT_EQ(a.message(i).text, b.message(i).text) << i;
    EXPECT_EQ(a.message(i).state, b.message(i).state) << i;
  }
}

// (all but the last unsettled_tokens(), which the next operation evaluates).
inline void expect_compact(const ChatSession& s) {
  const runtime::KvCache& kv = s.context().kv();
  ASSERT_EQ(kv.used() + s.unsettled_tokens(), static_cast<int64_t>(s.cached_tokens().size()));
  for (size_t i = 0; i < kv.positions().size(); ++i) ASSERT_EQ(kv.positions()[i], static_cast<int32_t>(i));
}

// Sessions on the scripted Qwen3 model (scripted_qwen3.h): a sliding window
// with a system prompt, greedy.
inline SessionSettings scripted_qwen3_settings() {
  SessionSettings s;
  s.mode = MemoryMode::Window;
  s.system_prompt = "You are terse.";
  s.sampler.temperature = 0.0f;
  s.n_threads = 1;
  s.recent_max = 256;
  s.headroom = 64;
  return s;
}

}  // namespace peak::chat::testing
