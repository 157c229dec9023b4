// Tools for a chat template that has no place for them (Gemma, the built-in
// families): the generic tool-call format (tool_call.h) written as plain text.
// The tools go into the system prompt as an instruction, an answer's calls
// into its text as the JSON envelope the model writes them in, and tool
// results into a user message, so the conversation keeps the roles such a
// template knows (Gemma's alternate user and model turns).
#pragma once

#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace peak::chat {

// The system prompt's instruction: the tools (OpenAI's tools array, as JSON
// text) and the two answers the generic format's grammar allows.
std::string tools_instruction(const std::string& tools_json);

// `messages` with every assistant message's calls written into its text as
// {"tool_calls": [{"name": ..., "arguments": {...}}]} and each run of tool
// results as one user message of {"tool_response": {"name", "content"}}
// lines (the name from the call the result answers, when one of `messages`),
// a user message right after them joined to it after a blank line.
std::vector<ChatMessage> tool_messages_as_text(const std::vector<ChatMessage>& messages);

}  // namespace peak::chat
