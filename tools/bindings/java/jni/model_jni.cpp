// Models (peak.Model): loading by path or from a region of an open file, memory
// estimates, information and the token functions.
#include <jni.h>

#include <deque>
#include <string>
#include <vector>

#include <peak/peak.h>

#include "file_load.h"
#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

namespace {

peak_model* model_of(jlong handle) { return from_handle<peak_model>(handle); }

// A file region's offset and length, as peak_model_load_fd takes them.

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_modelLoad(JNIEnv* env, jclass, jstring path, jobject params) {
  return guarded(env, jlong{0}, [&] { return load_path<peak_model>(env, path, params, peak_model_load); });
}

JNIEXPORT jlong JNICALL Java_peak_Native_modelLoadFd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length,
                                                      jobject params) {
  return guarded(env, jlong{0},
                 [&] { return load_fd<peak_model>(env, fd, offset, length, params, peak_model_load_fd); });
}

JNIEXPORT jlong JNICALL Java_peak_Native_modelLoadVocab(JNIEnv* env, jclass, jstring path) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    std::string c_path;
    if (!c_string_from_java(env, path, "path", &c_path)) return 0;
    peak_model* model = nullptr;
    if (!check(env, peak_model_load_vocab(c_path.c_str(), &model))) return 0;
    return to_handle(model);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_modelLoadVocabFd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    uint64_t c_offset = 0, c_length = 0;
    if (!region(env, offset, length, &c_offset, &c_length)) return 0;
    peak_model* model = nullptr;
    if (!check(env, peak_model_load_vocab_fd(fd, c_offset, c_length, &model))) return 0;
    return to_handle(model);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_modelFree(JNIEnv*, jclass, jlong model) { peak_model_free(model_of(model)); }

