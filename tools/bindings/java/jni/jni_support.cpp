#include "jni_support.h"

#include <cstring>
#include <limits>

#include "struct_fields.h"

namespace peak_jni {

JavaRefs refs;

namespace {

// A global reference to a class; null with NoClassDefFoundError pending.
jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (!local) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

// FileDescriptor's int field: Android calls it "descriptor", OpenJDK "fd". A
// runtime with neither leaves the id null (Model.load(FileDescriptor ...) is then
// refused; the int overloads still work).
jfieldID file_descriptor_field(JNIEnv* env) {
  jclass cls = env->FindClass("java/io/FileDescriptor");
  if (!cls) return nullptr;
  jfieldID id = nullptr;
  for (const char* name : {"descriptor", "fd"}) {
    id = env->GetFieldID(cls, name, "I");
    if (id) break;
    env->ExceptionClear();  // NoSuchFieldError: try the other name
  }
  env->DeleteLocalRef(cls);
  return id;
}

// Appends code point `c` (at most U+10FFFF) as UTF-8.
void append_utf8(std::string* out, uint32_t c) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace

bool bind_refs(JNIEnv* env, JavaVM* vm) {
  refs.vm = vm;
  if (!(refs.peak_exception = global_class(env, "peak/PeakException"))) return false;
  if (!(refs.peak_exception_init = env->GetMethodID(refs.peak_exception, "<init>", "(ILjava/lang/String;)V"))) return false;
  if (!(refs.string = global_class(env, "java/lang/String"))) return false;
  if (!(refs.string_from_bytes = env->GetMethodID(refs.string, "<init>", "([BLjava/nio/charset/Charset;)V"))) return false;
  jclass charsets = env->FindClass("java/nio/charset/StandardCharsets");
  if (!charsets) return false;
  jfieldID utf8_field = env->GetStaticFieldID(charsets, "UTF_8", "Ljava/nio/charset/Charset;");
  if (!utf8_field) return false;
  jobject utf8 = env->GetStaticObjectField(charsets, utf8_field);
  if (!utf8) return false;
  refs.utf8 = env->NewGlobalRef(utf8);
  env->DeleteLocalRef(utf8);
  env->DeleteLocalRef(charsets);
  if (!(refs.text_callback = global_class(env, "peak/TextCallback"))) return false;
  if (!(refs.text_callback_on_text = env->GetMethodID(refs.text_callback, "onText", "(Ljava/lang/String;)V"))) return false;
  if (!(refs.peak = global_class(env, "peak/Peak"))) return false;
  if (!(refs.peak_dispatch_log = env->GetStaticMethodID(refs.peak, "dispatchLog", "(ILjava/lang/String;)V"))) return false;
  if (!(refs.message = global_class(env, "peak/Message"))) return false;
  if (!(refs.message_init = env->GetMethodID(refs.message, "<init>", "(IILjava/lang/String;I)V"))) return false;
  if (!(refs.tool_call = global_class(env, "peak/ToolCall"))) return false;
  if (!(refs.tool_call_init =
            env->GetMethodID(refs.tool_call, "<init>", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V"))) {
    return false;
  }
  if (!(refs.tool_call_listener = global_class(env, "peak/ToolCallListener"))) return false;
  if (!(refs.tool_call_listener_on_call =
            env->GetMethodID(refs.tool_call_listener, "onToolCall", "(Lpeak/ToolCall;I)V"))) {
    return false;
  }
  if (!(refs.parsed_response = global_class(env, "peak/ParsedResponse"))) return false;
  if (!(refs.parsed_response_init = env->GetMethodID(refs.parsed_response, "<init>",
                                                     "(Ljava/lang/String;Ljava/lang/String;[Lpeak/ToolCall;)V"))) {
    return false;
  }
  if (!(refs.float_array = global_class(env, "[F"))) return false;
  if (!(refs.float_arrays = global_class(env, "[[F"))) return false;
  refs.file_descriptor_fd = file_descriptor_field(env);
  if (env->ExceptionCheck()) return false;

  jclass options = env->FindClass("peak/GenerateOptions");
  if (!options) return false;
  refs.generate_options_cancellation = env->GetFieldID(options, "cancellation", "Lpeak/CancellationToken;");
  refs.generate_options_on_reasoning = env->GetFieldID(options, "onReasoning", "Lpeak/TextCallback;");
  refs.generate_options_draft_model = env->GetFieldID(options, "draftModel", "Lpeak/DraftModel;");
  env->DeleteLocalRef(options);
  if (!refs.generate_options_cancellation || !refs.generate_options_on_reasoning ||
      !refs.generate_options_draft_model) {
    return false;
  }
  jclass handle = env->FindClass("peak/NativeHandle");
  if (!handle) return false;
  refs.native_handle_handle = env->GetMethodID(handle, "handle", "()J");
  env->DeleteLocalRef(handle);
  if (!refs.native_handle_handle) return false;
  jclass token = env->FindClass("peak/CancellationToken");
  if (!token) return false;
  refs.cancellation_token_flag = env->GetFieldID(token, "flag", "Ljava/nio/ByteBuffer;");
  env->DeleteLocalRef(token);
  if (!refs.cancellation_token_flag) return false;
  return bind_struct_fields(env);
}

void throw_peak(JNIEnv* env, peak_status status, const std::string& message) {
  jstring text = java_string(env, message.data(), message.size());
  if (!text) return;  // OutOfMemoryError pending instead
  auto exception = static_cast<jthrowable>(
      env->NewObject(refs.peak_exception, refs.peak_exception_init, static_cast<jint>(status), text));
  env->DeleteLocalRef(text);
  if (!exception) return;
  env->Throw(exception);
  env->DeleteLocalRef(exception);
}

bool check(JNIEnv* env, peak_status status) {
  if (status == PEAK_OK) return true;
  throw_peak(env, status, peak_last_error());
  return false;
}

void throw_null(JNIEnv* env, const char* what) {
  jclass npe = env->FindClass("java/lang/NullPointerException");
  if (npe) env->ThrowNew(npe, what);  // an ASCII name: modified UTF-8 is plain UTF-8 here
}

bool utf8_from_java(JNIEnv* env, jstring text, const char* what, std::string* out) {
  if (!text) {
    throw_null(env, what);
    return false;
  }
  const jsize n = env->GetStringLength(text);
  // At most 3 bytes per UTF-16 unit (a pair of them is 4), reserved first: in
  // the critical section below nothing may allocate or call into the JVM.
  out->clear();
  out->reserve(3 * static_cast<size_t>(n));
  const jchar* chars = env->GetStringCritical(text, nullptr);
  if (!chars) return false;  // OutOfMemoryError pending
  for (jsize i = 0; i < n; ++i) {
    uint32_t c = chars[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && chars[i + 1] >= 0xDC00 && chars[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (chars[i + 1] - 0xDC00u);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;  // an unpaired surrogate is no character
    }
    append_utf8(out, c);
  }
  env->ReleaseStringCritical(text, chars);
  return true;
}

bool c_string_from_java(JNIEnv* env, jstring text, const char* what, std::string* out) {
  if (!utf8_from_java(env, text, what, out)) return false;
  if (out->find('\0') != std::string::npos) {
    throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, std::string(what) + " holds a NUL character");
    return false;
  }
  return true;
}

jstring java_string(JNIEnv* env, const char* data, size_t length) {
  if (length > static_cast<size_t>(std::numeric_limits<jsize>::max())) {
    throw_peak(env, PEAK_ERR_OUT_OF_MEMORY, "a text of " + std::to_string(length) + " bytes is too long for a Java string");
    return nullptr;
  }
  jbyteArray bytes = env->NewByteArray(static_cast<jsize>(length));
  if (!bytes) return nullptr;
  env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(length), reinterpret_cast<const jbyte*>(data));
  auto text = static_cast<jstring>(env->NewObject(refs.string, refs.string_from_bytes, bytes, refs.utf8));
  env->DeleteLocalRef(bytes);
  return text;
}

jstring java_string(JNIEnv* env, const char* text) { return java_string(env, text, std::strlen(text)); }

namespace {

bool refuse_negative(JNIEnv* env, jlong value, const char* what) {
  if (value >= 0) return false;
  throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, std::string(what) + " is " + std::to_string(value) + "; it must be at least 0");
  return true;
}

}  // namespace

bool size_from_java(JNIEnv* env, jlong value, const char* what, size_t* out) {
  if (refuse_negative(env, value, what)) return false;
  const auto wide = static_cast<uint64_t>(value);
  *out = wide > std::numeric_limits<size_t>::max() ? std::numeric_limits<size_t>::max() : static_cast<size_t>(wide);
  return true;
}

jlong java_size(size_t value) {
  constexpr auto max = static_cast<uint64_t>(std::numeric_limits<jlong>::max());
  return static_cast<uint64_t>(value) >= max ? std::numeric_limits<jlong>::max() : static_cast<jlong>(value);
}

bool u64_from_java(JNIEnv* env, jlong value, const char* what, uint64_t* out) {
  if (refuse_negative(env, value, what)) return false;
  *out = static_cast<uint64_t>(value);
  return true;
}

}  // namespace peak_jni
