// Checks for the tool-call tests: a text's parse against the message written by
// hand for it, whole and streamed in every way it can be cut.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/tool_call.h"

namespace peak::chat::test {

struct Call {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text; compared as a value
};

struct Expected {
  std::string what;
  std::string text;
  std::string content;
  std::string reasoning;
  std::vector<Call> calls;
};

inline json::Value parsed_json(const std::string& text) {
  json::Value value;
  std::string error;
  EXPECT_TRUE(json::parse(text, &value, &error)) << text << ": " << error;
  return value;
}

inline void expect_message(const ParsedResponse& got, const Expected& expected, const std::string& how) {
  SCOPED_TRACE(expected.what + ", " + how);
  EXPECT_EQ(got.content, expected.content);
  EXPECT_EQ(got.reasoning_content, expected.reasoning);
  ASSERT_EQ(got.tool_calls.size(), expected.calls.size());
  for (size_t i = 0; i < expected.calls.size(); ++i) {
    EXPECT_EQ(got.tool_calls[i].id, expected.calls[i].id);
    EXPECT_EQ(got.tool_calls[i].name, expected.calls[i].name);
    EXPECT_EQ(parsed_json(got.tool_calls[i].arguments), parsed_json(expected.calls[i].arguments));
  }
}

inline bool same_message(const ParsedResponse& a, const ParsedResponse& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content) return false;
  if (a.tool_calls.size() != b.tool_calls.size()) return false;
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    const ToolCall& x = a.tool_calls[i];
    const ToolCall& y = b.tool_calls[i];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) return false;
  }
  return true;
}

// The text fed in the given pieces.
inline ParsedResponse streamed(const ToolCallFormat& format, const std::vector<std::string>& pieces,
                               const ToolParseOptions& options = {}) {
  ParsedResponse response;
  ToolCallStreamParser parser(format, options);
  const auto apply = [&](const ToolParseEvent& event) { apply_event(response, event); };
  for (const std::string& piece : pieces) parser.feed(piece, apply);
  parser.finish(apply);
  return response;
}

// Cut at every byte position, and fed byte by byte: the same message as the
// whole text's parse.
inline void expect_stream_equal(const ToolCallFormat& format, const std::string& text,
                                const ToolParseOptions& options = {}) {
  const ParsedResponse whole = parse_response(format, text, options);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const ParsedResponse two = streamed(format, {text.substr(0, cut), text.substr(cut)}, options);
    if (!same_message(two, whole)) {
      ADD_FAILURE() << "cut at byte " << cut << " of: " << text << "\nstreamed content: " << two.content
                    << "\nwhole content: " << whole.content;
      return;
    }
  }
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_TRUE(same_message(streamed(format, bytes, options), whole)) << "byte by byte: " << text;
}

inline void check_cases(const ToolCallFormat& format, const std::vector<Expected>& cases) {
  for (const Expected& expected : cases) {
    expect_message(parse_response(format, expected.text), expected, "whole text");
    expect_stream_equal(format, expected.text);
  }
}

}  // namespace peak::chat::test
