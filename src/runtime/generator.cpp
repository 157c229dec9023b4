#include "runtime/generator.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "runtime/prompt_lookup.h"
#include "runtime/stopwatch.h"
#include "tokenizer/utf8.h"

namespace peak::runtime {
namespace {

bool stop_asked(const GenerateOptions& options) {
  return (options.cancel && options.cancel->load(std::memory_order_relaxed) != 0) ||
         (options.abort_flag && __atomic_load_n(options.abort_flag, __ATOMIC_RELAXED) != 0);
}

bool stop_asked_of(const void* options) { return stop_asked(*static_cast<const GenerateOptions*>(options)); }

}  // namespace

core::Cancellation GenerateOptions::cancellation() const { return core::Cancellation(stop_asked_of, this); }

namespace {

// A draft model's distribution at each token of its draft, for speculative
// sampling: dense rows of n_vocab probabilities, and the ids set in each so
// that clearing a row costs its candidates, not the vocabulary.
class DraftDistributions {
 public:
  void reserve(size_t rows, int64_t n_vocab) {
    n_vocab_ = static_cast<size_t>(n_vocab);
    dense_.assign(rows * n_vocab_, 0.0f);
    set_.resize(rows);
    for (std::vector<int32_t>& ids : set_) ids.reserve(n_vocab_);
  }
  void write(size_t row, const sampling::Candidates& c) {
    float* dense = dense_.data() + row * n_vocab_;
    for (size_t i = 0; i < c.size; ++i) {
      dense[c.data[i].id] = c.data[i].p;
      set_[row].push_back(c.data[i].id);
    }
  }
  const float* row(size_t row) const { return dense_.data() + row * n_vocab_; }
  void clear() {
    for (size_t r = 0; r < set_.size(); ++r) {
      for (int32_t id : set_[r]) dense_[r * n_vocab_ + static_cast<size_t>(id)] = 0.0f;
      set_[r].clear();
    }
  }

 private:
  size_t n_vocab_ = 0;
  std::vector<float> dense_;
  std::vector<std::vector<int32_t>> set_;
};

// Speculative decoding's state during one generation: the text the drafts
// come from, and the last pass's draft, whose cells stay until the sampler
// has taken or refused each of its tokens (the rows of logits after them are
// the next samples').
class Drafts {
 public:
  Drafts(Context& ctx, sampling::SamplerChain& sampler, const std::vector<int32_t>& prompt,
         const GenerateOptions& options)
      : ctx_(ctx), sampler_(sampler), ngram_(options.lookup_ngram), draft_model_(options.draft_model) {
    if (ngram_ <= 0 && !draft_model_) return;
    const std::string what = ngram_ > 0 ? "prompt lookup" : "a draft model";
    if (ngram_ > 0 && draft_model_) {
      throw std::invalid_argument("prompt lookup and a draft model both draft: use one of them");
    }
    if (options.draft_max < 1) {
      throw std::invalid_argument("draft_max is " + std::to_string(options.draft_max) + ": " + what +
                                  " drafts 1 or more tokens");
    }
    if (!(options.draft_p_min >= 0.0f && options.draft_p_min <= 1.0f)) {
      throw std::invalid_argument("draft_p_min is " + std::to_string(options.draft_p_min) +
                                  ": a probability, in [0, 1]");
    }
    if (ctx.max_logit_rows() < 2) {
      throw std::invalid_argument(
          "speculative decoding verifies a token and its draft in one pass: the context needs max_logit_rows of at "
          "least 2 (draft_max + 1), not " +
          std::to_string(ctx.max_logit_rows()));
    }
    max_draft_ = static_cast<size_t>(std::min<int64_t>(options.draft_max, ctx.max_logit_rows() - 1));
    if (options.history) {
      seen_ = *options.history;
    } else if (draft_model_ && ctx.kv().used() > 0) {
      seen_ = draft_model_->tokens();  // the text it followed last: this context, continued
    }
    seen_.insert(seen_.end(), prompt.begin(), prompt.end());
    // Every token generated takes a cell, but the last: no growth per token.
    seen_.reserve(seen_.size() + static_cast<size_t>(ctx.kv().free_cells()) + 1);
    batch_.resize(max_draft_ + 1);
    rows_.resize((max_draft_ + 1) * static_cast<size_t>(ctx.n_vocab()));
    if (draft_model_) {
      draft_model_->check_vocabulary(ctx.model());
      draft_sampler_.emplace(sampler);
      draft_sampler_->split_random_stream();
      p_min_ = options.draft_p_min;
      stochastic_ = sampler.params().temperature > 0.0f;
      if (stochastic_) distributions_.reserve(max_draft_, ctx.n_vocab());
    }
  }
  Drafts(const Drafts&) = delete;
  Drafts& operator=(const Drafts&) = delete;
  // The cells of a draft the sampler did not reach go, whatever ends the generation.
  ~Drafts() { drop_unconfirmed(); }

