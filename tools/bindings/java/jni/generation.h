// A generation's Java side: GenerateOptions -> peak_generate_params (with the
// cancellation token's flag), the text streamed to the Java callbacks (and a
// session's tool calls to its listener), and the call's end (its result,
// peak's error, or a callback's own exception).
#ifndef PEAK_JNI_GENERATION_H
#define PEAK_JNI_GENERATION_H

#include <jni.h>

#include <peak/peak.h>

namespace peak_jni {

class Generation {
 public:
  // `on_text` may be null; GenerateOptions.onReasoning gives the reasoning's.
  Generation(JNIEnv* env, jobject on_text) : env_(env), on_text_(on_text) {}
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;
  ~Generation();

  // The C parameters of `options` (a peak.GenerateOptions), streaming to this
  // object; false with an exception pending.
  bool params(jobject options, peak_generate_params* out);
  // The call's outcome: the exception a callback threw (rethrown, whatever the
  // status), else peak's error, else a new peak.GenerateResult.
  jobject finish(peak_status status, const peak_generate_result& result);
  // Passes a tool call of the answer to `listener` (a peak.ToolCallListener).
  // After a callback threw, nothing more reaches Java and the next piece of
  // text stops the generation.
  void deliver_call(jobject listener, const peak_tool_call& call, size_t index) noexcept;

 private:
  static int on_kinded_text(const char* text, size_t length, peak_text_kind kind, void* self) noexcept;
  int deliver(const char* text, size_t length, peak_text_kind kind);
  // Keeps the pending exception for finish() and clears it, so peak (and its
  // log callback) may go on calling into the JVM; 0 stops the generation.
  int stop_with_pending_exception();

  JNIEnv* env_;
  jobject on_text_;
  jobject on_reasoning_ = nullptr;
  jthrowable thrown_ = nullptr;
};

}  // namespace peak_jni

#endif  // PEAK_JNI_GENERATION_H
