// A draft model for speculative decoding: a smaller model of the target's
// vocabulary proposes the next tokens, and the target verifies them in one
// pass (runtime::generate). It has a context of its own and knows the tokens
// that context holds, so each generation evaluates only what is new there: the
// draft follows the target's text (the conversation, the prompt, what was
// generated) through the longest common prefix. What it holds never changes
// the target's text, only how many of its drafts are kept.
//
// Not thread-safe: one generation uses it at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"

namespace peak::runtime {

class DraftModel {
 public:
  // Throws what Context's constructor throws. `model` outlives this object.
  DraftModel(const model::Model& model, const ContextParams& params);
  DraftModel(const DraftModel&) = delete;
  DraftModel& operator=(const DraftModel&) = delete;

  const model::Model& model() const { return ctx_.model(); }
  Context& context() { return ctx_; }
  // The tokens its context holds, in cell order.
  const std::vector<int32_t>& tokens() const { return tokens_; }

  // Throws std::invalid_argument, naming the first difference, unless `target`
  // reads the same vocabulary: as many tokens, each with the same text, so the
  // ids of one are the ids of the other. Remembers the last target it accepted.
  void check_vocabulary(const model::Model& target);

  // Makes the context hold the end of text[0..n) (n >= 1) with `room` cells
  // left for drafting, keeping the longest common prefix of what it holds, and
  // evaluates the rest; logits() then follows text[n - 1]. When the text does
  // not fit, the context holds a window of its end, kept while the text grows
  // into the cells left (so that only the new tokens are evaluated).
  void follow(const int32_t* text, size_t n, int64_t room);
  // Evaluates one token after those it holds.
  void push(int32_t token);
  const float* logits() const { return ctx_.logits(); }

 private:
  Context ctx_;
  std::vector<int32_t> tokens_;  // what the cells hold
  size_t window_start_ = 0;      // index in the followed text of tokens_[0]
  const model::Model* accepted_target_ = nullptr;
};

}  // namespace peak::runtime
