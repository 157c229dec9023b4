// Pass groups (peak.PassGroup): forward passes shared by several contexts and
// sessions; draft models (peak.DraftModel), the contexts that draft for them.
#include <jni.h>

#include <peak/peak.h>

#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"

using namespace peak_jni;

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_passGroupCreate(JNIEnv* env, jclass, jlong model, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_pass_group_params gp = peak_pass_group_default_params();
    if (!pass_group_params_fields.read(env, params, "params", &gp, nullptr)) return 0;
    peak_pass_group* group = nullptr;
    if (!check(env, peak_pass_group_create(from_handle<peak_model>(model), &gp, &group))) return 0;
    return to_handle(group);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_passGroupFree(JNIEnv*, jclass, jlong group) {
  peak_pass_group_free(from_handle<peak_pass_group>(group));
}

JNIEXPORT jlong JNICALL Java_peak_Native_draftModelCreate(JNIEnv* env, jclass, jlong model, jobject params) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_context_params cp = peak_context_default_params();
    if (!context_params_fields.read(env, params, "params", &cp, nullptr)) return 0;
    peak_draft_model* draft = nullptr;
    if (!check(env, peak_draft_model_create(from_handle<peak_model>(model), &cp, &draft))) return 0;
    return to_handle(draft);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_draftModelFree(JNIEnv*, jclass, jlong draft) {
  peak_draft_model_free(from_handle<peak_draft_model>(draft));
}

JNIEXPORT jlongArray JNICALL Java_peak_Native_passGroupPassesBySequences(JNIEnv* env, jclass, jlong group) {
  return guarded(env, jlongArray{}, [&]() -> jlongArray {
    peak_pass_group_stats stats{};
    stats.struct_size = sizeof stats;
    if (!check(env, peak_pass_group_get_stats(from_handle<peak_pass_group>(group), &stats))) return nullptr;
    jsize n = PEAK_PASS_GROUP_MAX_SEQUENCES;
    while (n > 1 && stats.passes_by_sequences[n - 1] == 0) --n;  // up to the largest pass so far
    jlongArray out = env->NewLongArray(n);
    if (!out) return nullptr;
    jlong values[PEAK_PASS_GROUP_MAX_SEQUENCES];
    for (jsize k = 0; k < n; ++k) values[k] = static_cast<jlong>(stats.passes_by_sequences[k]);
    env->SetLongArrayRegion(out, 0, n, values);
    return out;
  });
}

}  // extern "C"
