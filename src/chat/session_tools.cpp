#include "chat/session_tools.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/tool_call_grammar.h"
#include "sampling/grammar_vocabulary.h"

namespace peak::chat {
namespace {

const ToolCallFormat& format_for(const model::Model& model, const SessionSettings& s) {
  if (!s.tool_call_format.empty()) return tool_call_format(s.tool_call_format);
  // A built-in family (named) has no calls of its own: the generic envelope.
  return s.template_name.empty() ? detect_tool_call_format(model.chat_template()) : tool_call_format("generic");
}

// The XML and Pythonic formats are read, not written by a grammar.
bool has_grammar(const ToolCallFormat& format) {
  return format.shape != CallShape::XmlCalls && format.shape != CallShape::PythonCalls;
}

// The control tokens the format's markers are written with in this
// vocabulary (Phi-4-mini's <|tool_call|>, Mistral's [TOOL_CALLS], ...): the
// model writes a marker as one such token, which must write its text for the
// parser and be allowed where the grammar spells that text.
std::vector<int32_t> marker_tokens(const model::Model& model, const ToolCallFormat& format) {
  const sampling::GrammarVocabulary& vocabulary = *model.grammar_vocabulary();
  std::vector<int32_t> ids;
  for (const std::string_view marker :
       {format.open, format.close, format.call.open, format.call.name_end, format.call.close, format.parameter.open,
        format.parameter.name_end, format.parameter.close}) {
    if (marker.empty()) continue;
    for (const int32_t id : model.tokenizer().encode(std::string(marker), false, /*parse_special=*/true)) {
      if (id < vocabulary.size() && vocabulary.kind(id) == sampling::GrammarVocabulary::Kind::kControl &&
          !vocabulary.bytes(id).empty()) {
        ids.push_back(id);
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

SessionTools session_tools(const model::Model& model, const SessionSettings& s, std::optional<bool> rendered_tools) {
  validate_tool_settings(s);
  SessionTools t;
  if (s.tools.empty()) return t;
  const bool rendered = rendered_tools.value_or(s.tool_choice != ToolChoiceMode::None);
  if (rendered) t.rendered = s.tools;
  std::string error;
  if (!json::parse(s.tools, &t.tools, &error)) throw std::invalid_argument("tools: " + error);
  if (s.tool_choice == ToolChoiceMode::None) return t;
  if (!rendered) {
    throw std::invalid_argument(
        "the session started with tool_choice none, so its prompt does not hold the tools: start a session with "
        "another tool_choice to call them");
  }
  t.format = &format_for(model, s);
  t.preserved_tokens = marker_tokens(model, *t.format);
  if (!has_grammar(*t.format)) {
    if (s.tool_choice != ToolChoiceMode::Auto) {
      throw std::invalid_argument(
          "tool_choice required or a named function needs a grammar, and the tool-call "
          "format " +
          std::string(t.format->name) + " has none (use tool_choice auto)");
    }
    return t;
  }
  ToolChoice choice;
  choice.mode = s.tool_choice == ToolChoiceMode::Auto ? ToolChoice::Mode::Auto : ToolChoice::Mode::Required;
  choice.function = s.tool_function;
  choice.parallel = s.parallel_tool_calls;
  ToolCallGrammar g = tool_call_grammar(*t.format, t.tools, choice);
  t.grammar = std::move(g.grammar);
  t.trigger = std::move(g.trigger);
  return t;
}

TriggerWatch::TriggerWatch(std::string trigger) : trigger_(std::move(trigger)), fallback_(trigger_.size(), 0) {
  for (size_t i = 1, k = 0; i < trigger_.size(); ++i) {
    while (k > 0 && trigger_[i] != trigger_[k]) k = fallback_[k - 1];
    if (trigger_[i] == trigger_[k]) ++k;
    fallback_[i] = k;
  }
}

size_t TriggerWatch::feed(std::string_view piece) {
  if (found_ || trigger_.empty()) return std::string::npos;
  for (size_t i = 0; i < piece.size(); ++i) {
    while (matched_ > 0 && piece[i] != trigger_[matched_]) matched_ = fallback_[matched_ - 1];
    if (piece[i] == trigger_[matched_]) ++matched_;
    if (matched_ == trigger_.size()) {
      found_ = true;
      return i + 1;
    }
  }
  return std::string::npos;
}

}  // namespace peak::chat
