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

// The call's name: from after open to name_end.
bool read_call_name(const CallMarkers& markers, std::string_view& text, SectionCall* call) {
  if (!consume(text, markers.open)) return false;
  const size_t end = text.find(markers.name_end);
  if (end == std::string_view::npos) return false;
  call->name = std::string(trim(text.substr(0, end)));
  text.remove_prefix(end + markers.name_end.size());
  return !call->name.empty();
}

// name + "\n```json\n" + arguments + "\n```" + close, after the call's open marker.
bool read_fenced_call(const ToolCallFormat& format, std::string_view& text, SectionCall* call) {
  if (!read_call_name(format.call, text, call)) return false;
  const size_t close = text.find(format.call.close);
  if (close == std::string_view::npos) return false;
  std::string_view fenced = trim(text.substr(0, close));
  text.remove_prefix(close + format.call.close.size());
  json::Value arguments;
  if (!consume(fenced, "```json") || fenced.size() < 3 || fenced.substr(fenced.size() - 3) != "```" ||
      !parse_json(fenced.substr(0, fenced.size() - 3), &arguments) || !arguments.is_object()) {
    return false;
  }
  call->arguments = json::write(arguments);
  return true;
}

// The JSON Schema type the request's tools give `parameter` of `function`, or "".
std::string_view schema_type(const json::Value& tools, std::string_view function, std::string_view parameter) {
  if (!tools.is_array()) return {};
  for (const json::Value& tool : tools.items()) {
    const json::Value* spec = tool.find("function");
    const json::Value* name = spec ? spec->find("name") : nullptr;
    if (!name || !name->is_string() || name->as_string() != function) continue;
    const json::Value* parameters = spec->find("parameters");
    const json::Value* properties = parameters ? parameters->find("properties") : nullptr;
    const json::Value* property = properties ? properties->find(parameter) : nullptr;
    const json::Value* type = property ? property->find("type") : nullptr;
    return type && type->is_string() ? std::string_view(type->as_string()) : std::string_view();
  }
  return {};
}

json::Value parameter_value(std::string_view text, std::string_view type) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  constexpr std::string_view cdata_open = "<![CDATA[", cdata_close = "]]>";
  if (text.size() >= cdata_open.size() + cdata_close.size() && text.substr(0, cdata_open.size()) == cdata_open &&
      text.substr(text.size() - cdata_close.size()) == cdata_close) {
    text = text.substr(cdata_open.size(), text.size() - cdata_open.size() - cdata_close.size());
  }
  json::Value value;
  if (type != "string" && parse_json(text, &value)) return value;
  return json::Value(text);
}

// name + name_end, then the parameters, then close.
bool read_xml_call(const ToolCallFormat& format, const json::Value& tools, std::string_view& text, SectionCall* call) {
  if (!read_call_name(format.call, text, call)) return false;
  const ParameterMarkers& parameter = format.parameter;
  json::Value arguments = json::Value::object();
  while (true) {
    text = trim(text);
    if (format.call.close.empty() ? text.empty() : consume(text, format.call.close)) break;
    if (!consume(text, parameter.open)) return false;
    const size_t name_end = text.find(parameter.name_end);
    if (name_end == std::string_view::npos) return false;
    const std::string_view name = text.substr(0, name_end);
    text.remove_prefix(name_end + parameter.name_end.size());
    const size_t close = text.find(parameter.close);
    if (name.empty() || close == std::string_view::npos) return false;
    arguments.set(name, parameter_value(text.substr(0, close), schema_type(tools, call->name, name)));
    text.remove_prefix(close + parameter.close.size());
  }
  call->arguments = json::write(arguments);
  return true;
}

// The calls one after another, whitespace between.
bool read_marked_calls(const ToolCallFormat& format, const json::Value& tools, std::string_view body,
                       Section* section) {
  body = trim(body);
  while (!body.empty()) {
    section->calls.emplace_back();
    SectionCall* call = &section->calls.back();
    const bool ok = format.shape == CallShape::XmlCalls ? read_xml_call(format, tools, body, call)
                                                        : read_fenced_call(format, body, call);
    if (!ok) return false;
    body = trim(body);
  }
  return !section->calls.empty();
}

bool read_shape(const ToolCallFormat& format, const json::Value& tools, std::string_view body, Section* section) {
  if (format.shape == CallShape::DeepSeekCalls || format.shape == CallShape::XmlCalls) {
    return read_marked_calls(format, tools, body, section);
  }
  if (format.shape == CallShape::PythonCalls) return read_python_calls(body, &section->calls);
  json::Value value;
  if (!parse_json(body, &value)) return false;
  switch (format.shape) {
    case CallShape::JsonObject: section->calls.emplace_back(); return read_call(format, value, &section->calls.back());
    case CallShape::JsonArray: return read_calls(format, value, section);
    case CallShape::Envelope: return read_envelope(format, value, section);
    case CallShape::DeepSeekCalls:
    case CallShape::XmlCalls:
    case CallShape::PythonCalls: break;
  }
  return false;
}

}  // namespace

Section read_section(const ToolCallFormat& format, std::string_view body, const json::Value& tools) {
  Section section;
  section.ok = read_shape(format, tools, body, &section);
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
