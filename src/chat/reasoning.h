// Thinking models (Qwen3, DeepSeek-R1, SmolLM3, ...) write their reasoning
// between markers before the answer:
//
//   <think>\nThe user wants a colour.\n</think>\n\nBlue.
//
// ReasoningSplitter separates the two while the text streams in, so an app can
// show the reasoning apart (or not at all) and the conversation keeps only the
// answer, as the models' own templates do when they render history.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sampling/grammar.h"

namespace peak::chat {

enum class TextKind { Answer, Reasoning };

struct ReasoningMarkers {
  std::string open = "<think>";
  std::string close = "</think>";
};

// Streams hold back text that may be the start of a marker: the length of the
// longest suffix of `text` that is a proper prefix of `marker` (0 for an empty
// marker).
size_t partial_marker_at_end(std::string_view text, std::string_view marker);

// For a grammar that constrains the answer alone (SamplerChain's phases): GBNF
// grammars of what the splitter below reads around the reasoning block. The
// opening is the output's start that opens a block (the marker, then anything:
// the reasoning is free); the separator, the blank lines it drops between the
// block's end and the answer.
std::shared_ptr<const sampling::Grammar> reasoning_opening_grammar(const ReasoningMarkers& markers);
std::shared_ptr<const sampling::Grammar> reasoning_separator_grammar();

// Receives a piece of text and what it is; returns false to stop generating.
using KindedTextFn = std::function<bool(TextKind kind, const std::string& text)>;

class ReasoningSplitter {
 public:
  // `opened`: the generation prompt already opened the reasoning block (some
  // templates end it with "<think>\n"), so the output starts inside it.
  explicit ReasoningSplitter(ReasoningMarkers markers = {}, bool opened = false);

  // Feeds the next generated text. Text that may still turn out to be part of a
  // marker is held back until it is decided; `emit` gets everything else, the
  // markers themselves and the blank lines around them left out. Returns what
  // `emit` returned last (true when nothing was emitted).
  bool feed(std::string_view text, const KindedTextFn& emit);
  // The end of generation: emits what was held back.
  bool finish(const KindedTextFn& emit);

  // Everything split so far: the reasoning without its markers, and the answer
  // with the blank lines after the closing marker removed.
  const std::string& reasoning() const { return reasoning_; }
  const std::string& answer() const { return answer_; }

  // The text so far is reasoning, or may still open it (undecided at the
  // start): a grammar for the answer waits while this holds.
  bool before_answer() const { return state_ == State::Start || state_ == State::Reasoning; }
  // The output opened a reasoning block that has not closed yet.
  bool in_reasoning() const { return state_ == State::Reasoning; }
  // The text fed after the reasoning block closed (all of it when the output
  // opened none), as the feed() that decided so left it: the answer's start
  // that came with the text ending the reasoning, blank lines included.
  const std::string& answer_lead() const { return answer_lead_; }

 private:
  enum class State { Start, Reasoning, AfterReasoning, Answer };
  bool emit_piece(TextKind kind, std::string text, const KindedTextFn& emit);

  ReasoningMarkers markers_;
  State state_;
  std::string pending_;  // undecided text: a possible marker prefix or leading newlines
  std::string reasoning_;
  std::string answer_;
  std::string answer_lead_;
};

}  // namespace peak::chat
