#include "tool_calls.h"

#include <string>

#include "jni_support.h"
#include "json/json.h"

namespace peak_jni {

namespace json = peak::json;

namespace {

// The message is peak's own text: one of another shape is the glue's error.
void throw_shape(JNIEnv* env, const std::string& what) {
  throw_peak(env, PEAK_ERR_INTERNAL, "the message of peak_chat_parse_response: " + what);
}

// Member `key` of `object` as a Java string: null when it is absent or null.
// False with an exception pending when it is something else.
bool optional_text(JNIEnv* env, const json::Value& object, const char* key, jstring* out) {
  *out = nullptr;
  const json::Value* value = object.find(key);
  if (!value || value->is_null()) return true;
  if (!value->is_string()) {
    throw_shape(env, std::string(key) + " is " + json::type_name(value->type()) + ", not a string");
    return false;
  }
  *out = java_string(env, value->as_string().data(), value->as_string().size());
  return *out != nullptr;
}

// Member `key` of `object`, which must be a string; null (an exception
// pending) when it is not.
const std::string* required_text(JNIEnv* env, const json::Value* object, const char* key, const std::string& where) {
  const json::Value* value = object && object->is_object() ? object->find(key) : nullptr;
  if (value && value->is_string()) return &value->as_string();
  throw_shape(env, where + "." + key + " is not a string");
  return nullptr;
}

// OpenAI's tool call {"id", "type": "function", "function": {"name", "arguments"}}.
jobject java_call(JNIEnv* env, const json::Value& call, const std::string& where) {
  const std::string* id = required_text(env, &call, "id", where);
  const json::Value* function = call.is_object() ? call.find("function") : nullptr;
  const std::string* name = id ? required_text(env, function, "name", where + ".function") : nullptr;
  const std::string* arguments = name ? required_text(env, function, "arguments", where + ".function") : nullptr;
  if (!arguments) return nullptr;
  peak_tool_call c{};
  c.struct_size = sizeof c;
  c.id = id->c_str();
  c.id_length = id->size();
  c.name = name->c_str();
  c.name_length = name->size();
  c.arguments = arguments->c_str();
  c.arguments_length = arguments->size();
  return java_tool_call(env, c);
}

// The message's tool_calls (absent: none) as a ToolCall[].
jobjectArray java_calls(JNIEnv* env, const json::Value& message) {
  static const json::Value kNone = json::Value::array();
  const json::Value* calls = message.find("tool_calls");
  if (!calls) calls = &kNone;
  if (!calls->is_array()) {
    throw_shape(env, std::string("tool_calls is ") + json::type_name(calls->type()) + ", not an array");
    return nullptr;
  }
  const auto n = static_cast<jsize>(calls->items().size());
  jobjectArray out = env->NewObjectArray(n, refs.tool_call, nullptr);
  for (jsize i = 0; out && i < n; ++i) {
    jobject call = java_call(env, calls->items()[static_cast<size_t>(i)], "tool_calls[" + std::to_string(i) + "]");
    if (call) {
      env->SetObjectArrayElement(out, i, call);
      env->DeleteLocalRef(call);
    } else {
      env->DeleteLocalRef(out);
      out = nullptr;
    }
  }
  return out;
}

}  // namespace

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

jobject java_parsed_response(JNIEnv* env, std::string_view message_json) {
  json::Value message;
  std::string error;
  json::ParseLimits limits;
  limits.max_bytes = message_json.size();  // peak's own text, as long as the answer makes it
  if (!json::parse(message_json, &message, &error, limits) || !message.is_object()) {
    throw_shape(env, error.empty() ? "not an object" : error);
    return nullptr;
  }
  jstring content = nullptr;
  jstring reasoning = nullptr;
  jobjectArray calls = nullptr;
  jobject out = nullptr;
  if (optional_text(env, message, "content", &content) &&
      optional_text(env, message, "reasoning_content", &reasoning) && (calls = java_calls(env, message))) {
    out = env->NewObject(refs.parsed_response, refs.parsed_response_init, content, reasoning, calls);
  }
  for (jobject local : {static_cast<jobject>(content), static_cast<jobject>(reasoning), static_cast<jobject>(calls)}) {
    if (local) env->DeleteLocalRef(local);
  }
  return out;
}

}  // namespace peak_jni
