// Library-wide calls (peak.Peak), parameter defaults, cancellation flags, log
// routing, and JNI_OnLoad.
#include <jni.h>

#include <cstdio>
#include <deque>
#include <string>

#include <peak/peak.h>

#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"
#include "tool_calls.h"

#ifdef __ANDROID__
#include <android/log.h>
#endif

using namespace peak_jni;

namespace {

// Where messages go without a Java logger: logcat on Android (an app's stderr
// goes nowhere), else the library's default, stderr.
#ifdef __ANDROID__
void log_to_logcat(peak_log_level level, const char* message, void*) {
  static const int priorities[] = {ANDROID_LOG_ERROR, ANDROID_LOG_WARN, ANDROID_LOG_INFO, ANDROID_LOG_DEBUG};
  const int priority = level >= 0 && level <= PEAK_LOG_DEBUG ? priorities[level] : ANDROID_LOG_DEBUG;
  __android_log_write(priority, "peak", message);
}
constexpr peak_log_fn kDefaultLog = log_to_logcat;
#else
constexpr peak_log_fn kDefaultLog = nullptr;
#endif

void log_default(peak_log_level level, const char* message) {
#ifdef __ANDROID__
  log_to_logcat(level, message, nullptr);
#else
  (void)level;
  std::fprintf(stderr, "peak: %s\n", message);
#endif
}

jint attach(JavaVM* vm, JNIEnv** env) {
  JavaVMAttachArgs args{JNI_VERSION_1_6, const_cast<char*>("peak"), nullptr};
#ifdef __ANDROID__
  return vm->AttachCurrentThreadAsDaemon(env, &args);  // the NDK's jni.h takes JNIEnv**
#else
  return vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(env), &args);
#endif
}

// Passes a message to Peak.dispatchLog on whichever thread wrote it. A thread
// of peak's own (a summary worker, the repacking) is attached for the call and
// detached after it: messages are rare, and a thread left attached would have
// to detach itself before it ends.
void log_to_java(peak_log_level level, const char* message, void*) noexcept {
  JNIEnv* env = nullptr;
  bool attached = false;
  const jint got = refs.vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6);
  if (got == JNI_EDETACHED) {
    if (attach(refs.vm, &env) != JNI_OK) {
      log_default(level, message);
      return;
    }
    attached = true;
  } else if (got != JNI_OK || env->ExceptionCheck()) {
    log_default(level, message);  // no JVM to call, or it may not be called now
    return;
  }
  jstring text = java_string(env, message);
  if (text) {
    env->CallStaticVoidMethod(refs.peak, refs.peak_dispatch_log, static_cast<jint>(level), text);
    env->DeleteLocalRef(text);
  }
  if (env->ExceptionCheck()) {  // Logger says it must not throw: report and drop it
    env->ExceptionDescribe();
    env->ExceptionClear();
  }
  if (attached) refs.vm->DetachCurrentThread();
}

template <class Params>
void write_defaults(JNIEnv* env, const StructFields& fields, Params defaults, jobject target) {
  fields.write(env, &defaults, target);
}

}  // namespace

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  if (!bind_refs(env, vm)) return JNI_ERR;  // the pending NoSuchFieldError ... says what is missing
  peak_set_log_callback(kDefaultLog, nullptr);
  return JNI_VERSION_1_6;
}