JNIEXPORT jobject JNICALL Java_peak_Native_modelInfo(JNIEnv* env, jclass, jlong model) {
  return guarded(env, jobject{}, [&]() -> jobject {
    peak_model_info info{};
    info.struct_size = sizeof info;
    if (!check(env, peak_model_get_info(model_of(model), &info))) return nullptr;
    jobject made = model_info_fields.make(env, &info);
    if (!made) return nullptr;
    // general.name may hold a NUL, where the C string the mirrored field reads ends.
    jclass cls = env->GetObjectClass(made);
    const jfieldID name = env->GetFieldID(cls, "name", "Ljava/lang/String;");
    env->DeleteLocalRef(cls);
    if (!name) return nullptr;
    jstring whole = java_string(env, info.name, info.name_length);
    if (!whole) return nullptr;
    env->SetObjectField(made, name, whole);
    env->DeleteLocalRef(whole);
    return made;
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_estimateMemory(JNIEnv* env, jclass, jstring path, jobject model_params,
                                                           jobject context_params) {
  return guarded(env, jobject{}, [&]() -> jobject {
    std::string c_path;
    peak_model_params mp = peak_model_default_params();
    peak_context_params cp = peak_context_default_params();
    if (!c_string_from_java(env, path, "path", &c_path) ||
        !model_params_fields.read(env, model_params, "model", &mp, nullptr) ||
        !context_params_fields.read(env, context_params, "context", &cp, nullptr)) {
      return nullptr;
    }
    peak_memory_estimate estimate = empty_estimate();
    return estimate_result(env, peak_model_estimate_memory(c_path.c_str(), &mp, &cp, &estimate), estimate);
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_estimateMemoryFd(JNIEnv* env, jclass, jint fd, jlong offset, jlong length,
                                                             jobject model_params, jobject context_params) {
  return guarded(env, jobject{}, [&]() -> jobject {
    uint64_t c_offset = 0, c_length = 0;
    peak_model_params mp = peak_model_default_params();
    peak_context_params cp = peak_context_default_params();
    if (!region(env, offset, length, &c_offset, &c_length) ||
        !model_params_fields.read(env, model_params, "model", &mp, nullptr) ||
        !context_params_fields.read(env, context_params, "context", &cp, nullptr)) {
      return nullptr;
    }
    peak_memory_estimate estimate = empty_estimate();
    return estimate_result(env, peak_model_estimate_memory_fd(fd, c_offset, c_length, &mp, &cp, &estimate), estimate);
  });
}

JNIEXPORT jint JNICALL Java_peak_Native_fdOf(JNIEnv* env, jclass, jobject fd) {
  return guarded(env, jint{-1}, [&]() -> jint {
    if (!fd) {
      throw_null(env, "fd");
      return -1;
    }
    if (!refs.file_descriptor_fd) {
      throw_peak(env, PEAK_ERR_UNSUPPORTED,
                 "this runtime's FileDescriptor has no descriptor number peak can read: pass the int "
                 "(ParcelFileDescriptor.getFd())");
      return -1;
    }
    return env->GetIntField(fd, refs.file_descriptor_fd);
  });
}

JNIEXPORT jintArray JNICALL Java_peak_Native_tokenize(JNIEnv* env, jclass, jlong model, jstring text,
                                                       jboolean add_special, jboolean parse_special) {
  return guarded(env, jintArray{}, [&]() -> jintArray {
    std::string c_text;
    if (!utf8_from_java(env, text, "text", &c_text)) return nullptr;
    // One token per byte at most, but for BOS and EOS: a second call is rare.
    std::vector<int32_t> tokens(c_text.size() + 4);
    size_t n = 0;
    auto tokenize = [&] {
      return peak_tokenize(model_of(model), c_text.data(), c_text.size(), add_special, parse_special, tokens.data(),
                           tokens.size(), &n);
    };
    peak_status status = tokenize();
    if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
      tokens.resize(n);
      status = tokenize();
    }
    if (!check(env, status)) return nullptr;
    jintArray out = env->NewIntArray(static_cast<jsize>(n));
    if (out) env->SetIntArrayRegion(out, 0, static_cast<jsize>(n), reinterpret_cast<const jint*>(tokens.data()));
    return out;
  });
}

JNIEXPORT jbyteArray JNICALL Java_peak_Native_tokenPiece(JNIEnv* env, jclass, jlong model, jint token,
                                                          jboolean render_special) {
  return guarded(env, jbyteArray{}, [&]() -> jbyteArray {
    std::string piece;
    if (!fetch_bytes(env,
                     [&](char* buf, size_t capacity, size_t* length) {
                       return peak_token_to_piece(model_of(model), token, render_special, buf, capacity, length);
                     },
                     &piece)) {
      return nullptr;
    }
    const auto length = static_cast<jsize>(piece.size());
    jbyteArray out = env->NewByteArray(length);
    if (out) env->SetByteArrayRegion(out, 0, length, reinterpret_cast<const jbyte*>(piece.data()));
    return out;
  });
}

JNIEXPORT jstring JNICALL Java_peak_Native_detokenize(JNIEnv* env, jclass, jlong model, jintArray tokens,
                                                       jboolean remove_special, jboolean render_special) {
  return guarded(env, jstring{}, [&]() -> jstring {
    if (!tokens) {
      throw_null(env, "tokens");
      return nullptr;
    }
    std::vector<int32_t> ids(static_cast<size_t>(env->GetArrayLength(tokens)));
    env->GetIntArrayRegion(tokens, 0, static_cast<jsize>(ids.size()), reinterpret_cast<jint*>(ids.data()));
    return fetch_text(env, [&](char* buf, size_t capacity, size_t* length) {
      return peak_detokenize(model_of(model), ids.data(), ids.size(), remove_special, render_special, buf, capacity,
                             length);
    });
  });
}

JNIEXPORT jboolean JNICALL Java_peak_Native_tokenIsEog(JNIEnv*, jclass, jlong model, jint token) {
  return peak_token_is_eog(model_of(model), token) ? JNI_TRUE : JNI_FALSE;
}

}  // extern "C"
