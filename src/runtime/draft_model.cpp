#include "runtime/draft_model.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace peak::runtime {

DraftModel::DraftModel(const model::Model& model, const ContextParams& params) : ctx_(model, params) {
  tokens_.reserve(static_cast<size_t>(ctx_.n_ctx()));
}

void DraftModel::check_vocabulary(const model::Model& target) {
  if (accepted_target_ == &target) return;
  const tokenizer::Vocab& mine = model().tokenizer().vocab();
  const tokenizer::Vocab& theirs = target.tokenizer().vocab();
  if (mine.n_tokens() != theirs.n_tokens()) {
    throw std::invalid_argument("the draft model's vocabulary has " + std::to_string(mine.n_tokens()) +
                                " tokens, the target's " + std::to_string(theirs.n_tokens()) +
                                ": a draft model must read the target's vocabulary");
  }
  for (int32_t id = 0; id < mine.n_tokens(); ++id) {
    if (mine.token(id).text != theirs.token(id).text) {
      throw std::invalid_argument("the draft model's token " + std::to_string(id) + " is not the target's (\"" +
                                  mine.token(id).text + "\" against \"" + theirs.token(id).text +
                                  "\"): a draft model must read the target's vocabulary");
    }
  }
  accepted_target_ = &target;
}

void DraftModel::follow(const int32_t* text, size_t n, int64_t room) {
  if (n == 0) throw std::invalid_argument("a draft follows a text of at least one token");
  const auto cells = static_cast<size_t>(std::max<int64_t>(ctx_.n_ctx() - std::max<int64_t>(room, 0), 1));
  // The whole text when it fits; else a window of its end, half the cells, so
  // that it can grow into the other half before it moves again.
  const bool window_fits = window_start_ < n && n - window_start_ <= cells;
  if (n <= cells) {
    window_start_ = 0;
  } else if (!window_fits) {
    window_start_ = n - std::max<size_t>(cells / 2, 1);
  }
  const int32_t* window = text + window_start_;
  const size_t length = n - window_start_;
  size_t kept = 0;
  while (kept < tokens_.size() && kept < length && tokens_[kept] == window[kept]) ++kept;
  // logits() must follow the window's last token: evaluate it again when it is
  // held but other tokens come after it.
  if (kept == length && tokens_.size() == length) return;
  if (kept == length) --kept;
  ctx_.kv().drop_last(static_cast<int64_t>(tokens_.size() - kept));
  tokens_.resize(kept);
  ctx_.eval(window + kept, static_cast<int64_t>(length - kept));
  tokens_.insert(tokens_.end(), window + kept, window + length);
}

void DraftModel::push(int32_t token) {
  ctx_.eval(&token, 1);
  tokens_.push_back(token);
}

}  // namespace peak::runtime