  // The next token, from the logits it would be sampled from without drafts:
  // a token of a draft model's draft at temperature > 0 is kept or refused by
  // speculative sampling.
  int32_t sample() {
    const float* logits = drafted_ > 0 ? row_after_confirmed() : ctx_.logits();
    if (stochastic_ && confirmed_ < drafted_) {
      return sampler_.sample_against_draft(logits, batch_[confirmed_ + 1], distributions_.row(confirmed_));
    }
    return sampler_.sample(logits);
  }
  void note_sampled(int32_t token) {
    if (ngram_ > 0 || draft_model_) seen_.push_back(token);
  }
  // The sampled token is the next one of the draft: its cell holds it already.
  bool confirm(int32_t token) {
    if (confirmed_ >= drafted_ || batch_[confirmed_ + 1] != token) return false;
    ++confirmed_;
    return true;
  }
  // Before `token` is evaluated: the rest of the draft was refused.
  void drop_unconfirmed() {
    if (drafted_ == 0) return;
    if (confirmed_ < drafted_) {
      ctx_.drop_last(static_cast<int64_t>(drafted_ - confirmed_), row_after_confirmed());
    }
    if (stochastic_) distributions_.clear();
    drafted_ = confirmed_ = 0;
  }
  // Evaluates `token`, with a draft after it when one is proposed (at most
  // `room` tokens). Returns how many tokens it drafted.
  size_t evaluate(int32_t token, int64_t room) {
    const size_t limit = std::min(max_draft_, static_cast<size_t>(std::max<int64_t>(room, 0)));
    size_t n = 0;
    if (limit > 0 && ngram_ > 0) n = draft_by_lookup(seen_, ngram_, limit, batch_.data() + 1);
    if (limit > 0 && draft_model_) n = draft_with_model(limit);
    if (n == 0) {
      ctx_.eval(&token, 1);
      return 0;
    }
    batch_[0] = token;
    const auto count = static_cast<int64_t>(n + 1);
    ctx_.eval_last_rows(batch_.data(), count, count, rows_.data());
    drafted_ = n;
    confirmed_ = 0;
    return n;
  }

 private:
  // The logits after the last confirmed token of the draft (the token before it when none is).
  const float* row_after_confirmed() const { return rows_.data() + confirmed_ * static_cast<size_t>(ctx_.n_vocab()); }
  // The draft model follows the text to its last token (the one sampled) and
  // drafts after it, sampling as the target's sampler would from where it
  // stands, until `limit` tokens or a choice it is not confident of.
  size_t draft_with_model(size_t limit) {
    // Cells for the draft's tokens but the last, which is never evaluated there.
    draft_model_->follow(seen_.data(), seen_.size(), static_cast<int64_t>(limit));
    draft_sampler_->take_penalty_window(sampler_);
    size_t n = 0;
    while (n < limit) {
      const int32_t token = draft_sampler_->sample(draft_model_->logits());
      if (draft_sampler_->last_probability(token) < p_min_) break;
      batch_[n + 1] = token;
      if (stochastic_) distributions_.write(n, draft_sampler_->last_candidates());
      if (++n == limit) break;
      draft_sampler_->accept(token);
      draft_model_->push(token);
    }
    return n;
  }

