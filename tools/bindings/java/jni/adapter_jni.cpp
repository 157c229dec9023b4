// Adapters (peak.Adapter): LoRA adapters and control vectors, set on contexts
// and sessions.
#include <jni.h>

#include <string>
#include <vector>

#include <peak/peak.h>

#include "java_session.h"
#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

namespace {

// Adapters and scales pairwise (Java gives arrays of one length), and the
// control vectors' layer range, as peak_*_set_adapters takes them; `uses`
// holds what params->adapters points to.
bool adapter_set_params(JNIEnv* env, jlongArray adapters, jfloatArray scales, jlong first, jlong last,
                        std::vector<peak_adapter_use>* uses, peak_adapter_set_params* params) {
  if (!adapters || !scales) {
    throw_null(env, adapters ? "scales" : "adapters");
    return false;
  }
  const jsize n = env->GetArrayLength(adapters);
  if (env->GetArrayLength(scales) != n) {
    throw_peak(env, PEAK_ERR_INVALID_ARGUMENT, "adapters and scales differ in length");
    return false;
  }
  std::vector<jlong> handles(static_cast<size_t>(n));
  std::vector<jfloat> values(static_cast<size_t>(n));
  env->GetLongArrayRegion(adapters, 0, n, handles.data());
  env->GetFloatArrayRegion(scales, 0, n, values.data());
  uses->clear();
  for (jsize i = 0; i < n; ++i) uses->push_back({from_handle<peak_adapter>(handles[i]), values[i]});
  *params = peak_adapter_set_default_params();
  params->adapters = uses->data();
  params->n_adapters = uses->size();
  return size_from_java(env, first, "control_first_layer", &params->control_first_layer) &&
         size_from_java(env, last, "control_last_layer", &params->control_last_layer);
}

// Sets the adapters with `set`: peak_status(const peak_adapter_set_params&).
template <class Set>
void set_adapters(JNIEnv* env, jlongArray adapters, jfloatArray scales, jlong first, jlong last, Set set) {
  guarded_void(env, [&] {
    std::vector<peak_adapter_use> uses;
    peak_adapter_set_params params;
    if (adapter_set_params(env, adapters, scales, first, last, &uses, &params)) check(env, set(params));
  });
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_adapterLoad(JNIEnv* env, jclass, jlong model, jstring path,
                                                      jboolean use_mmap) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    std::string c_path;
    if (!c_string_from_java(env, path, "path", &c_path)) return 0;
    peak_adapter_params params = peak_adapter_default_params();
    params.use_mmap = use_mmap ? 1 : 0;
    peak_adapter* adapter = nullptr;
    if (!check(env, peak_adapter_load(from_handle<peak_model>(model), c_path.c_str(), &params, &adapter))) return 0;
    return to_handle(adapter);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_adapterFree(JNIEnv*, jclass, jlong adapter) {
  peak_adapter_free(from_handle<peak_adapter>(adapter));
}

JNIEXPORT jobject JNICALL Java_peak_Native_adapterInfo(JNIEnv* env, jclass, jlong adapter) {
  return guarded(env, jobject{}, [&]() -> jobject {
    peak_adapter_info info{};
    info.struct_size = sizeof info;
    if (!check(env, peak_adapter_get_info(from_handle<peak_adapter>(adapter), &info))) return nullptr;
    return adapter_info_fields.make(env, &info);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_contextSetAdapters(JNIEnv* env, jclass, jlong ctx, jlongArray adapters,
                                                            jfloatArray scales, jlong first, jlong last) {
  set_adapters(env, adapters, scales, first, last, [&](const peak_adapter_set_params& params) {
    return peak_context_set_adapters(from_handle<peak_context>(ctx), &params);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionSetAdapters(JNIEnv* env, jclass, jlong session, jlongArray adapters,
                                                            jfloatArray scales, jlong first, jlong last) {
  set_adapters(env, adapters, scales, first, last, [&](const peak_adapter_set_params& params) {
    return peak_session_set_adapters(session_of(session), &params);
  });
}

}  // extern "C"
