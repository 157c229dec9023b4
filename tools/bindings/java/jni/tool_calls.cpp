#include "tool_calls.h"

#include "jni_support.h"

namespace peak_jni {

jobject java_tool_call(JNIEnv* env, const peak_tool_call& call) {
  jstring id = java_string(env, call.id, call.id_length);
  jstring name = id ? java_string(env, call.name, call.name_length) : nullptr;
  jstring arguments = name ? java_string(env, call.arguments, call.arguments_length) : nullptr;
  jobject out = arguments ? env->NewObject(refs.tool_call, refs.tool_call_init, id, name, arguments) : nullptr;
  for (jstring text : {id, name, arguments}) {
    if (text) env->DeleteLocalRef(text);
  }
  return out;
}

}  // namespace peak_jni
