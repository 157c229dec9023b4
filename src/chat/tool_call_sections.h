// Reading one call section's text (what lies between a format's opening and
// closing markers) into calls, per the format's CallShape. Internal to the
// tool-call parser (tool_call_parse.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/tool_call.h"

namespace peak::chat {

struct SectionCall {
  std::string id;  // the model's, or empty
  std::string name;
  std::string arguments;
};

struct Section {
  bool ok = false;  // the text has the format's shape; else it stays content as written
  std::vector<SectionCall> calls;
  std::string content;  // the generic format's {"response": ...}
};

// `tools`: the request's tools (ToolParseOptions::tools), for the XML formats.
Section read_section(const ToolCallFormat& format, std::string_view body, const json::Value& tools);

// A Python list of calls with keyword arguments (CallShape::PythonCalls);
// false when the text is not one. (tool_call_python.cpp)
bool read_python_calls(std::string_view body, std::vector<SectionCall>* calls);

// Where a JSON array or object that starts a text ends, read as the text
// streams in: brackets counted outside strings. It only finds the extent;
// json::parse then decides whether the text is valid.
class JsonExtent {
 public:
  enum class Status { Incomplete, NotJson, Complete };
  // Reads text[from, ...) (`text` grows between calls; `from` is where the
  // previous call stopped). On Complete, *end is the offset just past the value.
  Status scan(std::string_view text, size_t* from, size_t* end);

 private:
  bool started_ = false;
  bool in_string_ = false;
  bool escaped_ = false;
  size_t depth_ = 0;
};

}  // namespace peak::chat
