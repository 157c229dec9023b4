// Chat sessions (peak.Session).
#include <jni.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <peak/peak.h>

#include "generation.h"
#include "java_session.h"
#include "jni_exports.h"
#include "jni_support.h"
#include "struct_fields.h"
#include "tool_calls.h"

using namespace peak_jni;

// Role's and ToolChoice's ordinals are peak_role's and peak_tool_choice's values.
static_assert(PEAK_ROLE_SYSTEM == 0 && PEAK_ROLE_USER == 1 && PEAK_ROLE_ASSISTANT == 2 && PEAK_ROLE_TOOL == 3,
              "Role mirrors peak_role");
static_assert(PEAK_TOOL_CHOICE_NONE == 0 && PEAK_TOOL_CHOICE_AUTO == 1 && PEAK_TOOL_CHOICE_REQUIRED == 2 &&
                  PEAK_TOOL_CHOICE_FUNCTION == 3,
              "ToolChoice mirrors peak_tool_choice");

namespace {

// peak_tool_call_fn: runs on the generating thread, inside a turn of run_turn.
void on_tool_call(const peak_tool_call* call, size_t index, void* user_data) noexcept {
  const auto* js = static_cast<const JavaSession*>(user_data);
  if (js->turn) js->turn->deliver_call(js->listener, *call, index);
}

// A turn: chat (`text` given), regenerate or continue (no text) or edit_last (`text`, editing).
template <class Turn>
jobject run_turn(JNIEnv* env, jlong session, jstring text, bool has_text, jobject options, jobject on_text, Turn turn) {
  std::string c_text;
  Generation generation(env, on_text);
  peak_generate_params gp;
  if ((has_text && !utf8_from_java(env, text, "text", &c_text)) || !generation.params(options, &gp)) return nullptr;
  peak_generate_result result{};
  result.struct_size = sizeof result;
  JavaSession* js = java_session(session);
  js->turn = &generation;
  const peak_status status = turn(c_text, gp, result);
  js->turn = nullptr;
  return generation.finish(status, result);
}

// Element `index` of a String[] (not null) as UTF-8, refused as `what` when it is null.
bool element_from_java(JNIEnv* env, jobjectArray texts, jsize index, const std::string& what, bool c_string,
                       std::string* out) {
  auto text = static_cast<jstring>(env->GetObjectArrayElement(texts, index));
  if (env->ExceptionCheck()) return false;
  const bool ok =
      c_string ? c_string_from_java(env, text, what.c_str(), out) : utf8_from_java(env, text, what.c_str(), out);
  if (text) env->DeleteLocalRef(text);
  return ok;
}

// The calls of Session.appendToolCalls, their fields pairwise in three arrays
// of one length: `texts` keeps each call's id, name and arguments.
bool tool_calls_from_java(JNIEnv* env, jobjectArray ids, jobjectArray names, jobjectArray arguments,
                          std::vector<std::string>* texts, std::vector<peak_tool_call>* calls) {
  const jsize n = env->GetArrayLength(ids);
  texts->resize(3 * static_cast<size_t>(n));
  for (jsize i = 0; i < n; ++i) {
    const std::string field = "calls[" + std::to_string(i) + "]";
    std::string* text = &(*texts)[3 * static_cast<size_t>(i)];
    if (!element_from_java(env, ids, i, field + ".id", true, &text[0]) ||
        !element_from_java(env, names, i, field + ".name", true, &text[1]) ||
        !element_from_java(env, arguments, i, field + ".arguments", false, &text[2])) {
      return false;
    }
    peak_tool_call call{};
    call.struct_size = sizeof call;
    call.id = text[0].c_str();
    call.id_length = text[0].size();
    call.name = text[1].c_str();
    call.name_length = text[1].size();
    call.arguments = text[2].c_str();
    call.arguments_length = text[2].size();
    calls->push_back(call);
  }
  return true;
}

// A picture's embeddings from a Java float[], read from a copy: no array stays
// pinned while peak checks and copies them. An empty array still gives a
// pointer, so that peak names n_floats rather than a NULL pointer.
class ImageRows {
 public:
  ImageRows(JNIEnv* env, jfloatArray array) : values_(static_cast<size_t>(env->GetArrayLength(array))) {
    env->GetFloatArrayRegion(array, 0, static_cast<jsize>(values_.size()), values_.data());
  }
  const float* data() const { return values_.empty() ? &none_ : values_.data(); }
  size_t size() const { return values_.size(); }

