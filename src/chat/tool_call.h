// Tool calls: reading the calls a chat model wrote in its answer, as OpenAI's
// assistant message has them:
//
//   {content, reasoning_content, tool_calls: [{id, type: "function",
//                                              function: {name, arguments}}]}
//
// where `arguments` is the text of a JSON object. Each model family was trained
// to write its calls one way; ToolCallFormat describes each way as data: the
// marker that opens a call (what a grammar waits for before it constrains the
// call), the one that closes it, the shape of a call and whether the model
// writes the ids. The formats, by name (texts as the families' chat templates
// render a past call, or as their model cards show one):
//
//   hermes       Qwen2.5, Qwen3, SmolLM3, Hermes: calls in a row, each
//                  <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   llama3-json  Llama 3.1, 3.2: the whole answer is {"name": "f", "parameters": {...}},
//                  or the same object after <|python_tag|>. One call per answer.
//                  Llama 3.1's built-in tools (<|python_tag|>brave_search.call(query="x"))
//                  are not JSON: they stay content, marker included, for the app.
//   mistral      Mistral Nemo and other v3 Mistral models, ids from the model:
//                  [TOOL_CALLS][{"name": "f", "arguments": {...}, "id": "a1b2c3d4e"}]
//   phi4         Phi-4-mini: <|tool_call|>[{"name": "f", "arguments": {...}}]<|/tool_call|>
//   granite      Granite 3.x: <|tool_call|>[{"name": "f", "arguments": {...}}], no closing marker
//   deepseek-r1  DeepSeek-R1 (and its distills): <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>
//                  function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>
//                  (more calls after a newline) <｜tool▁calls▁end｜>
//   qwen3-xml    Qwen3.5, Qwen3-Coder: calls in a row, each
//                  <tool_call>\n<function=f>\n<parameter=city>\nZürich\n</parameter>\n
//                  </function>\n</tool_call>
//   minicpm-xml  MiniCPM 5: <function name="f"><param name="city">Zürich</param></function>,
//                  in a row; values holding <, & or newlines in <![CDATA[...]]>
//   lfm2         LFM2, LFM2.5 (their model cards): Pythonic calls, a Python list
//                  <|tool_call_start|>[f(city="Zürich", n=2)]<|tool_call_end|>
//   generic      models with no format of their own (Gemma, Phi-3.5, ...): the
//                  whole answer is one JSON object, either
//                    {"tool_calls": [{"name": "f", "arguments": {...}}, ...]}
//                  or {"response": "the answer to the user"}, which a system
//                  instruction can describe and a grammar can enforce.
//
// A JSON call object is {"name": "f", <arguments key>: {...}}, optionally with
// "type": "function" (and "id" where the model writes ids); without arguments
// the call has none ({}); any other member makes it something else. The array
// formats also take a lone call object without the array.
//
// Nothing is lost or invented: a call whose text is not the format's shape
// (JSON that does not parse, a missing closing marker, a truncated answer)
// stays in the content as written. Only the whitespace between a call and the
// text around it is dropped, as the templates add it when they render calls.
// Calls inside the reasoning are reasoning, not calls.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"  // ToolCall: a parsed call has an id and compact arguments
#include "chat/reasoning.h"
#include "json/json.h"

