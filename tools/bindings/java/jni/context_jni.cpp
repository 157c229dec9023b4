// Contexts (tokens and embedding rows), samplers and plain generation (peak.Context, peak.Sampler).
#include <jni.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <peak/peak.h>

#include "generation.h"
#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

namespace {

peak_context* context_of(jlong handle) { return from_handle<peak_context>(handle); }

// Calls use(values, n_rows) with the first n_rows x n_embd floats of `rows`,
// after checking the array holds them (a Java exception otherwise).
template <typename Use>
void with_embedding_rows(JNIEnv* env, jfloatArray rows, jlong n_rows, jlong n_embd, Use use) {
  if (!rows) {
    throw_null(env, "rows");
    return;
  }
  size_t c_rows = 0, c_embd = 0;
  if (!size_from_java(env, n_rows, "n_rows", &c_rows) || !size_from_java(env, n_embd, "n_embd", &c_embd)) return;
  // peak reads n_rows x n_embd floats: the array must hold them.
  const auto length = static_cast<size_t>(env->GetArrayLength(rows));
  if (c_embd > 0 && c_rows > length / c_embd) {
    throw_peak(env, PEAK_ERR_INVALID_ARGUMENT,
               "rows holds " + std::to_string(length) + " floats; " + std::to_string(c_rows) + " rows of n_embd " +
                   std::to_string(c_embd) + " need " + std::to_string(uint64_t{c_rows} * c_embd));
    return;
  }
  std::vector<float> values(c_rows * c_embd);
  env->GetFloatArrayRegion(rows, 0, static_cast<jsize>(values.size()), values.data());
  const float none = 0.0f;  // no rows: peak then names n_rows, not a NULL pointer
  use(values.empty() ? &none : values.data(), c_rows);
}

peak_sampler* sampler_of(jlong handle) { return from_handle<peak_sampler>(handle); }

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_contextCreate(JNIEnv* env, jclass, jlong model, jobject params, jlong group) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_context_params cp = peak_context_default_params();
    if (!context_params_fields.read(env, params, "params", &cp, nullptr)) return 0;
    cp.pass_group = from_handle<peak_pass_group>(group);
    peak_context* ctx = nullptr;
    if (!check(env, peak_context_create(from_handle<peak_model>(model), &cp, &ctx))) return 0;
    return to_handle(ctx);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextFree(JNIEnv*, jclass, jlong ctx) { peak_context_free(context_of(ctx)); }

JNIEXPORT jlong JNICALL Java_peak_Native_contextMemoryNeeded(JNIEnv* env, jclass, jlong model, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_context_params cp = peak_context_default_params();
    if (!context_params_fields.read(env, params, "params", &cp, nullptr)) return 0;
    size_t bytes = 0;
    if (!check(env, peak_context_memory_needed(from_handle<peak_model>(model), &cp, &bytes))) return 0;
    return java_size(bytes);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_contextNCtx(JNIEnv*, jclass, jlong ctx) {
  return java_size(peak_context_n_ctx(context_of(ctx)));
}

JNIEXPORT jlong JNICALL Java_peak_Native_contextNUsed(JNIEnv*, jclass, jlong ctx) {
  return java_size(peak_context_n_used(context_of(ctx)));
}

JNIEXPORT void JNICALL Java_peak_Native_contextSetThreads(JNIEnv* env, jclass, jlong ctx, jlong n_threads) {
  guarded_void(env, [&] {
    size_t n = 0;
    if (size_from_java(env, n_threads, "n_threads", &n)) check(env, peak_context_set_threads(context_of(ctx), n));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextEval(JNIEnv* env, jclass, jlong ctx, jintArray tokens) {
  guarded_void(env, [&] {
    if (!tokens) {
      throw_null(env, "tokens");
      return;
    }
    std::vector<int32_t> ids(static_cast<size_t>(env->GetArrayLength(tokens)));
    env->GetIntArrayRegion(tokens, 0, static_cast<jsize>(ids.size()), reinterpret_cast<jint*>(ids.data()));
    check(env, peak_context_eval(context_of(ctx), ids.data(), ids.size()));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextEvalEmbeddings(JNIEnv* env, jclass, jlong ctx, jfloatArray rows,
                                                              jlong n_rows, jlong n_embd, jboolean bidirectional) {
  guarded_void(env, [&] {
    with_embedding_rows(env, rows, n_rows, n_embd, [&](const float* values, size_t c_rows) {
      check(env, peak_context_eval_embeddings(context_of(ctx), values, c_rows, bidirectional ? 1 : 0));
    });
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextEvalPicture(JNIEnv* env, jclass, jlong ctx, jfloatArray rows,
                                                           jlong n_rows, jlong n_embd, jint token_cols) {
  guarded_void(env, [&] {
    if (token_cols < 0) {
      throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, "tokenCols is " + std::to_string(token_cols));
      return;
    }
    with_embedding_rows(env, rows, n_rows, n_embd, [&](const float* values, size_t c_rows) {
      check(env, peak_context_eval_picture(context_of(ctx), values, c_rows, static_cast<uint32_t>(token_cols)));
    });
  });
}

JNIEXPORT jfloatArray JNICALL Java_peak_Native_contextLogits(JNIEnv* env, jclass, jlong ctx, jlong n_vocab) {
  return guarded(env, jfloatArray{}, [&]() -> jfloatArray {
    const float* logits = peak_context_get_logits(context_of(ctx));
    if (!logits) {
      throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, "the context has no logits");
      return nullptr;
    }
    const auto n = static_cast<jsize>(n_vocab);
    jfloatArray out = env->NewFloatArray(n);
    if (out) env->SetFloatArrayRegion(out, 0, n, logits);
    return out;
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextKvClear(JNIEnv* env, jclass, jlong ctx) {
  guarded_void(env, [&] { check(env, peak_context_kv_clear(context_of(ctx))); });
}

JNIEXPORT jobject JNICALL Java_peak_Native_generate(JNIEnv* env, jclass, jlong ctx, jlong sampler, jstring prompt,
                                                     jobject options, jobject on_text) {
  return guarded(env, jobject{}, [&]() -> jobject {
    std::string c_prompt;
    Generation generation(env, on_text);
    peak_generate_params gp;
    if (!utf8_from_java(env, prompt, "prompt", &c_prompt) || !generation.params(options, &gp)) return nullptr;
    peak_generate_result result{};
    result.struct_size = sizeof result;
    const peak_status status =
        peak_generate(context_of(ctx), sampler_of(sampler), c_prompt.data(), c_prompt.size(), &gp, &result);
    return generation.finish(status, result);
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_samplerCreate(JNIEnv* env, jclass, jlong model, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_sampler_params sp = peak_sampler_default_params();
    std::deque<std::string> strings;  // grammar, grammar_root, json_schema
    if (!sampler_params_fields.read(env, params, "params", &sp, &strings)) return 0;
    peak_sampler* sampler = nullptr;
    if (!check(env, peak_sampler_create(from_handle<peak_model>(model), &sp, &sampler))) return 0;
    return to_handle(sampler);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_samplerFree(JNIEnv*, jclass, jlong sampler) {
  peak_sampler_free(sampler_of(sampler));
}

JNIEXPORT jint JNICALL Java_peak_Native_samplerSample(JNIEnv* env, jclass, jlong sampler, jlong ctx) {
  return guarded(env, jint{-1}, [&] {
    int32_t token = -1;
    check(env, peak_sampler_sample(sampler_of(sampler), context_of(ctx), &token));
    return static_cast<jint>(token);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_samplerAccept(JNIEnv* env, jclass, jlong sampler, jint token) {
  guarded_void(env, [&] { check(env, peak_sampler_accept(sampler_of(sampler), token)); });
}

JNIEXPORT void JNICALL Java_peak_Native_samplerReset(JNIEnv*, jclass, jlong sampler) {
  peak_sampler_reset(sampler_of(sampler));
}

}  // extern "C"
