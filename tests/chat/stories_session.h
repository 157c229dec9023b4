// Session settings for tests on stories260K: small segments so a few turns fill
// them, raw text (the model has no chat template), greedy sampling, summaries
// written before the turn returns; story lines to send and helpers sending them. Shared by the session tests, the soak test
// and the session-file fuzz target (whose seeds must match its session).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_session.h"
#include "model/model.h"

namespace peak::chat::testing {

inline const std::string kStoriesPath = std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf";

inline SessionSettings small_stories_settings(MemoryMode mode = MemoryMode::Ssskv) {
  SessionSettings s;
  s.mode = mode;
  s.template_name = "raw";
  s.system_prompt = "Lily and Tom play in the park.";
  s.recent_max = 96;
  s.summary_max = 48;
  s.trigger_discard = 40;
  s.headroom = 32;
  s.background_summary = false;
  s.summarizer.n_ctx = 256;
  s.summarizer.max_new_tokens = 32;
  s.sampler.temperature = 0.0f;
  s.n_threads = 1;
  return s;
}

// Pictures for sessions on stories260K (whose width, 64, a real projector
// can have too): Gemma 3's projector, and the rows of a made-up picture,
// smooth values of the token embeddings' order of size.
inline constexpr model::Arch kStoriesImageProjector = model::Arch::Gemma3Vision;

inline std::vector<float> picture_rows(int64_t n_tokens, int64_t n_embd, float seed) {
  std::vector<float> rows(static_cast<size_t>(n_tokens * n_embd));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.4f * std::sin(0.37f * static_cast<float>(i) + seed);
  return rows;
}

// The model, loaded once per test program.
inline const model::Model& stories_model() {
  static const auto m = model::Model::load(kStoriesPath);
  return *m;
}

inline runtime::GenerateOptions max_tokens(int n) {
  runtime::GenerateOptions o;
  o.max_tokens = n;
  return o;
}

inline const char* const kStoryLines[5] = {
    "Once upon a time there was a dog named Max.", "Max liked to run in the sun.", "One day Max found a big red ball.",
    "He took the ball to his friend Sue.", "Sue and Max played until the sky was dark."};

// Sends `turns` story lines (kStoryLines in turn), answers of `answer_tokens`.
inline void chat_story_turns(ChatSession& session, int turns, int answer_tokens = 12) {
  for (int turn = 0; turn < turns; ++turn) session.chat(kStoryLines[turn % 5], max_tokens(answer_tokens));
}

// Sends the same lines (kStoryLines in turn, answers of 12 tokens) to two
// sessions until a turn of `live` starts a summary; returns the turns sent, or
// 0 when none did within 40.
inline int run_twins_until_summary(ChatSession& live, ChatSession& control) {
  runtime::GenerateOptions o;
  o.max_tokens = 12;
  for (int turn = 0; turn < 40; ++turn) {
    const bool started = live.chat(kStoryLines[turn % 5], o).summary_started;
    control.chat(kStoryLines[turn % 5], o);
    if (started) return turn + 1;
  }
  return 0;
}

// The text a turn answers (greedy with these settings), at most `n` tokens.
inline std::string answer(ChatSession& session, const std::string& text, int n) {
  std::string out;
  runtime::GenerateOptions o;
  o.max_tokens = n;
  o.on_text = [&out](std::string_view t) {
    out.append(t);
    return true;
  };
  session.chat(text, o);
  return out;
}

}  // namespace peak::chat::testing