extern "C" {

JNIEXPORT jstring JNICALL Java_peak_Native_version(JNIEnv* env, jclass) {
  return guarded(env, jstring{}, [&] { return java_string(env, peak_version()); });
}

JNIEXPORT jstring JNICALL Java_peak_Native_systemInfo(JNIEnv* env, jclass) {
  return guarded(env, jstring{}, [&] { return java_string(env, peak_system_info()); });
}

JNIEXPORT jstring JNICALL Java_peak_Native_statusName(JNIEnv* env, jclass, jint status) {
  return guarded(env, jstring{}, [&] { return java_string(env, peak_status_name(static_cast<peak_status>(status))); });
}

JNIEXPORT jlong JNICALL Java_peak_Native_defaultThreads(JNIEnv*, jclass) {
  return java_size(peak_default_threads());
}

JNIEXPORT void JNICALL Java_peak_Native_setLogLevel(JNIEnv* env, jclass, jint level) {
  guarded_void(env, [&] { check(env, peak_set_log_level(static_cast<peak_log_level>(level))); });
}

JNIEXPORT void JNICALL Java_peak_Native_useJavaLogger(JNIEnv*, jclass, jboolean enabled) {
  peak_set_log_callback(enabled ? log_to_java : kDefaultLog, nullptr);
}

JNIEXPORT void JNICALL Java_peak_Native_fillDefaults(JNIEnv* env, jclass, jobject params) {
  guarded_void(env, [&] {
    if (!params) {
      throw_null(env, "params");
    } else if (model_params_fields.is_instance(env, params)) {
      write_defaults(env, model_params_fields, peak_model_default_params(), params);
    } else if (context_params_fields.is_instance(env, params)) {
      write_defaults(env, context_params_fields, peak_context_default_params(), params);
    } else if (pass_group_params_fields.is_instance(env, params)) {
      write_defaults(env, pass_group_params_fields, peak_pass_group_default_params(), params);
    } else if (sampler_params_fields.is_instance(env, params)) {
      write_defaults(env, sampler_params_fields, peak_sampler_default_params(), params);
    } else if (generate_options_fields.is_instance(env, params)) {
      write_defaults(env, generate_options_fields, peak_generate_default_params(), params);
    } else if (session_params_fields.is_instance(env, params)) {
      write_defaults(env, session_params_fields, peak_session_default_params(), params);
    } else if (tool_parse_params_fields.is_instance(env, params)) {
      write_defaults(env, tool_parse_params_fields, peak_tool_parse_default_params(), params);
    } else if (embedder_params_fields.is_instance(env, params)) {
      write_defaults(env, embedder_params_fields, peak_embedder_default_params(), params);
    } else if (embed_options_fields.is_instance(env, params)) {
      write_defaults(env, embed_options_fields, peak_embed_default_params(), params);
    } else if (rerank_options_fields.is_instance(env, params)) {
      write_defaults(env, rerank_options_fields, peak_rerank_default_params(), params);
    } else if (image_encoder_params_fields.is_instance(env, params)) {
      write_defaults(env, image_encoder_params_fields, peak_image_encoder_default_params(), params);
    } else {
      throw_peak(env, PEAK_ERR_INTERNAL, "fillDefaults: not a parameter class");
    }
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_parseResponse(JNIEnv* env, jclass, jlong model, jstring text,
                                                         jobject params) {
  return guarded(env, jobject{}, [&]() -> jobject {
    std::string c_text;  // may hold NUL: the length counts
    peak_tool_parse_params p = peak_tool_parse_default_params();
    std::deque<std::string> strings;  // format_name, template_source, tools_json, id_prefix, the markers
    if (!utf8_from_java(env, text, "text", &c_text) ||
        !tool_parse_params_fields.read(env, params, "params", &p, &strings)) {
      return nullptr;
    }
    std::string message;
    const bool parsed = fetch_bytes(
        env,
        [&](char* buf, size_t capacity, size_t* length) {
          return peak_chat_parse_response(from_handle<peak_model>(model), &p, c_text.data(), c_text.size(), buf,
                                          capacity, length);
        },
        &message);
    return parsed ? java_parsed_response(env, message) : nullptr;
  });
}

// The flag is an int the C API reads with atomic loads (peak_generate_params.abort_flag).
JNIEXPORT void JNICALL Java_peak_Native_flagStore(JNIEnv* env, jclass, jobject flag, jint value) {
  auto* p = static_cast<int*>(env->GetDirectBufferAddress(flag));
  if (p) __atomic_store_n(p, static_cast<int>(value), __ATOMIC_RELAXED);
}

JNIEXPORT jint JNICALL Java_peak_Native_flagLoad(JNIEnv* env, jclass, jobject flag) {
  const auto* p = static_cast<const int*>(env->GetDirectBufferAddress(flag));
  return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0;
}

}  // extern "C"
