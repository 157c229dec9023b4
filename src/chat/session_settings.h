// The settings of a ChatSession (chat_session.h describes what they shape).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/ggml_type.h"
#include "sampling/sampler_chain.h"
#include "chat/summarizer.h"

namespace peak::chat {

enum class MemoryMode { Ssskv, Window, None };
enum class RebuildStrategy { Shift, Reprefill, Background };

struct SessionSettings {
  MemoryMode mode = MemoryMode::Ssskv;
  std::string system_prompt;
  std::string template_name;  // "" the model's own, "raw" no template
  // Thinking models: let the model reason before it answers. Off (the default),
  // the template asks it not to; either way the reasoning is streamed apart and
  // never kept in the conversation, and the summarizer never thinks.
  bool enable_thinking = false;
  int64_t recent_max = 4096;                           // tokens of the Recent segment
  int64_t summary_max = 256;                           // tokens of the Summary segment
  int64_t trigger_discard = 2048;                      // dropped tokens that trigger a new summary
  int64_t headroom = 512;                              // overflow cells for the answer: its length limit
  kernels::GgmlType type_k = kernels::GgmlType::Q8_0;  // main KV cache; F16 when its blocks do not divide the head size
  kernels::GgmlType type_v = kernels::GgmlType::Q8_0;
  RebuildStrategy rebuild = RebuildStrategy::Background;
  bool wait_for_summary = false;   // a turn arriving while a summary runs waits for it
  bool background_summary = true;  // false: summarize before the turn returns (deterministic tests)
  SummarizerSettings summarizer;   // its n_ctx, KV type, generation length
  int n_threads = 0;
  int64_t n_batch = 512;
  sampling::SamplerParams sampler;
};

// Cells of the headroom kept after an answer for its turn's closing marker.
constexpr int64_t kClosingReserve = 16;

// Throws std::invalid_argument naming the first field (as peak_session_params
// spells it) out of range; checked before a session allocates anything.
void validate_session_settings(const SessionSettings& settings);

}  // namespace peak::chat
