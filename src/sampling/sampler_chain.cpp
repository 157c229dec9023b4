#include "sampling/sampler_chain.h"

#include <stdexcept>
#include <string>

#include "sampling/selection.h"
#include "sampling/truncation.h"

namespace peak::sampling {

namespace {

int32_t checked_vocab_size(int32_t n_vocab) {
  if (n_vocab <= 0) {
    throw std::invalid_argument("sampling: n_vocab must be positive, got " + std::to_string(n_vocab));
  }
  return n_vocab;
}

const SamplerParams& checked(const SamplerParams& params) {
  validate(params);
  return params;
}

}  // namespace

SamplerChain::SamplerChain(int32_t n_vocab, const SamplerParams& params)
    : n_vocab_(checked_vocab_size(n_vocab)),
      params_(checked(params)),
      buffer_(static_cast<size_t>(n_vocab)),
      penalty_window_(n_vocab, params.penalty_last_n),
      rng_(params.seed) {}

int32_t SamplerChain::sample(const float* logits) {
  candidates_ = load_logits(logits, n_vocab_, buffer_.data());
  if (!has_selectable(candidates_)) {
    throw std::invalid_argument("sampling: every logit is NaN or -inf, no token can be chosen");
  }
  if (params_.temperature == 0.0f) {
    // Greedy: the truncation stages never remove the highest logit, so only the
    // penalties can change the choice.
    for (SamplerStage stage : params_.order) {
      if (stage == SamplerStage::Penalties) run_stage(stage);
    }
    return select_greedy(candidates_);
  }
  for (SamplerStage stage : params_.order) run_stage(stage);
  return select_from_distribution(candidates_, rng_);
}

void SamplerChain::run_stage(SamplerStage stage) {
  switch (stage) {
    case SamplerStage::Penalties:
      apply_penalties(candidates_, penalty_window_,
                      {params_.repeat_penalty, params_.frequency_penalty, params_.presence_penalty});
      break;
    case SamplerStage::TopK: apply_top_k(candidates_, params_.top_k); break;
    case SamplerStage::TopP: apply_top_p(candidates_, params_.top_p); break;
    case SamplerStage::MinP: apply_min_p(candidates_, params_.min_p); break;
    case SamplerStage::Temperature: apply_temperature(candidates_, params_.temperature); break;
  }
}

void SamplerChain::accept(int32_t token) { penalty_window_.accept(token); }

void SamplerChain::take_penalty_window(const SamplerChain& other) {
  if (other.n_vocab_ != n_vocab_ || other.params_.penalty_last_n != params_.penalty_last_n) {
    throw std::invalid_argument("sampling: a penalty window of another vocabulary or length (" +
                                std::to_string(other.params_.penalty_last_n) + " tokens, this chain's " +
                                std::to_string(params_.penalty_last_n) + ")");
  }
  penalty_window_ = other.penalty_window_;  // buffers of the same sizes: copied in place
}

void SamplerChain::reset() {
  penalty_window_.reset();
  rng_ = Pcg32(params_.seed);
}

}  // namespace peak::sampling
