#include "runtime/generator.h"

#include <algorithm>
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

// Prompt lookup's state during one generation: the text searched, and the
// last pass's draft, whose cells stay until the sampler has taken or refused
// each of its tokens (the rows of logits after them are the next samples').
class Drafts {
 public:
  Drafts(Context& ctx, const std::vector<int32_t>& prompt, const GenerateOptions& options)
      : ctx_(ctx), ngram_(options.lookup_ngram) {
    if (ngram_ <= 0) return;
    if (options.draft_max < 1) {
      throw std::invalid_argument("draft_max is " + std::to_string(options.draft_max) +
                                  ": prompt lookup drafts 1 or more tokens");
    }
    if (ctx.max_logit_rows() < 2) {
      throw std::invalid_argument(
          "prompt lookup verifies a token and its draft in one pass: the context needs max_logit_rows of at least 2 "
          "(draft_max + 1), not " +
          std::to_string(ctx.max_logit_rows()));
    }
    max_draft_ = static_cast<size_t>(std::min<int64_t>(options.draft_max, ctx.max_logit_rows() - 1));
    if (options.lookup_history) seen_ = *options.lookup_history;
    seen_.insert(seen_.end(), prompt.begin(), prompt.end());
    // Every token generated takes a cell, but the last: no growth per token.
    seen_.reserve(seen_.size() + static_cast<size_t>(ctx.kv().free_cells()) + 1);
    batch_.resize(max_draft_ + 1);
    rows_.resize((max_draft_ + 1) * static_cast<size_t>(ctx.n_vocab()));
  }
  Drafts(const Drafts&) = delete;
  Drafts& operator=(const Drafts&) = delete;
  // The cells of a draft the sampler did not reach go, whatever ends the generation.
  ~Drafts() { drop_unconfirmed(); }

  // The logits the next token is sampled from.
  const float* logits() const {
    return drafted_ > 0 ? rows_.data() + confirmed_ * static_cast<size_t>(ctx_.n_vocab()) : ctx_.logits();
  }
  void note_sampled(int32_t token) {
    if (ngram_ > 0) seen_.push_back(token);
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
    if (confirmed_ < drafted_) ctx_.drop_last(static_cast<int64_t>(drafted_ - confirmed_), logits());
    drafted_ = confirmed_ = 0;
  }
  // Evaluates `token`, with a draft after it when the text so far proposes
  // one (at most `room` tokens). Returns how many tokens it drafted.
  size_t evaluate(int32_t token, int64_t room) {
    const size_t limit = std::min(max_draft_, static_cast<size_t>(std::max<int64_t>(room, 0)));
    const size_t n = ngram_ > 0 ? draft_by_lookup(seen_, ngram_, limit, batch_.data() + 1) : 0;
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
  Context& ctx_;
  const int32_t ngram_;
  size_t max_draft_ = 0;
  std::vector<int32_t> seen_;   // lookup_history, the prompt, the tokens sampled
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
  Drafts drafts(ctx, prompt, options);  // checks the options before anything is evaluated

  Stopwatch stopwatch;
  const core::Cancellation cancel(stop_asked_of, &options);
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
    const int32_t token = sampler.sample(drafts.logits());
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
