// libFuzzer target: generated text read by the tool-call parser
// (src/chat/tool_call.h). The first byte chooses the format and whether
// reasoning is split off, the second how the text is cut into pieces; the rest
// is the text. Parsing it whole and streaming it in those pieces must give the
// same message (content, reasoning, calls), every call's arguments must be a
// JSON object with a name, and the content and reasoning are never longer
// than the text they came from. Anything else (a crash, a hang, a
// sanitizer report, a difference) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chat/tool_call.h"
#include "json/json.h"

namespace {

using peak::chat::ParsedResponse;

bool same(const ParsedResponse& a, const ParsedResponse& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content) return false;
  if (a.tool_calls.size() != b.tool_calls.size()) return false;
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    const auto& x = a.tool_calls[i];
    const auto& y = b.tool_calls[i];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace chat = peak::chat;
  if (size < 2) return 0;
  const auto& formats = chat::tool_call_formats();
  const chat::ToolCallFormat& format = formats[(data[0] & 0x7F) % formats.size()];
  chat::ToolParseOptions options;
  options.parse_reasoning = (data[0] & 0x80) != 0;
  options.id_prefix = "f";
  uint32_t cuts = data[1] | 1u;
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);

  const ParsedResponse whole = chat::parse_response(format, text, options);
  ParsedResponse streamed;
  chat::ToolCallStreamParser parser(format, options);
  const auto apply = [&streamed](const chat::ToolParseEvent& event) { chat::apply_event(streamed, event); };
  for (size_t at = 0; at < text.size();) {
    cuts = cuts * 1103515245u + 12345u;
    const size_t piece = 1 + (cuts >> 16) % 16;
    parser.feed(text.substr(at, piece), apply);
    at += piece;
  }
  parser.finish(apply);
  if (!same(whole, streamed)) std::abort();

  for (const chat::ToolCall& call : whole.tool_calls) {
    peak::json::Value arguments;
    std::string error;
    if (!peak::json::parse(call.arguments, &arguments, &error) || !arguments.is_object()) std::abort();
    if (call.name.empty()) std::abort();
  }
  // Calls are taken out of the text, never added to it.
  if (whole.content.size() + whole.reasoning_content.size() > text.size()) std::abort();
  return 0;
}