 private:
  std::vector<float> values_;
  float none_ = 0.0f;
};

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_peak_Native_sessionCreate(JNIEnv* env, jclass, jlong model, jobject params, jlong group,
                                                       jlong projector) {
  return guarded(env, jlong{0}, [&]() -> jlong {
    peak_session_params sp = peak_session_default_params();
    std::deque<std::string> strings;  // system_prompt, chat_template, the sampler's grammar texts
    if (!session_params_fields.read(env, params, "params", &sp, &strings)) return 0;
    sp.pass_group = from_handle<peak_pass_group>(group);
    sp.projector = from_handle<peak_projector>(projector);
    auto js = std::make_unique<JavaSession>();
    if (!check(env, peak_session_create(from_handle<peak_model>(model), &sp, &js->session))) return 0;
    return to_handle(js.release());
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionFree(JNIEnv* env, jclass, jlong session) {
  const std::unique_ptr<JavaSession> js(java_session(session));
  peak_session_free(js->session);
  if (js->listener) env->DeleteGlobalRef(js->listener);
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionChat(JNIEnv* env, jclass, jlong session, jstring text,
                                                        jobject options, jobject on_text) {
  return guarded(env, jobject{}, [&] {
    return run_turn(env, session, text, true, options, on_text,
                    [&](const std::string& t, const peak_generate_params& gp, peak_generate_result& result) {
                      return peak_session_chat(session_of(session), t.data(), t.size(), &gp, &result);
                    });
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionRegenerate(JNIEnv* env, jclass, jlong session, jobject options,
                                                              jobject on_text) {
  return guarded(env, jobject{}, [&] {
    return run_turn(env, session, nullptr, false, options, on_text,
                    [&](const std::string&, const peak_generate_params& gp, peak_generate_result& result) {
                      return peak_session_regenerate(session_of(session), &gp, &result);
                    });
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionEditLast(JNIEnv* env, jclass, jlong session, jstring text,
                                                            jobject options, jobject on_text) {
  return guarded(env, jobject{}, [&] {
    return run_turn(env, session, text, true, options, on_text,
                    [&](const std::string& t, const peak_generate_params& gp, peak_generate_result& result) {
                      return peak_session_edit_last(session_of(session), t.data(), t.size(), &gp, &result);
                    });
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionAppend(JNIEnv* env, jclass, jlong session, jint role, jstring text) {
  guarded_void(env, [&] {
    std::string c_text;
    if (!utf8_from_java(env, text, "text", &c_text)) return;
    check(env, peak_session_append(session_of(session), static_cast<peak_role>(role), c_text.data(), c_text.size()));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionAttachImage(JNIEnv* env, jclass, jlong session, jfloatArray embeddings) {
  guarded_void(env, [&] {
    if (!embeddings) {
      throw_null(env, "embeddings");
      return;
    }
    const ImageRows rows(env, embeddings);
    check(env, peak_session_attach_image(session_of(session), rows.data(), rows.size()));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionAttachPicture(JNIEnv* env, jclass, jlong session, jfloatArray embeddings,
                                                             jint width, jint height) {
  guarded_void(env, [&] {
    if (!embeddings) {
      throw_null(env, "embeddings");
      return;
    }
    if (width < 0 || height < 0) {
      throw_peak(env, PEAK_ERR_INVALID_ARGUMENT,
                 "the picture is " + std::to_string(width) + " x " + std::to_string(height) + " pixels");
      return;
    }
    const ImageRows rows(env, embeddings);
    check(env, peak_session_attach_picture(session_of(session), rows.data(), rows.size(), static_cast<uint32_t>(width),
                                           static_cast<uint32_t>(height)));
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_sessionNAttachedImages(JNIEnv*, jclass, jlong session) {
  return java_size(peak_session_n_attached_images(session_of(session)));
}

JNIEXPORT void JNICALL Java_peak_Native_sessionClearImages(JNIEnv* env, jclass, jlong session) {
  guarded_void(env, [&] { check(env, peak_session_clear_images(session_of(session))); });
}

JNIEXPORT jlong JNICALL Java_peak_Native_sessionNMessages(JNIEnv*, jclass, jlong session) {
  return java_size(peak_session_n_messages(session_of(session)));
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionMessage(JNIEnv* env, jclass, jlong session, jlong index) {
  return guarded(env, jobject{}, [&]() -> jobject {
    size_t c_index = 0;
    if (!size_from_java(env, index, "index", &c_index)) return nullptr;
    peak_session_message message{};
    message.struct_size = sizeof message;
    if (!check(env, peak_session_get_message(session_of(session), c_index, &message))) return nullptr;
    jstring text = java_string(env, message.text, message.length);
    if (!text) return nullptr;
    // n_images is at most one per marker in the text: it fits a jint.
    jobject out = env->NewObject(refs.message, refs.message_init, static_cast<jint>(message.role),
                                 static_cast<jint>(message.state), text, static_cast<jint>(message.n_images));
    env->DeleteLocalRef(text);
    return out;
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionSetSampler(JNIEnv* env, jclass, jlong session, jobject params) {
  guarded_void(env, [&] {
    peak_sampler_params sp = peak_sampler_default_params();
    std::deque<std::string> strings;  // grammar, grammar_root, json_schema
    if (sampler_params_fields.read(env, params, "params", &sp, &strings)) {
      check(env, peak_session_set_sampler(session_of(session), &sp));
    }
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionSave(JNIEnv* env, jclass, jlong session, jstring path,
                                                     jboolean include_kv) {
  guarded_void(env, [&] {
    std::string c_path;
    if (c_string_from_java(env, path, "path", &c_path)) {
      check(env, peak_session_save(session_of(session), c_path.c_str(), include_kv ? 1 : 0));
    }
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionRestore(JNIEnv* env, jclass, jlong session, jstring path) {
  guarded_void(env, [&] {
    std::string c_path;
    if (c_string_from_java(env, path, "path", &c_path)) check(env, peak_session_restore(session_of(session), c_path.c_str()));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionReset(JNIEnv* env, jclass, jlong session) {
  guarded_void(env, [&] { check(env, peak_session_reset(session_of(session))); });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionWaitSummary(JNIEnv* env, jclass, jlong session) {
  guarded_void(env, [&] { check(env, peak_session_wait_summary(session_of(session))); });
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionStats(JNIEnv* env, jclass, jlong session) {
  return guarded(env, jobject{}, [&]() -> jobject {
    peak_session_stats stats{};
    stats.struct_size = sizeof stats;
    if (!check(env, peak_session_get_stats(session_of(session), &stats))) return nullptr;
    return session_stats_fields.make(env, &stats);
  });
}

JNIEXPORT jstring JNICALL Java_peak_Native_sessionSummary(JNIEnv* env, jclass, jlong session) {
  return guarded(env, jstring{}, [&] {
    return fetch_text(env, [&](char* buf, size_t capacity, size_t* length) {
      return peak_session_get_summary(session_of(session), buf, capacity, length);
    });
  });
}

JNIEXPORT jstring JNICALL Java_peak_Native_sessionSummaryError(JNIEnv* env, jclass, jlong session) {
  return guarded(env, jstring{}, [&] {
    return fetch_text(env, [&](char* buf, size_t capacity, size_t* length) {
      return peak_session_get_summary_error(session_of(session), buf, capacity, length);
    });
  });
}

JNIEXPORT jstring JNICALL Java_peak_Native_sessionPreviewPrompt(JNIEnv* env, jclass, jlong session, jstring text) {
  return guarded(env, jstring{}, [&]() -> jstring {
    std::string c_text;
    if (!utf8_from_java(env, text, "text", &c_text)) return nullptr;
    return fetch_text(env, [&](char* buf, size_t capacity, size_t* length) {
      return peak_session_preview_prompt(session_of(session), c_text.data(), c_text.size(), buf, capacity, length);
    });
  });
}

JNIEXPORT jlong JNICALL Java_peak_Native_sessionNToolCalls(JNIEnv*, jclass, jlong session) {
  return java_size(peak_session_n_tool_calls(session_of(session)));
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionToolCall(JNIEnv* env, jclass, jlong session, jlong index) {
  return guarded(env, jobject{}, [&]() -> jobject {
    size_t c_index = 0;
    if (!size_from_java(env, index, "index", &c_index)) return nullptr;
    peak_tool_call call{};
    call.struct_size = sizeof call;
    if (!check(env, peak_session_get_tool_call(session_of(session), c_index, &call))) return nullptr;
    return java_tool_call(env, call);
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionAddToolResult(JNIEnv* env, jclass, jlong session, jstring tool_call_id,
                                                             jstring content) {
  guarded_void(env, [&] {
    std::string c_id;
    std::string c_content;
    if (c_string_from_java(env, tool_call_id, "toolCallId", &c_id) &&
        utf8_from_java(env, content, "content", &c_content)) {
      check(env, peak_session_add_tool_result(session_of(session), c_id.c_str(), c_content.data(), c_content.size()));
    }
  });
}

JNIEXPORT jobject JNICALL Java_peak_Native_sessionContinue(JNIEnv* env, jclass, jlong session, jobject options,
                                                           jobject on_text) {
  return guarded(env, jobject{}, [&] {
    return run_turn(env, session, nullptr, false, options, on_text,
                    [&](const std::string&, const peak_generate_params& gp, peak_generate_result& result) {
                      return peak_session_continue(session_of(session), &gp, &result);
                    });
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionAppendToolCalls(JNIEnv* env, jclass, jlong session, jstring content,
                                                               jobjectArray ids, jobjectArray names,
                                                               jobjectArray arguments) {
  guarded_void(env, [&] {
    std::string c_content;
    std::vector<std::string> texts;
    std::vector<peak_tool_call> calls;
    if ((content && !utf8_from_java(env, content, "content", &c_content)) ||
        !tool_calls_from_java(env, ids, names, arguments, &texts, &calls)) {
      return;
    }
    check(env, peak_session_append_tool_calls(session_of(session), c_content.data(), c_content.size(), calls.data(),
                                              calls.size()));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionSetToolChoice(JNIEnv* env, jclass, jlong session, jint choice,
                                                             jstring function, jboolean parallel_tool_calls) {
  guarded_void(env, [&] {
    std::string c_function;
    if (function && !c_string_from_java(env, function, "function", &c_function)) return;
    check(env, peak_session_set_tool_choice(session_of(session), static_cast<peak_tool_choice>(choice),
                                            function ? c_function.c_str() : nullptr, parallel_tool_calls ? 1 : 0));
  });
}

JNIEXPORT void JNICALL Java_peak_Native_sessionSetToolCallListener(JNIEnv* env, jclass, jlong session,
                                                                   jobject listener) {
  guarded_void(env, [&] {
    JavaSession* js = java_session(session);
    if (js->turn) {  // from a callback of the turn: peak is calling the receiver being replaced
      jclass state = env->FindClass("java/lang/IllegalStateException");
      if (state) env->ThrowNew(state, "the tool call listener cannot change during a turn");
      return;
    }
    jobject global = listener ? env->NewGlobalRef(listener) : nullptr;
    if (listener && !global) {
      throw_peak(env, PEAK_ERR_OUT_OF_MEMORY, "no room for a global reference to the tool call listener");
      return;
    }
    if (!check(env, peak_session_set_tool_call_callback(js->session, global ? on_tool_call : nullptr, js))) {
      if (global) env->DeleteGlobalRef(global);
      return;
    }
    if (js->listener) env->DeleteGlobalRef(js->listener);
    js->listener = global;
  });
}

}  // extern "C"
