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

// A Java String[] as UTF-8 texts with the pointers and lengths the C API
// takes (any characters, NUL included: it takes lengths).
struct Utf8Texts {
  std::vector<std::string> texts;
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
};

// A null array or element throws NullPointerException naming it: `what`
// ("texts"), or the element ("texts[2]").
bool texts_from_java(JNIEnv* env, jobjectArray texts, const char* what, Utf8Texts* out) {
  if (!texts) {
    throw_null(env, what);
    return false;
  }
  const size_t n = static_cast<size_t>(env->GetArrayLength(texts));
  out->texts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    auto text = static_cast<jstring>(env->GetObjectArrayElement(texts, static_cast<jsize>(i)));
    const std::string which = std::string(what) + "[" + std::to_string(i) + "]";
    const bool ok = utf8_from_java(env, text, which.c_str(), &out->texts[i]);
    if (text) env->DeleteLocalRef(text);
    if (!ok) return false;
  }
  for (const std::string& text : out->texts) {
    out->pointers.push_back(text.data());
    out->lengths.push_back(text.size());
  }
  return true;
}

// A Java int[][] of token ids as the sequences peak_embed_tokens takes. A null
// array or element throws NullPointerException naming it ("ids", "ids[2]").
bool ids_from_java(JNIEnv* env, jobjectArray ids, std::vector<std::vector<int32_t>>* out) {
  if (!ids) {
    throw_null(env, "ids");
    return false;
  }
  out->resize(static_cast<size_t>(env->GetArrayLength(ids)));
  for (size_t i = 0; i < out->size(); ++i) {
    auto sequence = static_cast<jintArray>(env->GetObjectArrayElement(ids, static_cast<jsize>(i)));
    if (!sequence) {
      throw_null(env, ("ids[" + std::to_string(i) + "]").c_str());
      return false;
    }
    const jsize n = env->GetArrayLength(sequence);
    (*out)[i].resize(static_cast<size_t>(n));
    env->GetIntArrayRegion(sequence, 0, n, reinterpret_cast<jint*>((*out)[i].data()));
    env->DeleteLocalRef(sequence);
  }
  return true;
}

// peak_embed's output as Java arrays: float[n_texts][n_vectors[i]][vector_length],
// `floats` holding the vectors one after another. Null with an exception
// pending on failure. At most three local references live at once.
jobjectArray java_vectors(JNIEnv* env, const std::vector<float>& floats, const std::vector<size_t>& n_vectors,
                          size_t vector_length) {
  constexpr auto kMaxLength = static_cast<size_t>(std::numeric_limits<jsize>::max());
  if (vector_length > kMaxLength) {
    throw_peak(env, PEAK_ERR_OUT_OF_MEMORY,
               "vectors of " + std::to_string(vector_length) + " floats are too long for Java");
    return nullptr;
  }
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(n_vectors.size()), refs.float_arrays, nullptr);
  if (!out) return nullptr;
  const float* at = floats.data();
  for (size_t i = 0; i < n_vectors.size(); ++i) {
    // n_vectors[i] is at most the embedder's n_batch, which peak keeps within INT32_MAX.
    jobjectArray text = env->NewObjectArray(static_cast<jsize>(n_vectors[i]), refs.float_array, nullptr);
    if (!text) return nullptr;
    for (size_t v = 0; v < n_vectors[i]; ++v, at += vector_length) {
      jfloatArray vector = env->NewFloatArray(static_cast<jsize>(vector_length));
      if (!vector) return nullptr;
      env->SetFloatArrayRegion(vector, 0, static_cast<jsize>(vector_length), at);
      env->SetObjectArrayElement(text, static_cast<jsize>(v), vector);
      env->DeleteLocalRef(vector);
    }
    env->SetObjectArrayElement(out, static_cast<jsize>(i), text);
    env->DeleteLocalRef(text);
  }
  return out;
}

