// Tool calls between C and Java: a peak.ToolCall made from a peak_tool_call.
#ifndef PEAK_JNI_TOOL_CALLS_H
#define PEAK_JNI_TOOL_CALLS_H

#include <jni.h>

#include <peak/peak.h>

namespace peak_jni {

// A new peak.ToolCall holding the call's texts; null with an exception pending.
jobject java_tool_call(JNIEnv* env, const peak_tool_call& call);

}  // namespace peak_jni

#endif  // PEAK_JNI_TOOL_CALLS_H
