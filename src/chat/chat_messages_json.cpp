#include "chat/chat_messages_json.h"

#include <optional>
#include <stdexcept>

#include "json/json.h"

namespace peak::chat {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

std::string expected(const char* what, const json::Value& value) {
  return std::string("expected ") + what + ", not " + json::type_name(value.type());
}

json::Value parsed(std::string_view text, const std::string& root) {
  json::Value value;
  std::string error;
  if (!json::parse(text, &value, &error)) refuse(root, error);
  return value;
}

// The array at `path` with at most `max` items.
const std::vector<json::Value>& array_at(const json::Value& value, const std::string& path, size_t max) {
  if (!value.is_array()) refuse(path, expected("an array", value));
  if (value.items().size() > max) {
    refuse(path, std::to_string(value.items().size()) + " items, more than the " + std::to_string(max) + " taken");
  }
  return value.items();
}

void check_object(const json::Value& value, const std::string& path) {
  if (!value.is_object()) refuse(path, expected("an object", value));
}

// Member `key` of an object, or nullptr when it is absent or null (OpenAI's
// clients write an unset optional field either way).
const json::Value* optional_member(const json::Value& object, std::string_view key) {
  const json::Value* value = object.find(key);
  return value && !value->is_null() ? value : nullptr;
}

const json::Value& required_member(const json::Value& object, const std::string& path, std::string_view key,
                                   const char* what) {
  const json::Value* value = object.find(key);
  if (!value) refuse(path + "." + std::string(key), std::string("missing (expected ") + what + ")");
  return *value;
}

const std::string& string_at(const json::Value& value, const std::string& path) {
  if (!value.is_string()) refuse(path, expected("a string", value));
  return value.as_string();
}

std::optional<std::string> optional_string(const json::Value& object, const std::string& path, std::string_view key) {
  const json::Value* value = optional_member(object, key);
  if (!value) return std::nullopt;
  return string_at(*value, path + "." + std::string(key));
}

const std::string& required_string(const json::Value& object, const std::string& path, std::string_view key) {
  return string_at(required_member(object, path, key, "a string"), path + "." + std::string(key));
}

// "type" of a tool or a tool call: OpenAI's only kind is "function".
void check_function_type(const json::Value& object, const std::string& path, bool required) {
  const json::Value* type =
      required ? &required_member(object, path, "type", "\"function\"") : optional_member(object, "type");
  if (type && string_at(*type, path + ".type") != "function") {
    refuse(path + ".type", "'" + type->as_string() + "' is not a tool type (expected \"function\")");
  }
}

const json::Value& function_at(const json::Value& object, const std::string& path) {
  const json::Value& function = required_member(object, path, "function", "an object");
  check_object(function, path + ".function");
  return function;
}

ToolCall tool_call_from(const json::Value& value, const std::string& path) {
  check_object(value, path);
  check_function_type(value, path, false);
  const json::Value& function = function_at(value, path);
  ToolCall call;
  call.id = optional_string(value, path, "id");
  call.name = required_string(function, path + ".function", "name");
  call.arguments = required_string(function, path + ".function", "arguments");
  return call;
}

std::vector<ToolCall> tool_calls_from(const json::Value& message, const std::string& path, const std::string& role) {
  const json::Value* calls = optional_member(message, "tool_calls");
  if (!calls) return {};
  const std::vector<json::Value>& items = array_at(*calls, path + ".tool_calls", kMaxJsonTools);
  if (!items.empty() && role != "assistant") refuse(path + ".tool_calls", "only an assistant message calls tools");
  std::vector<ToolCall> out;
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(tool_call_from(items[i], path + ".tool_calls[" + std::to_string(i) + "]"));
  }
  return out;
}

std::optional<std::string> content_from(const json::Value& message, const std::string& path, const std::string& role) {
  const json::Value* content = optional_member(message, "content");
  if (!content) {
    if (role == "assistant") return std::nullopt;
    refuse(path + ".content", "missing (expected a string; only an assistant message may have none)");
  }
  if (content->is_array()) refuse(path + ".content", "content parts (an array) are not supported; give the text");
  return string_at(*content, path + ".content");
}

ChatMessage message_from(const json::Value& value, const std::string& path) {
  check_object(value, path);
  ChatMessage m;
  m.role = required_string(value, path, "role");
  if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
    refuse(path + ".role", "unknown role '" + m.role + "' (expected system, user, assistant or tool)");
  }
  m.content = content_from(value, path, m.role);
  m.tool_calls = tool_calls_from(value, path, m.role);
  m.tool_call_id = optional_string(value, path, "tool_call_id");
  if (m.tool_call_id && m.role != "tool") refuse(path + ".tool_call_id", "only a tool message answers a call");
  m.name = optional_string(value, path, "name");
  return m;
}

void check_tool(const json::Value& tool, const std::string& path) {
  check_object(tool, path);
  check_function_type(tool, path, true);
  const json::Value& function = function_at(tool, path);
  const std::string at = path + ".function";
  required_string(function, at, "name");
  optional_string(function, at, "description");
  const json::Value* parameters = optional_member(function, "parameters");
  if (parameters) check_object(*parameters, at + ".parameters");
}

}  // namespace

std::vector<ChatMessage> messages_from_json(std::string_view text) {
  const json::Value value = parsed(text, "messages");
  const std::vector<json::Value>& items = array_at(value, "messages", kMaxJsonMessages);
  std::vector<ChatMessage> messages;
  messages.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    messages.push_back(message_from(items[i], "messages[" + std::to_string(i) + "]"));
  }
  return messages;
}

std::string tools_from_json(std::string_view text) {
  const json::Value value = parsed(text, "tools");
  const std::vector<json::Value>& items = array_at(value, "tools", kMaxJsonTools);
  for (size_t i = 0; i < items.size(); ++i) check_tool(items[i], "tools[" + std::to_string(i) + "]");
  return std::string(text);
}

}  // namespace peak::chat
