#include "chat/tool_call_sections.h"

#include <utility>

namespace peak::chat {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool parse_json(std::string_view text, json::Value* value) {
  std::string error;
  return json::parse(text, value, &error);
}

// A call object: {"name": "f", <arguments_key>: {...}}, with the model's "id"
// where the format has them and an optional "type": "function". A call without
// arguments has none ({}); any other member means the object is something else.
bool read_call(const ToolCallFormat& format, const json::Value& value, SectionCall* call) {
  if (!value.is_object()) return false;
  std::string arguments = "{}";
  for (const json::Value::Member& member : value.members()) {
    const std::string& key = member.first;
    const json::Value& item = member.second;
    if (key == "name" && item.is_string() && !item.as_string().empty()) {
      call->name = item.as_string();
    } else if (key == format.arguments_key && item.is_object()) {
      arguments = json::write(item);
    } else if (key == "id" && format.model_ids && item.is_string()) {
      call->id = item.as_string();
    } else if (!(key == "type" && item.is_string() && item.as_string() == "function")) {
      return false;
    }
  }
  call->arguments = std::move(arguments);
  return !call->name.empty();
}

// A non-empty array of call objects (or, as models sometimes write it, one
// call object without the array).
bool read_calls(const ToolCallFormat& format, const json::Value& value, Section* section) {
  if (value.is_object()) {
    section->calls.emplace_back();
    return read_call(format, value, &section->calls.back());
  }
  if (!value.is_array() || value.items().empty()) return false;
  for (const json::Value& item : value.items()) {
    section->calls.emplace_back();
    if (!read_call(format, item, &section->calls.back())) return false;
  }
  return true;
}

bool read_envelope(const ToolCallFormat& format, const json::Value& value, Section* section) {
  if (!value.is_object() || value.members().size() != 1) return false;
  const auto& [key, item] = value.members().front();
  if (key == "response" && item.is_string()) {
    section->content = item.as_string();
    return true;
  }
  return key == "tool_calls" && item.is_array() && read_calls(format, item, section);
}

bool consume(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// One call_open + "function" + call_sep + name + "\n```json\n" + arguments + "\n```" + call_close.
bool read_deepseek_call(const ToolCallFormat& format, std::string_view& text, SectionCall* call) {
  if (!consume(text, format.call_open) || !consume(text, "function") || !consume(text, format.call_sep)) return false;
  const size_t newline = text.find('\n');
  const size_t close = text.find(format.call_close);
  if (newline == std::string_view::npos || close == std::string_view::npos || close < newline) return false;
  call->name = std::string(trim(text.substr(0, newline)));
  std::string_view fenced = trim(text.substr(newline + 1, close - newline - 1));
  text.remove_prefix(close + format.call_close.size());
  json::Value arguments;
  if (call->name.empty() || !consume(fenced, "```json") || fenced.size() < 3 ||
      fenced.substr(fenced.size() - 3) != "```" || !parse_json(fenced.substr(0, fenced.size() - 3), &arguments) ||
      !arguments.is_object()) {
    return false;
  }
  call->arguments = json::write(arguments);
  return true;
}

bool read_deepseek_calls(const ToolCallFormat& format, std::string_view body, Section* section) {
  body = trim(body);
  while (!body.empty()) {
    section->calls.emplace_back();
    if (!read_deepseek_call(format, body, &section->calls.back())) return false;
    body = trim(body);
  }
  return !section->calls.empty();
}

bool read_shape(const ToolCallFormat& format, std::string_view body, Section* section) {
  if (format.shape == CallShape::DeepSeekCalls) return read_deepseek_calls(format, body, section);
  json::Value value;
  if (!parse_json(body, &value)) return false;
  switch (format.shape) {
    case CallShape::JsonObject: section->calls.emplace_back(); return read_call(format, value, &section->calls.back());
    case CallShape::JsonArray: return read_calls(format, value, section);
    case CallShape::Envelope: return read_envelope(format, value, section);
    case CallShape::DeepSeekCalls: break;
  }
  return false;
}

}  // namespace

Section read_section(const ToolCallFormat& format, std::string_view body) {
  Section section;
  section.ok = read_shape(format, body, &section);
  if (!section.ok) section = Section();
  return section;
}

JsonExtent::Status JsonExtent::scan(std::string_view text, size_t* from, size_t* end) {
  for (size_t i = *from; i < text.size(); ++i) {
    const char c = text[i];
    if (!started_) {
      if (is_space(c)) continue;
      if (c != '{' && c != '[') return Status::NotJson;
      started_ = true;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      *end = i + 1;
      return Status::Complete;
    }
  }
  *from = text.size();
  return Status::Incomplete;
}

}  // namespace peak::chat