  Context& ctx_;
  sampling::SamplerChain& sampler_;
  const int32_t ngram_;
  DraftModel* const draft_model_;
  std::optional<sampling::SamplerChain> draft_sampler_;
  float p_min_ = 0.0f;
  bool stochastic_ = false;  // a draft model's tokens, drawn at temperature > 0
  DraftDistributions distributions_;
  size_t max_draft_ = 0;
  std::vector<int32_t> seen_;   // history, the prompt, the tokens sampled
  std::vector<int32_t> batch_;  // the token evaluated, then its draft
  std::vector<float> rows_;     // the logits after each token of batch_
  size_t drafted_ = 0;          // draft tokens in the cells
  size_t confirmed_ = 0;        // of them, those sampled so far
};

}  // namespace

GenerateResult generate(Context& ctx, sampling::SamplerChain& sampler, const std::vector<int32_t>& prompt,
                        const GenerateOptions& options) {
  const tokenizer::Tokenizer& tok = ctx.model().tokenizer();
  GenerateResult result;
  if (options.max_tokens > 0) result.tokens.reserve(static_cast<size_t>(options.max_tokens));
  Drafts drafts(ctx, sampler, prompt, options);  // checks the options before anything is evaluated

  Stopwatch stopwatch;
  const core::Cancellation cancel = options.cancellation();
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()), nullptr,
           options.cancel || options.abort_flag ? &cancel : nullptr);
  for (int32_t t : prompt) sampler.accept_prompt(t);
  result.n_prompt = static_cast<int32_t>(prompt.size());
  result.prompt_seconds = stopwatch.seconds();

  stopwatch.restart();
  tokenizer::Utf8StreamDecoder utf8;
  auto emit = [&](const std::string& text) { return text.empty() || !options.on_text || options.on_text(text); };
  // A grammar whose text was complete already (and could not go on) writes nothing.
  if (sampler.grammar_finished()) result.reason = StopReason::GrammarEnd;
  while (result.reason != StopReason::GrammarEnd) {
    if (stop_asked(options)) {
      result.reason = StopReason::Aborted;
      break;
    }
    if (options.max_tokens >= 0 && result.n_generated >= options.max_tokens) {
      result.reason = StopReason::MaxTokens;
      break;
    }
    const int32_t token = drafts.sample();
    sampler.accept(token);
    result.tokens.push_back(token);
    ++result.n_generated;
    drafts.note_sampled(token);
    if (options.stop_at_eog && tok.is_eog(token)) {
      result.reason = StopReason::EndOfGeneration;
      break;
    }
    if (!emit(utf8.push(tok.token_to_piece(token, /*render_special=*/sampler.preserves(token))))) {
      result.reason = StopReason::Callback;
      break;
    }
    if (sampler.grammar_finished()) {
      result.reason = StopReason::GrammarEnd;
      break;
    }
    if (drafts.confirm(token)) {
      ++result.n_accepted;
      continue;
    }
    drafts.drop_unconfirmed();
    if (ctx.kv().free_cells() == 0) {
      result.reason = StopReason::ContextFull;
      break;
    }
    // A draft longer than the samples left, or than the cells after the token, would be evaluated for nothing.
    const int64_t samples_left = options.max_tokens >= 0 ? options.max_tokens - result.n_generated : INT64_MAX;
    const int64_t room = std::min(samples_left, ctx.kv().free_cells() - 1);
    result.n_drafted += static_cast<int32_t>(drafts.evaluate(token, room));
  }
  drafts.drop_unconfirmed();
  // An unfinished character at the end comes out as U+FFFD, never dropped.
  if (result.reason != StopReason::Callback) emit(utf8.finish());
  result.generate_seconds = stopwatch.seconds();
  return result;
}

}  // namespace peak::runtime
