// libFuzzer target: any byte string, read as a chat template, must parse and
// render within the limits or be refused with TemplateError; read as JSON, it
// must parse or be refused with JsonError. Anything else (a crash, a hang, a
// sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "jinja/template.h"

namespace {

using peak::jinja::Value;

Value message(const char* role, const char* content) { return Value::dict().set("role", role).set("content", content); }

// A conversation that walks the usual template paths: system prompt, tools,
// tool calls and results, thinking, non-ASCII text.
const Value& context() {
  static const Value c = [] {
    Value call = Value::dict().set("type", "function").set("id", "call12345").set(
        "function", Value::dict().set("name", "get_weather").set("arguments", Value::dict().set("city", "Zürich")));
    Value messages = Value::list();
    messages.push_back(message("system", "You are helpful."));
    messages.push_back(message("user", "Weather? \xe6\x97\xa5\xe6\x9c\xac"));
    messages.push_back(message("assistant", "<think>\nhm\n</think>\n\nLet me check.").set("tool_calls", Value::list({call})));
    messages.push_back(message("tool", "{\"temp\": 21}").set("tool_call_id", "call12345"));
    messages.push_back(message("assistant", "It is 21 degrees."));
    messages.push_back(message("user", "Thanks"));
    Value tool = Value::dict().set("type", "function").set(
        "function", Value::dict().set("name", "get_weather").set("description", "Weather").set(
                        "parameters", peak::jinja::parse_json(R"({"type": "object", "properties": {"city": {"type": "string"}}})")));
    return Value::dict()
        .set("messages", messages)
        .set("tools", Value::list({tool}))
        .set("add_generation_prompt", true)
        .set("enable_thinking", false)
        .set("bos_token", "<s>")
        .set("eos_token", "</s>");
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    peak::jinja::parse_json(text);
  } catch (const peak::jinja::JsonError&) {
  }
  peak::jinja::RenderOptions options;
  options.limits.max_output_bytes = 1 << 16;
  options.limits.max_steps = 200000;
  options.strftime_now = [](const std::string&) { return std::string("22 Nov 2026"); };
  try {
    peak::jinja::Template::parse(text, options.limits).render(context(), options);
  } catch (const peak::jinja::TemplateError&) {
  }
  return 0;
}
