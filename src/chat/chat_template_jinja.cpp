// A model's own chat template, rendered by the Jinja interpreter with what
// Hugging Face's apply_chat_template passes: `messages` (with their tool calls
// and tool results), `add_generation_prompt`, `bos_token`, `eos_token` and, when
// set, `enable_thinking` and `tools`.
#include <stdexcept>
#include <utility>

#include "chat/chat_template.h"
#include "jinja/template.h"

namespace peak::chat {

ChatTemplate ChatTemplate::from_jinja(std::string_view source, std::string bos_text, std::string eos_text) {
  ChatTemplate result(ChatTemplateFamily::Jinja);
  result.jinja_ = std::make_shared<const jinja::Template>(jinja::Template::parse(source));
  result.begin_of_sequence_ = std::move(bos_text);
  result.end_of_sequence_ = std::move(eos_text);
  return result;
}

namespace {

// Arguments that are a JSON object reach the template as that object; other
// text (not JSON, or JSON of another kind) as the text itself (see ToolCall).
jinja::Value arguments_value(const std::string& arguments) {
  try {
    jinja::Value parsed = jinja::parse_json(arguments);
    if (parsed.is_dict()) return parsed;
  } catch (const jinja::JsonError&) {
  }
  return arguments;
}

// {"id", "type": "function", "function": {"name", "arguments"}}, in OpenAI's order.
jinja::Value tool_call_value(const ToolCall& call) {
  jinja::Value function = jinja::Value::dict();
  function.set("name", call.name).set("arguments", arguments_value(call.arguments));
  jinja::Value value = jinja::Value::dict();
  if (call.id) value.set("id", *call.id);
  value.set("type", "function").set("function", std::move(function));
  return value;
}

jinja::Value message_value(const ChatMessage& m) {
  jinja::Value message = jinja::Value::dict();
  message.set("role", m.role).set("content", m.content ? jinja::Value(*m.content) : jinja::Value::none());
  if (!m.tool_calls.empty()) {
    jinja::Value calls = jinja::Value::list();
    for (const ToolCall& call : m.tool_calls) calls.push_back(tool_call_value(call));
    message.set("tool_calls", std::move(calls));
  }
  if (m.tool_call_id) message.set("tool_call_id", *m.tool_call_id);
  if (m.name) message.set("name", *m.name);
  return message;
}

jinja::Value messages_value(const std::vector<ChatMessage>& messages) {
  jinja::Value list = jinja::Value::list();
  for (const ChatMessage& m : messages) list.push_back(message_value(m));
  return list;
}

jinja::Value tools_value(const std::string& tools) {
  try {
    return jinja::parse_json(tools);
  } catch (const jinja::JsonError& e) {
    throw std::invalid_argument(std::string("tools: ") + e.what());
  }
}

// Gemma 2's policy for a system message, which its template refuses: the text
// opens the first user message, as Gemma 3's template writes it itself.
std::vector<ChatMessage> system_folded(const std::vector<ChatMessage>& messages) {
  std::vector<ChatMessage> folded(messages.begin() + 1, messages.end());
  auto user = folded.begin();
  while (user != folded.end() && user->role != "user") ++user;
  if (user == folded.end()) {
    folded.insert(folded.begin(), ChatMessage{"user", messages.front().content});
  } else {
    user->content = messages.front().content.value_or("") + "\n\n" + user->content.value_or("");
  }
  return folded;
}

}  // namespace

std::string ChatTemplate::format_jinja(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                       const FormatOptions& options) const {
  const auto render = [&](const std::vector<ChatMessage>& list) {
    jinja::Value context = jinja::Value::dict();
    context.set("messages", messages_value(list))
        .set("add_generation_prompt", add_generation_prompt)
        .set("bos_token", begin_of_sequence_)
        .set("eos_token", end_of_sequence_);
    if (options.enable_thinking) context.set("enable_thinking", *options.enable_thinking);
    if (options.tools) context.set("tools", tools_value(*options.tools));
    jinja::RenderOptions render_options;
    render_options.strftime_now = options.strftime_now;
    return jinja_->render(context, render_options);
  };
  try {
    try {
      return render(messages);
    } catch (const jinja::TemplateRaised&) {
      if (!options.fold_system || messages.empty() || messages.front().role != "system") throw;
      return render(system_folded(messages));
    }
  } catch (const jinja::TemplateRaised&) {
    throw;  // the template's own message (raise_exception), as Jinja2 gives it
  } catch (const jinja::TemplateError& e) {
    // The interpreter's errors and bounds ("line 1: the output exceeds ...")
    // say which template they are about.
    throw e.in_context("the chat template: ");
  }
}

const char* template_source_name(TemplateSource source) {
  switch (source) {
    case TemplateSource::Embedded: return "embedded";
    case TemplateSource::BuiltIn: return "built-in";
    case TemplateSource::Fallback: return "fallback";
  }
  return "unknown";
}

}  // namespace peak::chat
