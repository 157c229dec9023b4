#include "generation.h"

#include <cstdint>

#include "jni_support.h"
#include "struct_fields.h"
#include "tool_calls.h"

namespace peak_jni {

Generation::~Generation() {
  if (on_reasoning_) env_->DeleteLocalRef(on_reasoning_);
  if (thrown_) env_->DeleteLocalRef(thrown_);
}

bool Generation::params(jobject options, peak_generate_params* out) {
  *out = peak_generate_default_params();
  if (!generate_options_fields.read(env_, options, "options", out, nullptr)) return false;
  on_reasoning_ = env_->GetObjectField(options, refs.generate_options_on_reasoning);
  out->on_text = nullptr;
  out->on_kinded_text = on_kinded_text;
  out->user_data = this;

  if (jobject draft = env_->GetObjectField(options, refs.generate_options_draft_model)) {
    const jlong handle = env_->CallLongMethod(draft, refs.native_handle_handle);  // throws once closed
    env_->DeleteLocalRef(draft);
    if (env_->ExceptionCheck()) return false;
    out->draft_model = from_handle<peak_draft_model>(handle);
  }

  jobject token = env_->GetObjectField(options, refs.generate_options_cancellation);
  if (!token) return true;
  jobject buffer = env_->GetObjectField(token, refs.cancellation_token_flag);
  env_->DeleteLocalRef(token);
  void* flag = buffer ? env_->GetDirectBufferAddress(buffer) : nullptr;
  // The buffer stays reachable through `options`, a local reference of the
  // native call, for as long as peak reads the flag.
  if (buffer) env_->DeleteLocalRef(buffer);
  if (!flag || reinterpret_cast<uintptr_t>(flag) % alignof(int) != 0) {
    throw_peak(env_, PEAK_ERR_INTERNAL, "the cancellation token's flag is not an aligned direct buffer");
    return false;
  }
  out->abort_flag = static_cast<const volatile int*>(flag);
  return true;
}

int Generation::on_kinded_text(const char* text, size_t length, peak_text_kind kind, void* self) noexcept {
  try {
    return static_cast<Generation*>(self)->deliver(text, length, kind);
  } catch (...) {  // std::bad_alloc: nothing else throws here
    return 0;
  }
}

int Generation::deliver(const char* text, size_t length, peak_text_kind kind) {
  if (thrown_) return 0;
  jobject callback = kind == PEAK_TEXT_REASONING ? on_reasoning_ : on_text_;
  if (!callback) return 1;
  // One local reference per piece, deleted at once: a long generation runs in
  // one native frame, whose local reference table is small.
  jstring piece = java_string(env_, text, length);
  if (!piece) return stop_with_pending_exception();
  env_->CallVoidMethod(callback, refs.text_callback_on_text, piece);
  env_->DeleteLocalRef(piece);
  if (env_->ExceptionCheck()) return stop_with_pending_exception();
  return 1;
}

void Generation::deliver_call(jobject listener, const peak_tool_call& call, size_t index) noexcept {
  if (thrown_) return;
  jobject java_call = java_tool_call(env_, call);
  if (java_call) {
    env_->CallVoidMethod(listener, refs.tool_call_listener_on_call, java_call, static_cast<jint>(index));
    env_->DeleteLocalRef(java_call);
  }
  if (env_->ExceptionCheck()) stop_with_pending_exception();
}

int Generation::stop_with_pending_exception() {
  jthrowable thrown = env_->ExceptionOccurred();
  env_->ExceptionClear();
  if (!thrown_) {
    thrown_ = thrown;
  } else {
    env_->DeleteLocalRef(thrown);
  }
  return 0;
}

jobject Generation::finish(peak_status status, const peak_generate_result& result) {
  if (thrown_) {
    env_->Throw(thrown_);
    return nullptr;
  }
  if (!check(env_, status)) return nullptr;
  return generate_result_fields.make(env_, &result);
}

}  // namespace peak_jni
