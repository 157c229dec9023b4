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
#include "runtime/draft_model.h"

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
  // A Cancellation polling both (core/executor.h), for evaluations of a
  // caller's own before generate() (a prompt's pictures).
  core::Cancellation cancellation() const;
  // Speculative decoding: after each token, a draft of up to draft_max tokens
  // (and the cells after the token allow) is evaluated with it in one pass,
  // and the sampler takes each of the draft's rows of logits in turn while
  // its tokens are kept. The context needs max_logit_rows >= 2 (draft_max + 1
  // for whole drafts), else std::invalid_argument. The draft comes from one of:
  //  - prompt lookup (runtime/prompt_lookup.h), lookup_ngram > 0: the longest
  //    n-gram of up to lookup_ngram tokens that ends the text so far (history,
  //    the prompt, what was generated) and occurred before proposes the
  //    tokens that followed it;
  //  - a draft model (runtime/draft_model.h) of the target's vocabulary,
  //    following the same text. It samples with a copy of the sampler (its
  //    penalties and grammar state, a random stream of its own) and drafts
  //    while its probability of its choice is at least draft_p_min.
  // Drafts change the cost, not the output's distribution. Prompt lookup's drafts, and a draft
  // model's at temperature 0, are fixed tokens: every token is sampled by the
  // same sampler call from the same logits as without drafts (computed in a
  // batch instead of alone: equal up to the order of float sums), so the text
  // is the same. At temperature > 0 a draft model's tokens are kept or
  // refused by speculative sampling (sampling/speculative_sampling.h): the
  // text has the distribution it has without drafts, but other draws.
  int32_t lookup_ngram = 0;
  DraftModel* draft_model = nullptr;  // not with lookup_ngram > 0
  int32_t draft_max = 4;
  float draft_p_min = 0.75f;  // in [0, 1]
  // Tokens the context holds before the prompt (a chat's earlier turns), that
  // prompt lookup searches and a draft model follows; may be null. Without
  // them a draft model takes the context as holding what the draft model
  // followed last (the same context, continued) unless the context is empty.
  const std::vector<int32_t>* history = nullptr;
};

struct GenerateResult {
  int32_t n_prompt = 0;      // tokens evaluated for the prompt
  int32_t n_generated = 0;   // tokens sampled (the end-of-generation token included)
  StopReason reason = StopReason::MaxTokens;
  double prompt_seconds = 0;
  double generate_seconds = 0;
  std::vector<int32_t> tokens;  // the sampled tokens
  int32_t n_drafted = 0;        // tokens drafted (prompt lookup or a draft model)
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
