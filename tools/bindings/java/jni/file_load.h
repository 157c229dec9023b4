// Loading a GGUF file by path or from a region of an open file (an Android
// asset's descriptor), with a peak.ModelParams, and memory estimates: what
// peak.Model and peak.Projector share.
#pragma once

#include <jni.h>

#include <cstdint>
#include <string>

#include <peak/peak.h>

#include "jni_support.h"
#include "struct_fields.h"

namespace peak_jni {

// Java's offset and length of a region, checked not negative; false with an exception pending.
inline bool region(JNIEnv* env, jlong offset, jlong length, uint64_t* c_offset, uint64_t* c_length) {
  return u64_from_java(env, offset, "offset", c_offset) && u64_from_java(env, length, "length", c_length);
}

// The handle of what `load(path, params, &out)` opened (peak_model_load,
// peak_projector_load); 0 with a Java exception pending.
template <typename Handle, typename Load>
jlong load_path(JNIEnv* env, jstring path, jobject params, Load load) {
  std::string c_path;
  peak_model_params mp = peak_model_default_params();
  if (!c_string_from_java(env, path, "path", &c_path) ||
      !model_params_fields.read(env, params, "params", &mp, nullptr)) {
    return 0;
  }
  Handle* out = nullptr;
  if (!check(env, load(c_path.c_str(), &mp, &out))) return 0;
  return to_handle(out);
}

// The same for `load(fd, offset, length, params, &out)` (the *_load_fd functions).
template <typename Handle, typename LoadFd>
jlong load_fd(JNIEnv* env, jint fd, jlong offset, jlong length, jobject params, LoadFd load) {
  uint64_t c_offset = 0, c_length = 0;
  peak_model_params mp = peak_model_default_params();
  if (!region(env, offset, length, &c_offset, &c_length) ||
      !model_params_fields.read(env, params, "params", &mp, nullptr)) {
    return 0;
  }
  Handle* out = nullptr;
  if (!check(env, load(fd, c_offset, c_length, &mp, &out))) return 0;
  return to_handle(out);
}

// A peak_memory_estimate to fill, and what a peak_*_estimate_memory call made
// of it: a peak.MemoryEstimate, or null with a Java exception pending.
inline peak_memory_estimate empty_estimate() {
  peak_memory_estimate estimate{};
  estimate.struct_size = sizeof estimate;
  return estimate;
}

inline jobject estimate_result(JNIEnv* env, peak_status status, const peak_memory_estimate& estimate) {
  if (!check(env, status)) return nullptr;
  return memory_estimate_fields.make(env, &estimate);
}

}  // namespace peak_jni
