// Tool calls between C and Java: a peak.ToolCall made from a peak_tool_call,
// and a peak.ParsedResponse from the message peak_chat_parse_response writes.
#ifndef PEAK_JNI_TOOL_CALLS_H
#define PEAK_JNI_TOOL_CALLS_H

#include <jni.h>

#include <string_view>

#include <peak/peak.h>

namespace peak_jni {

// A new peak.ToolCall holding the call's texts; null with an exception pending.
jobject java_tool_call(JNIEnv* env, const peak_tool_call& call);

// A new peak.ParsedResponse holding OpenAI's assistant message as
// peak_chat_parse_response writes it (`message_json`); null with an exception
// pending.
jobject java_parsed_response(JNIEnv* env, std::string_view message_json);

}  // namespace peak_jni

#endif  // PEAK_JNI_TOOL_CALLS_H