// Runs peak_embed or peak_embed_tokens on n_inputs texts or sequences:
// `call(out, capacity, n_floats, n_vectors)` is the call, `ep` its params. Null
// with an exception pending on failure.
template <class Call>
jobjectArray embedded(JNIEnv* env, const peak_embedder* embedder, size_t n_inputs, const peak_embed_params& ep,
                      Call call) {
  const size_t n_embd = peak_embedder_n_embd(embedder);
  if (n_embd > 0 && n_inputs > std::numeric_limits<size_t>::max() / sizeof(float) / n_embd) {
    throw_peak(env, PEAK_ERR_OUT_OF_MEMORY,
               std::to_string(n_inputs) + " vectors of " + std::to_string(n_embd) + " floats do not fit in memory");
    return nullptr;
  }
  // Room for one vector of n_embd floats per input, which pooled vectors fill
  // (params.dimensions, when valid, is fewer); a vector per token needs more,
  // which the first call reports (tokenizing is cheap beside the forward pass).
  std::vector<float> floats(n_inputs * n_embd);
  std::vector<size_t> n_vectors(n_inputs);
  size_t n_floats = 0;
  peak_status status = call(floats.data(), floats.size(), &n_floats, n_vectors.data());
  if (status == PEAK_ERR_BUFFER_TOO_SMALL) {
    floats.resize(n_floats);
    status = call(floats.data(), floats.size(), &n_floats, n_vectors.data());
  }
  if (!check(env, status)) return nullptr;
  // The call accepted ep.dimensions: at most n_embd.
  return java_vectors(env, floats, n_vectors, ep.dimensions > 0 ? ep.dimensions : n_embd);
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
    Utf8Texts utf8;
    peak_embed_params ep = peak_embed_default_params();
    if (!texts_from_java(env, texts, "texts", &utf8) ||
        !embed_options_fields.read(env, options, "options", &ep, nullptr)) {
      return nullptr;
    }
    peak_embedder* e = embedder_of(embedder);
    return embedded(env, e, utf8.texts.size(), ep,
                    [&](float* out, size_t capacity, size_t* n_floats, size_t* n_vectors) {
                      return peak_embed(e, utf8.pointers.data(), utf8.lengths.data(), utf8.texts.size(), &ep, out,
                                        capacity, n_floats, n_vectors);
                    });
  });
}

JNIEXPORT jobjectArray JNICALL Java_peak_Native_embedIds(JNIEnv* env, jclass, jlong embedder, jobjectArray ids,
                                                         jobject options) {
  return guarded(env, jobjectArray{}, [&]() -> jobjectArray {
    std::vector<std::vector<int32_t>> sequences;
    peak_embed_params ep = peak_embed_default_params();
    if (!ids_from_java(env, ids, &sequences) || !embed_options_fields.read(env, options, "options", &ep, nullptr)) {
      return nullptr;
    }
    std::vector<const int32_t*> pointers;
    std::vector<size_t> lengths;
    for (const std::vector<int32_t>& sequence : sequences) {
      pointers.push_back(sequence.data());
      lengths.push_back(sequence.size());
    }
    peak_embedder* e = embedder_of(embedder);
    return embedded(env, e, sequences.size(), ep,
                    [&](float* out, size_t capacity, size_t* n_floats, size_t* n_vectors) {
                      return peak_embed_tokens(e, pointers.data(), lengths.data(), sequences.size(), &ep, out, capacity,
                                               n_floats, n_vectors);
                    });
  });
}

JNIEXPORT jfloatArray JNICALL Java_peak_Native_rerank(JNIEnv* env, jclass, jlong embedder, jstring query,
                                                      jobjectArray documents, jobject options) {
  return guarded(env, jfloatArray{}, [&]() -> jfloatArray {
    std::string utf8_query;
    Utf8Texts utf8;
    peak_rerank_params rp = peak_rerank_default_params();
    if (!utf8_from_java(env, query, "query", &utf8_query) || !texts_from_java(env, documents, "documents", &utf8) ||
        !rerank_options_fields.read(env, options, "options", &rp, nullptr)) {
      return nullptr;
    }
    std::vector<float> scores(utf8.texts.size());
    if (!check(env, peak_rerank(embedder_of(embedder), utf8_query.data(), utf8_query.size(), utf8.pointers.data(),
                                utf8.lengths.data(), scores.size(), &rp, scores.data()))) {
      return nullptr;
    }
    // As many scores as the Java array had documents.
    const auto n = static_cast<jsize>(scores.size());
    jfloatArray out = env->NewFloatArray(n);
    if (out) env->SetFloatArrayRegion(out, 0, n, scores.data());
    return out;
  });
}

}  // extern "C"
