#include "sampling/sampler_chain.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "sampling/selection.h"
#include "sampling/speculative_sampling.h"
#include "sampling/truncation.h"

namespace peak::sampling {

namespace {

// The random stream of a chain that drafts (split_random_stream): any but Pcg32::kDefaultStream.
constexpr uint64_t kDraftStream = 0x5eedd4af7;

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

// A grammar and preserved tokens read the vocabulary.
void check_vocabulary(int32_t n_vocab, const SamplerParams& params,
                      const std::shared_ptr<const GrammarVocabulary>& vocabulary) {
  if (!params.grammar && params.preserved_tokens.empty()) return;
  if (!vocabulary || vocabulary->size() != n_vocab) {
    throw std::invalid_argument(std::string("sampling: ") +
                                (params.grammar ? "a grammar needs" : "preserved tokens need") +
                                " the vocabulary of the chain's " + std::to_string(n_vocab) + " tokens" +
                                (vocabulary ? ", got one of " + std::to_string(vocabulary->size()) : std::string()));
  }
  vocabulary->check_preserved(params.preserved_tokens);
}

std::optional<GrammarStage> grammar_stage(int32_t n_vocab, const SamplerParams& params,
                                          const std::shared_ptr<const GrammarVocabulary>& vocabulary) {
  check_vocabulary(n_vocab, params, vocabulary);
  if (!params.grammar) return std::nullopt;
  return GrammarStage(params.grammar, vocabulary, params.preserved_tokens);
}

}  // namespace

SamplerChain::SamplerChain(int32_t n_vocab, const SamplerParams& params,
                           std::shared_ptr<const GrammarVocabulary> vocabulary)
    : n_vocab_(checked_vocab_size(n_vocab)),
      params_(checked(params)),
      buffer_(static_cast<size_t>(n_vocab)),
      penalty_window_(n_vocab, params.penalty_last_n),
      rng_(params.seed),
      vocabulary_(std::move(vocabulary)),
      grammar_(grammar_stage(n_vocab, params, vocabulary_)) {}

void SamplerChain::load(const float* logits) {
  candidates_ = load_logits(logits, n_vocab_, buffer_.data());
  if (!has_selectable(candidates_)) {
    throw std::invalid_argument("sampling: every logit is NaN or -inf, no token can be chosen");
  }
}

int32_t SamplerChain::sample(const float* logits) {
  load(logits);
  if (params_.temperature == 0.0f) {
    // Greedy: the truncation stages never remove the highest logit, so only the
    // penalties (and the grammar) can change the choice.
    for (SamplerStage stage : params_.order) {
      if (stage == SamplerStage::Penalties) run_stage(stage);
    }
    if (GrammarStage* grammar = active_grammar()) grammar->keep_best_allowed(candidates_, 1);
    return select_greedy(candidates_);
  }
  run_stages();
  return select_from_distribution(candidates_, rng_);
}

int32_t SamplerChain::sample_against_draft(const float* logits, int32_t drafted, const float* draft_probabilities) {
  if (params_.temperature == 0.0f) return sample(logits);
  load(logits);
  run_stages();
  softmax(candidates_);
  return keep_or_resample(candidates_, drafted, draft_probabilities, rng_);
}

float SamplerChain::last_probability(int32_t token) {
  if (params_.temperature == 0.0f) softmax(candidates_);  // sample() chose by logit alone
  for (size_t i = 0; i < candidates_.size; ++i) {
    if (candidates_.data[i].id == token) return candidates_.data[i].p;
  }
  return 0.0f;
}

void SamplerChain::split_random_stream() {
  const uint64_t seed = (static_cast<uint64_t>(rng_.next_u32()) << 32u) | rng_.next_u32();
  rng_ = Pcg32(seed, kDraftStream);
}

// The grammar goes first. The penalties change the logits of single tokens, so
// they may run before it; a top-k after them takes the k best allowed
// lazily; any other stage needs the allowed candidates first.
void SamplerChain::run_stages() {
  GrammarStage* grammar = active_grammar();
  for (SamplerStage stage : params_.order) {
    if (grammar && stage != SamplerStage::Penalties) {
      if (stage == SamplerStage::TopK && params_.top_k > 0) {
        grammar->keep_best_allowed(candidates_, static_cast<size_t>(params_.top_k));
      } else {
        grammar->keep_allowed(candidates_);
      }
      grammar = nullptr;
    }
    run_stage(stage);
  }
  if (grammar) grammar->keep_allowed(candidates_);
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

void SamplerChain::accept(int32_t token) {
  if (token < 0 || token >= n_vocab_) {
    throw std::out_of_range("sampling: accepted token " + std::to_string(token) + " is outside the vocabulary of " +
                            std::to_string(n_vocab_) + " tokens");
  }
  if (GrammarStage* grammar = active_grammar()) grammar->accept(token);
  penalty_window_.accept(token);
}

void SamplerChain::accept_prompt(int32_t token) { penalty_window_.accept(token); }

bool SamplerChain::preserves(int32_t token) const {
  return std::binary_search(params_.preserved_tokens.begin(), params_.preserved_tokens.end(), token);
}

GrammarStage* SamplerChain::active_grammar() {
  if (!grammar_) return nullptr;
  switch (phase_) {
    case GrammarPhase::Answer: return &*grammar_;
    case GrammarPhase::Held: return nullptr;
    case GrammarPhase::AnswerOrReasoning: return &*answer_or_reasoning_;
    case GrammarPhase::AnswerAfterReasoning: return &*answer_after_reasoning_;
  }
  return nullptr;
}

void SamplerChain::set_reasoning_grammars(const Grammar& opening, const Grammar& separator) {
  if (!grammar_) return;
  const Grammar& answer = *grammar_->grammar();
  answer_or_reasoning_.emplace(Grammar::either(answer, opening), vocabulary_, params_.preserved_tokens);
  answer_after_reasoning_.emplace(Grammar::then(separator, answer), vocabulary_, params_.preserved_tokens);
}

void SamplerChain::enter_grammar_phase(GrammarPhase phase) {
  if (!grammar_) return;
  if ((phase == GrammarPhase::AnswerOrReasoning || phase == GrammarPhase::AnswerAfterReasoning) &&
      !answer_or_reasoning_) {
    throw std::logic_error("sampling: a reasoning phase of the grammar before set_reasoning_grammars()");
  }
  phase_ = phase;
  if (GrammarStage* grammar = active_grammar()) grammar->reset();
}

void SamplerChain::accept_grammar_text(std::string_view text) {
  if (GrammarStage* grammar = active_grammar()) grammar->accept_text(text);
}

bool SamplerChain::grammar_finished() const {
  const GrammarStage* grammar = active_grammar();
  return grammar && phase_ != GrammarPhase::AnswerOrReasoning && grammar->finished();
}

const GrammarMatcher::State* SamplerChain::grammar_state() const {
  const GrammarStage* grammar = active_grammar();
  return grammar ? &grammar->state() : nullptr;
}

void SamplerChain::restore_grammar(const GrammarMatcher::State& state) {
  if (GrammarStage* grammar = active_grammar()) grammar->restore(state);
}

void SamplerChain::take_penalty_window(const SamplerChain& other) {
  if (other.n_vocab_ != n_vocab_ || other.params_.penalty_last_n != params_.penalty_last_n) {
    throw std::invalid_argument("sampling: a penalty window of another vocabulary or length (" +
                                std::to_string(other.params_.penalty_last_n) + " tokens, this chain's " +
                                std::to_string(params_.penalty_last_n) + ")");
  }
  penalty_window_ = other.penalty_window_;  // buffers of the same sizes: copied in place
  const bool phase_known =
      other.phase_ == GrammarPhase::Answer || other.phase_ == GrammarPhase::Held || answer_or_reasoning_.has_value();
  if (grammar_ && other.grammar_ && other.grammar_->grammar() == grammar_->grammar() && phase_known) {
    phase_ = other.phase_;
    if (const GrammarMatcher::State* state = other.grammar_state()) active_grammar()->restore(*state);
  }
}

void SamplerChain::reset() {
  penalty_window_.reset();
  rng_ = Pcg32(params_.seed);
  restart_grammar();
}

}  // namespace peak::sampling
