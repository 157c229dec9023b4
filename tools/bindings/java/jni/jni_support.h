// What every part of the JNI glue shares: the Java classes and members it
// reaches (looked up once, in JNI_OnLoad), exceptions, text between Java
// strings and UTF-8, handles and sizes.
//
// Conventions: a helper that can fail returns false (or null) with a Java
// exception pending, and its caller returns at once; a native method never lets
// a C++ exception out (guarded()). Text crosses as UTF-8 bytes made into Java
// strings by new String(bytes, UTF_8): never NewStringUTF, which expects
// modified UTF-8 and rejects (on Android: aborts on) 4-byte characters and
// malformed bytes.
#ifndef PEAK_JNI_SUPPORT_H
#define PEAK_JNI_SUPPORT_H

#include <jni.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include <peak/peak.h>

namespace peak_jni {

// Global references and ids, written once by JNI_OnLoad, read-only after.
struct JavaRefs {
  JavaVM* vm = nullptr;
  jclass peak_exception = nullptr;
  jmethodID peak_exception_init = nullptr;  // (int status, String message)
  jclass string = nullptr;
  jmethodID string_from_bytes = nullptr;    // String(byte[], Charset)
  jobject utf8 = nullptr;                   // StandardCharsets.UTF_8
  jclass text_callback = nullptr;
  jmethodID text_callback_on_text = nullptr;
  jclass peak = nullptr;
  jmethodID peak_dispatch_log = nullptr;    // static (int level, String message)
  jclass message = nullptr;
  jmethodID message_init = nullptr;  // (int role, int state, String text, int imageCount)
  jclass tool_call = nullptr;
  jmethodID tool_call_init = nullptr;  // (String id, String name, String arguments)
  jclass tool_call_listener = nullptr;
  jmethodID tool_call_listener_on_call = nullptr;  // onToolCall(ToolCall call, int index)
  jclass parsed_response = nullptr;
  jmethodID parsed_response_init = nullptr;  // (String content, String reasoningContent, ToolCall[] toolCalls)
  jclass float_array = nullptr;              // float[], an embedding's vector
  jclass float_arrays = nullptr;             // float[][], a text's vectors
  jfieldID file_descriptor_fd = nullptr;    // FileDescriptor's int: "descriptor" (Android) or "fd"; may be null
  jfieldID generate_options_cancellation = nullptr;
  jfieldID generate_options_on_reasoning = nullptr;
  jfieldID generate_options_draft_model = nullptr;  // peak.DraftModel
  jmethodID native_handle_handle = nullptr;         // NativeHandle.handle(): throws once closed
  jfieldID cancellation_token_flag = nullptr;
};

extern JavaRefs refs;

// Looks up everything in JavaRefs (and the field tables); false with an
// exception pending when a class or member is missing.
bool bind_refs(JNIEnv* env, JavaVM* vm);

// ---- exceptions

// Throws peak.PeakException(status, message).
void throw_peak(JNIEnv* env, peak_status status, const std::string& message);
// PEAK_OK: true. Else throws PeakException with peak_last_error() and returns false.
bool check(JNIEnv* env, peak_status status);
// Throws NullPointerException naming the argument.
void throw_null(JNIEnv* env, const char* what);

// Runs a native method's body, turning a C++ exception (std::bad_alloc from a
// std::string) into PeakException; `failed` is then what the method returns.
template <class Result, class Body>
Result guarded(JNIEnv* env, Result failed, Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    throw_peak(env, PEAK_ERR_OUT_OF_MEMORY, "out of memory in the Java binding");
  } catch (...) {
    throw_peak(env, PEAK_ERR_INTERNAL, "unexpected error in the Java binding");
  }
  return failed;
}

template <class Body>
void guarded_void(JNIEnv* env, Body body) noexcept {
  guarded(env, 0, [&] {
    body();
    return 0;
  });
}

// ---- text

// A Java string as UTF-8 (an unpaired surrogate becomes U+FFFD). Null: throws
// NullPointerException naming `what`.
bool utf8_from_java(JNIEnv* env, jstring text, const char* what, std::string* out);
// The same for a C string argument, which cannot hold NUL: refused with
// PEAK_ERR_INVALID_ARGUMENT naming `what`.
bool c_string_from_java(JNIEnv* env, jstring text, const char* what, std::string* out);
// UTF-8 bytes (any: malformed ones become U+FFFD) as a Java string; null with
// an exception pending on failure.
jstring java_string(JNIEnv* env, const char* data, size_t length);
jstring java_string(JNIEnv* env, const char* text);

// Fetches the bytes a C API function writes as text (buf, capacity, *length),
// growing the buffer once when it is too small. `call` is
// peak_status(char* buf, size_t capacity, size_t* length).
template <class Call>
bool fetch_bytes(JNIEnv* env, Call call, std::string* out) {
  out->assign(256, '\0');
  size_t length = 0;
  peak_status status = call(&(*out)[0], out->size(), &length);
  if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
    out->assign(length + 1, '\0');
    status = call(&(*out)[0], out->size(), &length);
  }
  if (!check(env, status)) return false;
  out->resize(length);
  return true;
}

// The same as a Java string.
template <class Call>
jstring fetch_text(JNIEnv* env, Call call) {
  std::string text;
  if (!fetch_bytes(env, call, &text)) return nullptr;
  return java_string(env, text.data(), text.size());
}

// ---- handles and numbers

template <class T>
T* from_handle(jlong handle) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(handle));
}

inline jlong to_handle(const void* pointer) { return static_cast<jlong>(reinterpret_cast<intptr_t>(pointer)); }

// A Java long as a size_t: negative is refused naming `what`; beyond SIZE_MAX
// (32-bit targets) is SIZE_MAX, which peak refuses where it is too large.
bool size_from_java(JNIEnv* env, jlong value, const char* what, size_t* out);
// A size_t as a Java long, SIZE_MAX and anything beyond Long.MAX_VALUE as Long.MAX_VALUE.
jlong java_size(size_t value);
// A Java long as a uint64_t file offset or length: negative is refused naming `what`.
bool u64_from_java(JNIEnv* env, jlong value, const char* what, uint64_t* out);

}  // namespace peak_jni

#endif  // PEAK_JNI_SUPPORT_H
