// Sessions on the scripted Qwen3 (scripted_qwen3.h) as its tests run them, and
// a turn whose answer and reasoning are gathered as they stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/chat_session.h"

namespace peak::test {

// Greedy, one thread, a sliding window (no summaries) of `recent_max` tokens.
inline chat::SessionSettings scripted_qwen3_settings(bool thinking, size_t recent_max, size_t headroom) {
  chat::SessionSettings s;
  s.enable_thinking = thinking;
  s.mode = chat::MemoryMode::Window;
  s.sampler.temperature = 0.0f;
  s.n_threads = 1;
  s.recent_max = recent_max;
  s.headroom = headroom;
  return s;
}

struct StreamedTurn {
  std::string answer, reasoning;
};

// Options that append the streamed answer to `streamed.answer`.
inline runtime::GenerateOptions streaming_options(StreamedTurn& streamed, int32_t max_tokens) {
  runtime::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.on_text = [&streamed](const std::string& piece) {
    streamed.answer += piece;
    return true;
  };
  return o;
}

inline chat::TurnResult streamed_turn(chat::ChatSession& session, const std::string& text, StreamedTurn& streamed,
                                      int32_t max_tokens) {
  return session.chat(text, streaming_options(streamed, max_tokens), [&streamed](const std::string& piece) {
    streamed.reasoning += piece;
    return true;
  });
}

}  // namespace peak::test
