// Embedders (peak.Embedder): texts to vectors with an encoder model.
#include <jni.h>

#include <limits>
#include <string>
#include <vector>

#include <peak/peak.h>

#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

namespace {

peak_embedder* embedder_of(jlong handle) { return from_handle<peak_embedder>(handle); }

// texts[i] as UTF-8 (any characters, NUL included: peak_embed takes lengths).
// A null array or element throws NullPointerException naming it ("texts[2]").
bool texts_from_java(JNIEnv* env, jobjectArray texts, std::vector<std::string>* out) {
  if (!texts) {
    throw_null(env, "texts");
    return false;
  }
  out->resize(static_cast<size_t>(env->GetArrayLength(texts)));
  for (size_t i = 0; i < out->size(); ++i) {
    auto text = static_cast<jstring>(env->GetObjectArrayElement(texts, static_cast<jsize>(i)));
    const std::string what = "texts[" + std::to_string(i) + "]";
    const bool ok = utf8_from_java(env, text, what.c_str(), &(*out)[i]);
    if (text) env->DeleteLocalRef(text);
    if (!ok) return false;
  }
  return true;
}

// peak_embed's output as Java arrays: float[n_texts][n_vectors[i]][n_embd],
// `floats` holding the vectors one after another. Null with an exception
// pending on failure. At most three local references live at once.
jobjectArray java_vectors(JNIEnv* env, const std::vector<float>& floats, const std::vector<size_t>& n_vectors,
                          size_t n_embd) {
  constexpr auto kMaxLength = static_cast<size_t>(std::numeric_limits<jsize>::max());
  if (n_embd > kMaxLength) {
    throw_peak(env, PEAK_ERR_OUT_OF_MEMORY, "vectors of " + std::to_string(n_embd) + " floats are too long for Java");
    return nullptr;
  }
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(n_vectors.size()), refs.float_arrays, nullptr);
  if (!out) return nullptr;
  const float* at = floats.data();
  for (size_t i = 0; i < n_vectors.size(); ++i) {
    // n_vectors[i] is at most the embedder's n_batch, which peak keeps within INT32_MAX.
    jobjectArray text = env->NewObjectArray(static_cast<jsize>(n_vectors[i]), refs.float_array, nullptr);
    if (!text) return nullptr;
    for (size_t v = 0; v < n_vectors[i]; ++v, at += n_embd) {
      jfloatArray vector = env->NewFloatArray(static_cast<jsize>(n_embd));
      if (!vector) return nullptr;
      env->SetFloatArrayRegion(vector, 0, static_cast<jsize>(n_embd), at);
      env->SetObjectArrayElement(text, static_cast<jsize>(v), vector);
      env->DeleteLocalRef(vector);
    }
    env->SetObjectArrayElement(out, static_cast<jsize>(i), text);
    env->DeleteLocalRef(text);
  }
  return out;
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_embedderCreate(JNIEnv* env, jclass, jlong model, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_embedder_params ep = peak_embedder_default_params();
    if (!embedder_params_fields.read(env, params, "params", &ep, nullptr)) return 0;
    peak_embedder* embedder = nullptr;
    if (!check(env, peak_embedder_create(from_handle<peak_model>(model), &ep, &embedder))) return 0;
    return to_handle(embedder);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_embedderFree(JNIEnv*, jclass, jlong embedder) {
  peak_embedder_free(embedder_of(embedder));
}

JNIEXPORT jlong JNICALL Java_peak_Native_embedderNEmbd(JNIEnv*, jclass, jlong embedder) {
  return java_size(peak_embedder_n_embd(embedder_of(embedder)));
}

JNIEXPORT jobjectArray JNICALL Java_peak_Native_embed(JNIEnv* env, jclass, jlong embedder, jobjectArray texts,
                                                      jobject options) {
  return guarded(env, jobjectArray{}, [&]() -> jobjectArray {
    std::vector<std::string> utf8;
    peak_embed_params ep = peak_embed_default_params();
    if (!texts_from_java(env, texts, &utf8) || !embed_options_fields.read(env, options, "options", &ep, nullptr)) {
      return nullptr;
    }
    std::vector<const char*> pointers;
    std::vector<size_t> lengths;
    for (const std::string& text : utf8) {
      pointers.push_back(text.data());
      lengths.push_back(text.size());
    }
    peak_embedder* e = embedder_of(embedder);
    const size_t n_embd = peak_embedder_n_embd(e);
    if (n_embd > 0 && utf8.size() > std::numeric_limits<size_t>::max() / sizeof(float) / n_embd) {
      throw_peak(
          env, PEAK_ERR_OUT_OF_MEMORY,
          std::to_string(utf8.size()) + " vectors of " + std::to_string(n_embd) + " floats do not fit in memory");
      return nullptr;
    }
    // Room for one vector per text, which pooled vectors fill; a vector per
    // token needs more, which the first call reports (tokenizing is cheap
    // beside the forward pass).
    std::vector<float> floats(utf8.size() * n_embd);
    std::vector<size_t> n_vectors(utf8.size());
    size_t n_floats = 0;
    auto embed = [&] {
      return peak_embed(e, pointers.data(), lengths.data(), utf8.size(), &ep, floats.data(), floats.size(), &n_floats,
                        n_vectors.data());
    };
    peak_status status = embed();
    if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
      floats.resize(n_floats);
      status = embed();
    }
    if (!check(env, status)) return nullptr;
    return java_vectors(env, floats, n_vectors, n_embd);
  });
}

}  // extern "C"
