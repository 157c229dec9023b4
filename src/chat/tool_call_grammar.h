// Tool calls as a grammar: the calls a model may write in its format
// (tool_call.h), each call naming one of the request's tools and its arguments
// held to that tool's `parameters` JSON Schema (sampling/json_schema.h), so that
// a constrained call always parses and validates.
//
// OpenAI's tool_choice decides where the grammar applies:
//  - "required", or one function named: the answer is calls from its start;
//  - "auto": the answer is free text until the format's opening marker (the
//    trigger) appears; the grammar reads the answer from the trigger on. Formats
//    whose calls open with no marker constrain the whole answer instead: the
//    generic format's envelope is {"tool_calls": [...]} or {"response": "..."};
//    Llama 3's answer is either one call or text that does not open with '{'.
//  - "none" has no grammar: the caller leaves the tools out.
// parallel_tool_calls false allows one call; true, one or more (up to
// ToolChoice::max_calls).
//
// The calls are written as the family's chat template renders past ones:
//   hermes       <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>, "\n" between calls
//   llama3-json  {"name": "f", "parameters": {...}}, one call
//   mistral      [TOOL_CALLS][{"name": "f", "arguments": {...}, "id": "a1b2c3d4e"}, ...]
//   phi4         <|tool_call|>[{"name": "f", "arguments": {...}}, ...]<|/tool_call|>
//   granite      <|tool_call|>[{"name": "f", "arguments": {...}}, ...]
//   deepseek-r1
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>
//                ("\n" between calls)<｜tool▁calls▁end｜>
//   generic      {"tool_calls": [{"name": "f", "arguments": {...}}, ...]}
// The JSON inside follows the converter's whitespace rules. The XML and
// Pythonic formats (qwen3-xml, minicpm-xml, lfm2) are read but not written as
// JSON: they have no grammar here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "chat/tool_call.h"
#include "json/json.h"
#include "sampling/grammar.h"

namespace peak::chat {

// The largest ToolChoice::max_calls: a bounded list of calls holds a copy of
// the call's grammar per call.
inline constexpr size_t kMaxBoundedCalls = 64;

struct ToolChoice {
  enum class Mode { Auto, Required };
  Mode mode = Mode::Auto;
  // Not empty: the one function the answer calls (OpenAI's {"type": "function",
  // "function": {"name": ...}}), which makes the mode Required.
  std::string function;
  bool parallel = true;  // parallel_tool_calls
  // With parallel calls: at most this many in one answer (0: no bound), for a
  // model that would go on calling where it should end its turn.
  size_t max_calls = 0;
};

struct ToolCallGrammar {
  std::shared_ptr<const sampling::Grammar> grammar;
  // Where the grammar starts: empty, at the answer's start; else at the first
  // place this text appears in the answer, which the grammar then reads first.
  std::string trigger;
};

// `tools` is OpenAI's list ([{"type": "function", "function": {"name",
// "description"?, "parameters"?}}], as tools_from_json checks it); a tool
// without parameters takes any object. Throws std::invalid_argument naming
// what is wrong: no tools, a named function that is not among them, a format
// without a grammar, a tool whose parameters the JSON Schema converter refuses
// (with its pointer), max_calls past kMaxBoundedCalls, a grammar past the bounds.
ToolCallGrammar tool_call_grammar(const ToolCallFormat& format, const json::Value& tools, const ToolChoice& choice);

}  // namespace peak::chat
