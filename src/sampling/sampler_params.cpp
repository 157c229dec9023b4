#include "sampling/sampler_params.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace peak::sampling {

namespace {

[[noreturn]] void refuse(const char* name, const std::string& rule, double value) {
  throw std::invalid_argument(std::string("sampling: ") + name + " must be " + rule + ", got " + std::to_string(value));
}

}  // namespace

std::string_view stage_name(SamplerStage stage) {
  switch (stage) {
    case SamplerStage::Penalties: return "penalties";
    case SamplerStage::TopK: return "top-k";
    case SamplerStage::TopP: return "top-p";
    case SamplerStage::MinP: return "min-p";
    case SamplerStage::Temperature: return "temperature";
  }
  return "unknown";
}

std::vector<SamplerStage> default_stage_order() {
  return {SamplerStage::Penalties, SamplerStage::TopK, SamplerStage::TopP, SamplerStage::MinP,
          SamplerStage::Temperature};
}

void validate(const SamplerParams& params) {
  // Written as "not (valid)" so that NaN, which fails every comparison, is refused.
  if (!(std::isfinite(params.temperature) && params.temperature >= 0.0f)) {
    refuse("temperature", "a finite number >= 0 (0 = greedy)", params.temperature);
  }
  if (params.top_k < 0) refuse("top_k", ">= 0 (0 = off)", params.top_k);
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) refuse("top_p", "in (0, 1] (1 = off)", params.top_p);
  if (!(params.min_p >= 0.0f && params.min_p <= 1.0f)) refuse("min_p", "in [0, 1] (0 = off)", params.min_p);
  if (params.penalty_last_n < 0) refuse("penalty_last_n", ">= 0 (0 = off)", params.penalty_last_n);
  if (!(std::isfinite(params.repeat_penalty) && params.repeat_penalty > 0.0f)) {
    refuse("repeat_penalty", "a finite number > 0 (1 = off)", params.repeat_penalty);
  }
  if (!std::isfinite(params.frequency_penalty)) refuse("frequency_penalty", "finite", params.frequency_penalty);
  if (!std::isfinite(params.presence_penalty)) refuse("presence_penalty", "finite", params.presence_penalty);
  for (size_t i = 0; i < params.order.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (params.order[i] == params.order[j]) {
        throw std::invalid_argument("sampling: stage '" + std::string(stage_name(params.order[i])) +
                                    "' appears more than once in the order");
      }
    }
  }
}

}  // namespace peak::sampling
