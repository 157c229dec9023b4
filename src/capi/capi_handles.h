// The structs behind the C API's opaque handles.
#pragma once

#include <memory>
#include <string>

#include "model/model.h"
#include "sampling/sampler_chain.h"
#include "session/context.h"
#include "session/generator.h"

struct peak_model {
  std::unique_ptr<peak::model::Model> model;
  std::string architecture;   // NUL-terminated copies for peak_model_info
  std::string name;
  std::string chat_template;  // recognised family name
  std::string chat_template_warning;
};

struct peak_context {
  const peak_model* model;
  std::unique_ptr<peak::session::Context> context;
};

struct peak_sampler {
  const peak_model* model;
  std::unique_ptr<peak::sampling::SamplerChain> chain;
};

inline peak_stop_reason stop_reason_to_c(peak::session::StopReason r) {
  switch (r) {
    case peak::session::StopReason::EndOfGeneration: return PEAK_STOP_EOG;
    case peak::session::StopReason::MaxTokens: return PEAK_STOP_MAX_TOKENS;
    case peak::session::StopReason::ContextFull: return PEAK_STOP_CONTEXT_FULL;
    case peak::session::StopReason::Callback: return PEAK_STOP_CALLBACK;
    case peak::session::StopReason::Aborted: return PEAK_STOP_ABORTED;
  }
  return PEAK_STOP_ABORTED;
}