namespace peak::chat {

// How the text of one call section (between its opening and closing markers)
// holds the calls.
enum class CallShape {
  JsonObject,     // one call object: {"name": "f", "<arguments_key>": {...}}
  JsonArray,      // a JSON array of call objects
  DeepSeekCalls,  // calls between CallMarkers, each with its arguments in a ```json fence
  XmlCalls,       // calls between CallMarkers, each parameter's value between ParameterMarkers
  PythonCalls,    // a Python list of calls: [f(city="Zürich", n=2), g()]
  Envelope,       // the generic format's {"tool_calls": [...]} or {"response": "..."}
};

// DeepSeekCalls and XmlCalls: the markers around each call in a section, which
// holds the calls one after another (whitespace between them):
//   open + name + name_end + arguments + close
struct CallMarkers {
  std::string_view open;
  std::string_view name_end;
  std::string_view close;  // empty: the call ends with the section
};

// XmlCalls: each parameter of a call is open + name + name_end + value + close.
// The value is the text between, without one newline at each end; a value
// wrapped in <![CDATA[...]]> is what it wraps. Values are strings when the
// tool's JSON Schema says so (ToolParseOptions::tools); otherwise a value that
// is JSON (2, true, {"a": 1}) is that value, anything else a string.
struct ParameterMarkers {
  std::string_view open;
  std::string_view name_end;
  std::string_view close;
};

struct ToolCallFormat {
  std::string_view name;      // "hermes", "llama3-json", ...
  std::string_view families;  // who writes it, for help texts
  // The marker that opens a call section (the trigger a grammar waits for);
  // empty when only the answer's first '{' opens one (see answer_is_json).
  std::string_view open;
  // The marker that ends it; empty when the section ends with its JSON value.
  std::string_view close;
  // An answer that starts with '{' (after whitespace) is a call section, without
  // any marker: Llama 3.x's plain JSON calls, the generic format.
  bool answer_is_json;
  CallShape shape;
  std::string_view arguments_key;  // "arguments" or "parameters"
  // The model writes an "id" (9 letters and digits for Mistral) in each call;
  // otherwise ids are generated, see ToolParseOptions::id_prefix.
  bool model_ids;
  CallMarkers call;            // DeepSeekCalls, XmlCalls
  ParameterMarkers parameter;  // XmlCalls
};

// Every format, in the order of the list above.
const std::vector<ToolCallFormat>& tool_call_formats();
// By name; throws std::invalid_argument listing the known names.
const ToolCallFormat& tool_call_format(std::string_view name);
// The names as one comma-separated list, for messages and help texts.
std::string tool_call_format_names_list();
// The format a chat template (a model's tokenizer.chat_template) renders past
// calls in, recognised by its markers; `generic` when it shows none.
const ToolCallFormat& detect_tool_call_format(std::string_view template_source);

struct ParsedResponse {
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCall> tool_calls;
};

struct ToolParseOptions {
  // Split `<think>...</think>` reasoning off the start of the text.
  bool parse_reasoning = true;
  ReasoningMarkers reasoning_markers;
  // The generation prompt already opened the reasoning block.
  bool reasoning_opened = false;
  // Generated ids are "call_" + id_prefix + the call's index (0, 1, ...) in the
  // answer, so parsing the same text with the same prefix gives the same ids
  // however it streams in. Give each answer its own prefix (letters and digits,
  // e.g. from the request's id) to keep ids unique within a conversation.
  std::string id_prefix;
  // The request's tools, as OpenAI's `tools` array ([{"type": "function",
  // "function": {"name", "parameters": JSON Schema}}]), or null: the XML
  // formats read the values of parameters typed "string" as strings.
  json::Value tools;
};

// What a streamed parse reports, in text order.
struct ToolParseEvent {
  enum class Kind {
    Content,    // text: answer text
    Reasoning,  // text: reasoning text
    CallStart,  // index, id, name: a call begins
    Arguments,  // index, text: a piece of the call's arguments text
    CallEnd,    // index: the call is complete
  };
  Kind kind;
  size_t index = 0;
  std::string text;
  std::string id;
  std::string name;
};
using ToolParseEventFn = std::function<void(const ToolParseEvent& event)>;

// Parses generated text fed piece by piece. Text that may begin a call is held
// back until the call section is complete: a call is reported (start, its whole
// arguments, end) only once its text has parsed, and a section that does not
// parse is reported as the content it is. So however the text is cut into
// pieces, the events add up to the same ParsedResponse, and no marker reaches
// the content of a call that parsed. Work is linear in the text's length; a
// section is held in memory until it closes.
class ToolCallStreamParser {
 public:
  ToolCallStreamParser(const ToolCallFormat& format, ToolParseOptions options = {});
  ~ToolCallStreamParser();
  ToolCallStreamParser(const ToolCallStreamParser&) = delete;
  ToolCallStreamParser& operator=(const ToolCallStreamParser&) = delete;

  void feed(std::string_view text, const ToolParseEventFn& emit);
  // The end of the text: reports what was held back (an unclosed section as content).
  void finish(const ToolParseEventFn& emit);

 private:
  class Answer;
  void feed_answer(std::string_view text, const ToolParseEventFn& emit);

  ReasoningSplitter reasoning_;
  bool parse_reasoning_;
  std::unique_ptr<Answer> answer_;
};

// Adds one event to a message being built from a stream.
void apply_event(ParsedResponse& response, const ToolParseEvent& event);
// The whole text at once: the same as streaming it and applying every event.
ParsedResponse parse_response(const ToolCallFormat& format, std::string_view text,
                              const ToolParseOptions& options = {});

// OpenAI's assistant message: {"role": "assistant", "content": ..., ["reasoning_content": ...,]
// ["tool_calls": [...]]}; content is null when empty and there are calls.
json::Value to_openai_message(const ParsedResponse& response);

}  // namespace peak::chat
