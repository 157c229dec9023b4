// Session settings for tests on stories260K: small segments so a few turns fill
// them, raw text (the model has no chat template), greedy sampling, summaries
// written before the turn returns. Shared by the session tests, the soak test
// and the session-file fuzz target (whose seeds must match its session).
#pragma once

#include <string>

#include "chat/chat_session.h"

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

}  // namespace peak::chat::testing
