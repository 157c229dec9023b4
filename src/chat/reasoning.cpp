#include "chat/reasoning.h"

#include <algorithm>
#include <utility>

#include "sampling/gbnf_text.h"

namespace peak::chat {

size_t partial_marker_at_end(std::string_view text, std::string_view marker) {
  if (marker.empty()) return 0;
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

namespace {

size_t leading_newlines(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && text[n] == '\n') ++n;
  return n;
}

size_t leading_whitespace(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && (text[n] == ' ' || text[n] == '\n' || text[n] == '\t' || text[n] == '\r')) ++n;
  return n;
}

}  // namespace

// Not the whitespace the splitter skips before the opening marker: a model
// could write it without end and never decide. The newlines leading_newlines()
// drops after the closing one.
std::shared_ptr<const sampling::Grammar> reasoning_opening_grammar(const ReasoningMarkers& markers) {
  return sampling::Grammar::parse("root ::= " + sampling::gbnf_literal(markers.open) + " .*");
}

std::shared_ptr<const sampling::Grammar> reasoning_separator_grammar() {
  return sampling::Grammar::parse("root ::= \"\\n\"*");
}

ReasoningSplitter::ReasoningSplitter(ReasoningMarkers markers, bool opened)
    : markers_(std::move(markers)), state_(opened ? State::Reasoning : State::Start) {}

bool ReasoningSplitter::emit_piece(TextKind kind, std::string text, const KindedTextFn& emit) {
  if (text.empty()) return true;
  (kind == TextKind::Reasoning ? reasoning_ : answer_) += text;
  return !emit || emit(kind, text);
}

bool ReasoningSplitter::feed(std::string_view text, const KindedTextFn& emit) {
  pending_.append(text);
  bool go_on = true;
  while (go_on && !pending_.empty()) {
    switch (state_) {
      case State::Start: {
        // Only a block that opens the output is reasoning.
        const std::string_view rest = std::string_view(pending_).substr(leading_whitespace(pending_));
        const std::string_view open = markers_.open;
        if (rest.size() >= open.size() && rest.substr(0, open.size()) == open) {
          pending_.erase(0, pending_.size() - rest.size() + open.size());
          state_ = State::Reasoning;
        } else if (rest.empty() || open.substr(0, rest.size()) == rest) {
          return go_on;  // undecided
        } else {
          state_ = State::Answer;
          answer_lead_ = pending_;
        }
        break;
      }
      case State::Reasoning: {
        if (reasoning_.empty()) pending_.erase(0, leading_newlines(pending_));
        const size_t close = pending_.find(markers_.close);
        if (close != std::string::npos) {
          std::string body = pending_.substr(0, close);
          while (!body.empty() && body.back() == '\n') body.pop_back();
          pending_.erase(0, close + markers_.close.size());
          state_ = State::AfterReasoning;
          answer_lead_ = pending_;
          go_on = emit_piece(TextKind::Reasoning, std::move(body), emit);
          break;
        }
        // Hold back what may start the closing marker, and the newlines before it
        // (the reasoning is kept without its trailing blank lines).
        size_t keep = partial_marker_at_end(pending_, markers_.close);
        while (keep < pending_.size() && pending_[pending_.size() - keep - 1] == '\n') ++keep;
        std::string ready = pending_.substr(0, pending_.size() - keep);
        pending_.erase(0, ready.size());
        return emit_piece(TextKind::Reasoning, std::move(ready), emit);
      }
      case State::AfterReasoning: {
        pending_.erase(0, leading_newlines(pending_));
        if (!pending_.empty()) state_ = State::Answer;
        break;
      }
      case State::Answer: {
        go_on = emit_piece(TextKind::Answer, std::move(pending_), emit);
        pending_.clear();
        break;
      }
    }
  }
  return go_on;
}

bool ReasoningSplitter::finish(const KindedTextFn& emit) {
  std::string rest = std::move(pending_);
  pending_.clear();
  if (state_ == State::Reasoning) {
    while (!rest.empty() && rest.back() == '\n') rest.pop_back();
    return emit_piece(TextKind::Reasoning, std::move(rest), emit);
  }
  if (state_ == State::AfterReasoning) return true;
  state_ = State::Answer;
  return emit_piece(TextKind::Answer, std::move(rest), emit);
}

}  // namespace peak::chat
