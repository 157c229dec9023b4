// The structs behind the C API's opaque handles.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/model.h"
#include "peak/peak.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "sampling/sampler_chain.h"

struct peak_gguf {
  std::unique_ptr<peak::gguf::GgufFile> file;
  std::vector<std::string> keys;          // NUL-terminated copies (file keys are not)
  std::vector<std::string> tensor_names;  // likewise
};

struct peak_model {
  std::unique_ptr<peak::model::Model> model;
  std::string architecture;   // NUL-terminated copies for peak_model_info
  std::string name;
  std::string chat_template;  // recognised family name
  std::string chat_template_warning;
};

struct peak_context {
  const peak_model* model;
  std::unique_ptr<peak::runtime::Context> context;
};

struct peak_sampler {
  const peak_model* model;
  std::unique_ptr<peak::sampling::SamplerChain> chain;
};

inline peak_stop_reason stop_reason_to_c(peak::runtime::StopReason r) {
  switch (r) {
    case peak::runtime::StopReason::EndOfGeneration: return PEAK_STOP_EOG;
    case peak::runtime::StopReason::MaxTokens: return PEAK_STOP_MAX_TOKENS;
    case peak::runtime::StopReason::ContextFull: return PEAK_STOP_CONTEXT_FULL;
    case peak::runtime::StopReason::Callback: return PEAK_STOP_CALLBACK;
    case peak::runtime::StopReason::Aborted: return PEAK_STOP_ABORTED;
  }
  return PEAK_STOP_ABORTED;
}

// The C sampler parameters as the sampler chain's.
inline peak::sampling::SamplerParams sampler_params_from_c(const peak_sampler_params& p) {
  peak::sampling::SamplerParams s;
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.penalty_last_n = p.penalty_last_n;
  s.repeat_penalty = p.repeat_penalty;
  s.frequency_penalty = p.frequency_penalty;
  s.presence_penalty = p.presence_penalty;
  s.seed = p.seed;
  return s;
}
