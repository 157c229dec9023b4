// Text generation on a context: evaluate a prompt, then sample, stream and
// evaluate one token at a time until an end-of-generation token, a token limit,
// a full context, the caller's callback or an abort flag stops it. Under a
// grammar (the sampler's), also once the text is a whole string of the grammar
// that nothing can follow.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sampling/sampler_chain.h"
#include "runtime/context.h"

namespace peak::runtime {

enum class StopReason {
  EndOfGeneration,  // the model produced an end-of-generation token (not streamed)
  MaxTokens,        // max_tokens were generated
  ContextFull,      // no cell left for the next token
  Callback,         // on_text returned false
  Aborted,          // *cancel or *abort_flag became non-zero
  // The sampler's grammar: the text is a whole string of it and nothing can
  // follow (its last token is not evaluated, as with Callback). The C API
  // reports it as PEAK_STOP_EOG: the text ended where it had to.
  GrammarEnd,
};

struct GenerateOptions {
  int32_t max_tokens = 256;   // < 0: until another reason stops
  bool stop_at_eog = true;
  // Receives the generated text in order, always whole UTF-8 characters, in a
  // string (so NUL-terminated, as the C API hands it on); returns false to stop.
  // May be empty. Control tokens write nothing, except those the sampler
  // preserves (SamplerParams::preserved_tokens, e.g. "<|tool_call|>"): their
  // text, as the tool-call parser reads it.
  std::function<bool(const std::string& text)> on_text;
  // Both checked before each token; generation stops once either is non-zero.
  // While the prompt is evaluated they are also checked between its batches
  // and between the nodes of each: the prompt's evaluation then throws
  // Cancelled, leaving the context as it was (see generate()).
  // `cancel` is for callers inside the library (another thread stores to it).
  const std::atomic<int>* cancel = nullptr;
  // The C API's flag (peak_generate_params::abort_flag): read with an atomic
  // load, so another thread may set it with an atomic store (C11 atomic_store on
  // an int, __atomic_store_n) and a signal handler on the generating thread with
  // a plain store.
  const volatile int* abort_flag = nullptr;
  // Speculative decoding by prompt lookup (runtime/prompt_lookup.h), 0: off.
  // After each token the longest n-gram of up to lookup_ngram tokens that ends
  // the text so far (lookup_history, the prompt, what was generated) and
  // occurred before proposes the tokens that followed it, at most draft_max;
  // one pass evaluates the token and the draft, and the sampler takes each of
  // the draft's rows of logits in turn while its tokens are the ones sampled.
  // Every token is sampled from the logits it would be sampled from without
  // drafts, by the same sampler calls in the same order, so the output is
  // the same text (up to the float sums of a batch against a single token's)
  // at any temperature. The context needs max_logit_rows >= 2 (draft_max + 1
  // for whole drafts), else std::invalid_argument.
  int32_t lookup_ngram = 0;
  int32_t draft_max = 4;
  // Tokens the context holds before the prompt, searched too (a chat's earlier
  // turns); may be null.
  const std::vector<int32_t>* lookup_history = nullptr;
};

struct GenerateResult {
  int32_t n_prompt = 0;      // tokens evaluated for the prompt
  int32_t n_generated = 0;   // tokens sampled (the end-of-generation token included)
  StopReason reason = StopReason::MaxTokens;
  double prompt_seconds = 0;
  double generate_seconds = 0;
  std::vector<int32_t> tokens;  // the sampled tokens
  int32_t n_drafted = 0;        // tokens proposed by prompt lookup
  int32_t n_accepted = 0;       // of them, those sampled (acceptance: n_accepted / n_drafted)
};

// Appends `prompt` to the context (accepting it into the sampler's penalty
// window, as llama.cpp does, not into its grammar) and generates after it. A
// grammar goes on from the sampler's state: reset or restart it for a new
// text. Throws what Context::eval
// throws when the prompt itself does not fit or holds bad ids, and Cancelled
// when a stop was asked before the prompt's last batch was evaluated: the
// context and the sampler are then as before the call. A stop asked later
// ends the generation with StopReason::Aborted.
GenerateResult generate(Context& ctx, sampling::SamplerChain& sampler, const std::vector<int32_t>& prompt,
                        const GenerateOptions& options);

}  // namespace peak::runtime
