#include "runtime/generator.h"

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

GenerateResult generate(Context& ctx, sampling::SamplerChain& sampler, const std::vector<int32_t>& prompt,
                        const GenerateOptions& options) {
  const tokenizer::Tokenizer& tok = ctx.model().tokenizer();
  GenerateResult result;
  if (options.max_tokens > 0) result.tokens.reserve(static_cast<size_t>(options.max_tokens));

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
    const int32_t token = sampler.sample(ctx.logits());
    sampler.accept(token);
    result.tokens.push_back(token);
    ++result.n_generated;
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
    if (ctx.kv().free_cells() == 0) {
      result.reason = StopReason::ContextFull;
      break;
    }
    ctx.eval(&token, 1);
  }
  // An unfinished character at the end comes out as U+FFFD, never dropped.
  if (result.reason != StopReason::Callback) emit(utf8.finish());
  result.generate_seconds = stopwatch.seconds();
  return result;
}

}  // namespace peak::runtime
