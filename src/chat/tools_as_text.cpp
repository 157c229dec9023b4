#include "chat/tools_as_text.h"

#include <map>

#include "json/json.h"

namespace peak::chat {
namespace {

// A call's arguments as the JSON value they hold (text that is no JSON stays text).
json::Value arguments_value(const std::string& arguments) {
  json::Value value;
  std::string error;
  return json::parse(arguments, &value, &error) ? value : json::Value(arguments);
}

std::string calls_envelope(const std::vector<ToolCall>& calls) {
  json::Value list = json::Value::array();
  for (const ToolCall& call : calls) {
    list.push(json::Value::object().set("name", call.name).set("arguments", arguments_value(call.arguments)));
  }
  return json::write(json::Value::object().set("tool_calls", std::move(list)));
}

std::string tool_response(const ChatMessage& result, const std::map<std::string, std::string>& call_names) {
  json::Value response = json::Value::object();
  const auto name = result.tool_call_id ? call_names.find(*result.tool_call_id) : call_names.end();
  if (name != call_names.end()) {
    response.set("name", name->second);
  } else if (result.name) {
    response.set("name", *result.name);
  }
  response.set("content", result.content.value_or(""));
  return json::write(json::Value::object().set("tool_response", std::move(response)));
}

}  // namespace

std::string tools_instruction(const std::string& tools_json) {
  const size_t first = tools_json.find_first_not_of(" \t\r\n");
  const size_t last = tools_json.find_last_not_of(" \t\r\n");
  const std::string tools = first == std::string::npos ? std::string() : tools_json.substr(first, last + 1 - first);
  return "You can call these tools (OpenAI's function definitions, the parameters as JSON Schema):\n" + tools +
         "\n\nAnswer with one JSON object and nothing else: to call tools, "
         "{\"tool_calls\": [{\"name\": \"<the tool's name>\", \"arguments\": {<its arguments>}}]}, "
         "one entry per call; to answer without calling, {\"response\": \"<your answer>\"}. "
         "The results of calls come back as {\"tool_response\": {\"name\": ..., \"content\": ...}}, "
         "in the order of the calls.";
}

std::vector<ChatMessage> tool_messages_as_text(const std::vector<ChatMessage>& messages) {
  std::vector<ChatMessage> out;
  std::map<std::string, std::string> call_names;  // call id -> tool name
  bool in_results = false;                        // out.back() gathers a run of tool results
  for (const ChatMessage& m : messages) {
    if (m.role == "tool") {
      if (!in_results) out.push_back({"user", std::string()});
      std::string& text = *out.back().content;
      text += (in_results ? "\n" : "") + tool_response(m, call_names);
      in_results = true;
      continue;
    }
    if (in_results && m.role == "user") {
      // Templates that alternate turns take no second user turn: a message
      // after the results (a session's probe of what follows) joins them.
      *out.back().content += "\n\n" + m.content.value_or("");
      in_results = false;
      continue;
    }
    in_results = false;
    ChatMessage copy{m.role, m.content};
    if (!m.tool_calls.empty()) {
      for (const ToolCall& call : m.tool_calls) {
        if (call.id) call_names[*call.id] = call.name;
      }
      const std::string text = m.content.value_or("");
      copy.content = (text.empty() ? "" : text + "\n") + calls_envelope(m.tool_calls);
    }
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace peak::chat
