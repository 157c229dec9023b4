// A conversation and its tools as OpenAI's chat API writes them in JSON, read
// into what a chat template takes (ChatMessage, FormatOptions::tools): the one
// conversion for every caller that has the JSON (peak_chat_apply_template's
// messages_json and tools_json).
//
// Errors throw std::invalid_argument naming the JSON path of what is wrong
// ("messages[2].tool_calls[0].function.name: expected a string, not a number").
// Keys these readers do not know are left alone, as OpenAI's clients send more
// than a template needs (refusal, annotations, ...).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"

namespace peak::chat {

// Bounds of what one conversation may hold; nesting is bounded by peak::json.
constexpr size_t kMaxJsonMessages = 65536;
constexpr size_t kMaxJsonTools = 1024;  // tools, and tool calls of one message

// OpenAI's `messages` array: each {"role": "system"|"user"|"assistant"|"tool",
// "content": string, "name"?: string}, where an assistant's content may be
// null or absent (None in the template) and it may carry "tool_calls": [{"id"?:
// string, "type"?: "function", "function": {"name": string, "arguments":
// string}}] (null or [] is none), and a tool message "tool_call_id"?: string.
// Content given as parts (an array) is refused: ChatMessage holds text.
std::vector<ChatMessage> messages_from_json(std::string_view text);

// Checks OpenAI's `tools` array: each {"type": "function", "function":
// {"name": string, "description"?: string, "parameters"?: object}}. Returns
// the text itself, as FormatOptions::tools takes it.
std::string tools_from_json(std::string_view text);

}  // namespace peak::chat
