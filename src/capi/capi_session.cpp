// peak_session_*: SSSKV-lite chat sessions through the C API.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_adapter.h"
#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "chat/chat_session.h"
#include "model/vision.h"

struct peak_session {
  const peak_model* model;
  const peak_projector* projector;  // null: the session takes no pictures
  std::unique_ptr<peak::chat::ChatSession> session;
};

namespace {

using peak::capi::at_most;
using peak::capi::fail;
using peak::capi::guarded;
using peak::capi::kMaxTokenCount;
using peak::capi::raw_enum;

// The first version of peak_session_params ended with a sampler of the first
// version (no preserved tokens) and had no tool fields.
constexpr size_t kSessionParamsFirstSize = offsetof(peak_session_params, sampler) + kSamplerParamsFirstSize;
// The second ended with tool_call_format, the third with verify_kv_cells.
constexpr size_t kSessionParamsSecondSize = offsetof(peak_session_params, verify_kv_cells);
constexpr size_t kSessionParamsThirdSize = offsetof(peak_session_params, max_logit_rows);
constexpr size_t kSessionParamsFourthSize = offsetof(peak_session_params, pass_group);
constexpr size_t kSessionParamsFifthSize = offsetof(peak_session_params, projector);
// peak_session_message before 0.9.0 ended with `length`.
constexpr size_t kSessionMessageFirstSize = offsetof(peak_session_message, n_images);

// The tool choice as the session takes it; false (an error set) out of range.
// By reference: a value outside the enum is read as an int, never loaded as the enum.
bool tool_choice_from_c(const peak_tool_choice& choice, peak::chat::ToolChoiceMode* out) {
  const int raw = raw_enum(choice);
  if (raw < PEAK_TOOL_CHOICE_NONE || raw > PEAK_TOOL_CHOICE_FUNCTION) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "tool_choice is " + std::to_string(raw) +
                                        "; it must be PEAK_TOOL_CHOICE_NONE (0), PEAK_TOOL_CHOICE_AUTO (1), "
                                        "PEAK_TOOL_CHOICE_REQUIRED (2) or PEAK_TOOL_CHOICE_FUNCTION (3)");
    return false;
  }
  *out = static_cast<peak::chat::ToolChoiceMode>(raw);
  return true;
}

// The last answer of the conversation (results may follow it), or null.
const peak::chat::LoggedMessage* last_answer(const peak_session* session) {
  const std::vector<peak::chat::LoggedMessage>& log = session->session->log();
  for (auto m = log.rbegin(); m != log.rend(); ++m) {
    if (m->role == "assistant") return &*m;
    if (m->role != "tool") return nullptr;
  }
  return nullptr;
}

// A call as the C API shows it, its texts pointing into `c`.
void tool_call_to_c(const peak::chat::ToolCall& c, peak_tool_call* call) {
  static const std::string kNoId;
  const std::string& id = c.id ? *c.id : kNoId;
  call->struct_size = sizeof(peak_tool_call);
  call->id = id.c_str();
  call->id_length = id.size();
  call->name = c.name.c_str();
  call->name_length = c.name.size();
  call->arguments = c.arguments.c_str();
  call->arguments_length = c.arguments.size();
}

// Checks the token counts of session parameters, which the session keeps as
// int32_t or int64_t.
bool session_counts_ok(const peak_session_params& p) {
  return at_most(p.recent_max, kMaxTokenCount, "recent_max") && at_most(p.summary_max, kMaxTokenCount, "summary_max") &&
         at_most(p.trigger_discard, kMaxTokenCount, "trigger_discard") &&
         at_most(p.headroom, kMaxTokenCount, "headroom") && at_most(p.summary_n_ctx, kMaxTokenCount, "summary_n_ctx") &&
         at_most(p.summary_max_new_tokens, kMaxTokenCount, "summary_max_new_tokens") &&
         at_most(p.n_batch, kMaxTokenCount, "n_batch") &&
         at_most(p.verify_kv_cells, kMaxTokenCount, "verify_kv_cells") &&
         sampler_counts_ok(p.sampler, "peak_session_params.sampler");
}

// A turn's generation parameters and result, checked; `turn` runs it with
// the generator's options and the reasoning callback.
template <typename Turn>
peak_status run_turn(const peak_generate_params* params, peak_generate_result* result, Turn&& turn) {
  peak_generate_params p;
  if (!generate_params_from_c(params, result, &p)) return PEAK_ERR_INVALID_ARGUMENT;

  return guarded([&] {
    const peak::runtime::GenerateOptions o = generate_options_from_c(p);
    std::function<bool(const std::string&)> on_reasoning;
    if (p.on_kinded_text) {
      on_reasoning = [&p](const std::string& piece) {
        return p.on_kinded_text(piece.c_str(), piece.size(), PEAK_TEXT_REASONING, p.user_data) != 0;
      };
    }
    result_to_c(turn(o, on_reasoning).generation, result);
    return PEAK_OK;
  });
}

}  // namespace

extern "C" {

peak_session_params peak_session_default_params(void) {
  const peak::chat::SessionSettings d;
  peak_session_params p{};
  p.struct_size = sizeof(peak_session_params);
  p.mode = PEAK_MEMORY_SSSKV;
  p.recent_max = static_cast<size_t>(d.recent_max);
  p.summary_max = static_cast<size_t>(d.summary_max);
  p.trigger_discard = static_cast<size_t>(d.trigger_discard);
  p.headroom = static_cast<size_t>(d.headroom);
  p.type_k = p.type_v = PEAK_TYPE_Q8_0;
  p.summary_type_kv = PEAK_TYPE_Q4_0;
  p.summary_n_ctx = static_cast<size_t>(d.summarizer.n_ctx);
  p.summary_max_new_tokens = static_cast<size_t>(d.summarizer.max_new_tokens);
  p.rebuild = PEAK_REBUILD_BACKGROUND;
  p.wait_for_summary = 0;
  p.background_summary = 1;
  p.n_batch = 512;
  p.sampler = peak_sampler_default_params();
  p.tool_choice = PEAK_TOOL_CHOICE_AUTO;
  p.parallel_tool_calls = 1;
  p.verify_kv_cells = static_cast<size_t>(d.verify_kv_cells);
  p.max_logit_rows = 1;
  return p;
}

peak_status peak_session_create(const peak_model* model, const peak_session_params* params, peak_session** out) {
  PEAK_CHECK_ARG(out, "peak_session_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_session_create: model");
  if (!has_weights(model, "peak_session_create")) return PEAK_ERR_INVALID_ARGUMENT;
  peak_session_params p;
  if (!peak::capi::read_versioned_params(params, peak_session_default_params(),
                                         {kSessionParamsFirstSize, kSessionParamsSecondSize, kSessionParamsThirdSize,
                                          kSessionParamsFourthSize, kSessionParamsFifthSize},
                                         "peak_session_params", &p)) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const peak_sampler_params given_sampler = p.sampler;
  if (!read_sampler_params(&given_sampler, "peak_session_params.sampler", &p.sampler)) return PEAK_ERR_INVALID_ARGUMENT;
  peak::chat::ToolChoiceMode tool_choice;
  if (!tool_choice_from_c(p.tool_choice, &tool_choice)) return PEAK_ERR_INVALID_ARGUMENT;
  const int mode = raw_enum(p.mode), rebuild = raw_enum(p.rebuild);
  if (mode < PEAK_MEMORY_SSSKV || mode > PEAK_MEMORY_NONE) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "mode is " + std::to_string(mode) +
                                               "; it must be PEAK_MEMORY_SSSKV (0), PEAK_MEMORY_WINDOW (1) or "
                                               "PEAK_MEMORY_NONE (2)");
  }
  if (rebuild < PEAK_REBUILD_SHIFT || rebuild > PEAK_REBUILD_BACKGROUND) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "rebuild is " + std::to_string(rebuild) +
                                               "; it must be PEAK_REBUILD_SHIFT (0), PEAK_REBUILD_REPREFILL (1) or "
                                               "PEAK_REBUILD_BACKGROUND (2)");
  }
  if (!peak::capi::kv_type_ok(p.type_k, "type_k") || !peak::capi::kv_type_ok(p.type_v, "type_v") ||
      !peak::capi::kv_type_ok(p.summary_type_kv, "summary_type_kv") || !session_counts_ok(p)) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    peak::chat::SessionSettings s;
    s.mode = static_cast<peak::chat::MemoryMode>(mode);
    s.system_prompt = p.system_prompt ? p.system_prompt : "";
    s.template_name = p.chat_template ? p.chat_template : "";
    s.enable_thinking = p.enable_thinking != 0;
    s.recent_max = static_cast<int64_t>(p.recent_max);
    s.summary_max = static_cast<int64_t>(p.summary_max);
    s.trigger_discard = static_cast<int64_t>(p.trigger_discard);
    s.headroom = static_cast<int64_t>(p.headroom);
    s.type_k = static_cast<peak::kernels::GgmlType>(p.type_k);
    s.type_v = static_cast<peak::kernels::GgmlType>(p.type_v);
    s.summarizer.kv_type = static_cast<peak::kernels::GgmlType>(p.summary_type_kv);
    s.summarizer.n_ctx = static_cast<int64_t>(p.summary_n_ctx);
    s.summarizer.max_new_tokens = static_cast<int32_t>(p.summary_max_new_tokens);
    s.rebuild = rebuild == PEAK_REBUILD_SHIFT       ? peak::chat::RebuildStrategy::Shift
                : rebuild == PEAK_REBUILD_REPREFILL ? peak::chat::RebuildStrategy::Reprefill
                                                    : peak::chat::RebuildStrategy::Background;
    s.wait_for_summary = p.wait_for_summary != 0;
    s.background_summary = p.background_summary != 0;
    s.n_threads = peak::capi::thread_count(p.n_threads);
    s.n_batch = static_cast<int64_t>(p.n_batch);
    s.summarizer.n_batch = static_cast<int64_t>(p.n_batch);
    s.sampler = sampler_params_from_c(p.sampler);
    s.tools = p.tools_json ? p.tools_json : "";
    s.tool_choice = tool_choice;
    s.tool_function = p.tool_function ? p.tool_function : "";
    s.parallel_tool_calls = p.parallel_tool_calls != 0;
    s.tool_call_format = p.tool_call_format ? p.tool_call_format : "";
    s.verify_kv_cells = static_cast<int64_t>(p.verify_kv_cells);
    s.max_logit_rows = static_cast<int64_t>(std::min(p.max_logit_rows, kMaxTokenCount));
    s.pass_group = p.pass_group ? p.pass_group->group.get() : nullptr;
    if (p.projector) {
      const peak::model::Projector& projector = *p.projector->projector;
      const int64_t width = projector.hparams().vision.n_embd_out;
      if (width != model->model->hparams().n_embd) {
        return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_params.projector writes embeddings of " +
                                                   std::to_string(width) + " floats, but the model's width is " +
                                                   std::to_string(model->model->hparams().n_embd) +
                                                   ": it is another model's projector");
      }
      s.images = projector.hparams().arch;
    }
    auto session = std::make_unique<peak_session>();
    session->model = model;
    session->projector = p.projector;
    session->session = std::make_unique<peak::chat::ChatSession>(*model->model, s);
    *out = session.release();
    return PEAK_OK;
  });
}

void peak_session_free(peak_session* session) { delete session; }

peak_status peak_session_chat(peak_session* session, const char* user_text, size_t length,
                              const peak_generate_params* params, peak_generate_result* result) {
  PEAK_CHECK_ARG(session, "peak_session_chat: session");
  if (!user_text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_chat: user_text is NULL");
  return run_turn(params, result, [&](const auto& o, const auto& on_reasoning) {
    const std::string_view text(user_text ? user_text : "", length);
    peak::capi::encode_user_text(*session->model, text, false, false, "peak_session_chat: the message");
    return session->session->chat(std::string(text), o, on_reasoning);
  });
}

size_t peak_session_n_messages(const peak_session* session) { return session ? session->session->n_messages() : 0; }

peak_status peak_session_get_message(const peak_session* session, size_t index, peak_session_message* message) {
  PEAK_CHECK_ARG(session, "peak_session_get_message: session");
  PEAK_CHECK_ARG(message, "peak_session_get_message: message");
  if (message->struct_size != kSessionMessageFirstSize &&
      !peak::capi::struct_size_ok(message->struct_size, sizeof(peak_session_message), "peak_session_message")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const size_t n = session->session->n_messages();
  if (index >= n) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_get_message: index " + std::to_string(index) +
                                               " of a conversation of " + std::to_string(n) + " messages");
  }
  const peak::chat::MessageView m = session->session->message(index);
  message->role = m.role == "system" ? PEAK_ROLE_SYSTEM
                  : m.role == "user" ? PEAK_ROLE_USER
                  : m.role == "tool" ? PEAK_ROLE_TOOL
                                     : PEAK_ROLE_ASSISTANT;
  message->state = m.state == peak::chat::MessageState::InContext    ? PEAK_MESSAGE_IN_CONTEXT
                   : m.state == peak::chat::MessageState::Summarized ? PEAK_MESSAGE_SUMMARIZED
                                                                     : PEAK_MESSAGE_DROPPED;
  message->text = m.text.c_str();
  message->length = m.text.size();
  if (message->struct_size > kSessionMessageFirstSize) message->n_images = m.n_images;
  return PEAK_OK;
}

namespace {

// The rows of n_floats floats: a whole number of the model's width.
peak_status image_rows(const peak_session* session, size_t n_floats, const char* function, int64_t& n_rows) {
  const auto n_embd = static_cast<size_t>(session->model->model->hparams().n_embd);
  if (n_floats == 0 || n_floats % n_embd != 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(function) + ": n_floats is " + std::to_string(n_floats) +
                                               ", not a whole number of rows of the model's width " +
                                               std::to_string(n_embd));
  }
  n_rows = static_cast<int64_t>(n_floats / n_embd);
  return PEAK_OK;
}

}  // namespace

peak_status peak_session_attach_image(peak_session* session, const float* embeddings, size_t n_floats) {
  PEAK_CHECK_ARG(session, "peak_session_attach_image: session");
  PEAK_CHECK_ARG(embeddings, "peak_session_attach_image: embeddings");
  int64_t n_rows = 0;
  if (const peak_status status = image_rows(session, n_floats, "peak_session_attach_image", n_rows)) return status;
  if (session->projector) {
    const peak::model::HParams& hp = session->projector->projector->hparams();
    if (hp.spec().tiling == peak::model::VisionTiling::SmartResize) {
      return fail(PEAK_ERR_INVALID_ARGUMENT,
                  "peak_session_attach_image: this projector sizes each picture, and its tokens' grid follows the "
                  "picture's size: attach them with peak_session_attach_picture, giving it");
    }
    if (peak::model::max_picture_frames(hp) > 1 && n_rows != hp.vision.n_image_tokens()) {
      return fail(PEAK_ERR_INVALID_ARGUMENT,
                  "peak_session_attach_image: " + std::to_string(n_rows) + " image tokens; this projector cuts " +
                      "pictures into tiles of " + std::to_string(hp.vision.n_image_tokens()) +
                      ": attach them with peak_session_attach_picture, giving the picture's size");
    }
  }
  return guarded([&] {
    session->session->attach_image(embeddings, n_rows);
    return PEAK_OK;
  });
}

peak_status peak_session_attach_picture(peak_session* session, const float* embeddings, size_t n_floats, uint32_t width,
                                        uint32_t height) {
  PEAK_CHECK_ARG(session, "peak_session_attach_picture: session");
  PEAK_CHECK_ARG(embeddings, "peak_session_attach_picture: embeddings");
  if (!session->projector) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                "peak_session_attach_picture: this session takes no images: create it with the model's vision "
                "projector (peak_session_params.projector)");
  }
  if (width == 0 || height == 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_attach_picture: the picture is " + std::to_string(width) +
                                               " x " + std::to_string(height) + " pixels");
  }
  int64_t n_rows = 0;
  if (const peak_status status = image_rows(session, n_floats, "peak_session_attach_picture", n_rows)) return status;
  return guarded([&] {
    const peak::model::PictureLayout layout =
        peak::model::picture_layout(session->projector->projector->hparams(), width, height);
    if (n_rows != layout.n_tokens()) {
      return fail(PEAK_ERR_INVALID_ARGUMENT,
                  "peak_session_attach_picture: " + std::to_string(n_rows) + " image tokens, but a picture of " +
                      std::to_string(width) + " x " + std::to_string(height) + " pixels encodes to " +
                      std::to_string(layout.n_tokens()) + " (" + std::to_string(layout.n_frames()) + " frames of " +
                      std::to_string(layout.tokens_per_frame) + ")");
    }
    session->session->attach_image(embeddings, n_rows, layout.grid_rows, layout.grid_cols,
                                   peak::model::placed_token_cols(session->projector->projector->hparams(), layout));
    return PEAK_OK;
  });
}

size_t peak_session_n_attached_images(const peak_session* session) {
  return session ? session->session->attached_images() : 0;
}

peak_status peak_session_clear_images(peak_session* session) {
  PEAK_CHECK_ARG(session, "peak_session_clear_images: session");
  session->session->clear_attached_images();
  return PEAK_OK;
}

peak_status peak_session_append(peak_session* session, peak_role role, const char* text, size_t length) {
  PEAK_CHECK_ARG(session, "peak_session_append: session");
  if (!text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_append: text is NULL");
  const int raw = raw_enum(role);
  if (raw != PEAK_ROLE_USER && raw != PEAK_ROLE_ASSISTANT) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                "peak_session_append: role is " + std::to_string(raw) +
                    "; it must be PEAK_ROLE_USER (1) or PEAK_ROLE_ASSISTANT (2) (the system prompt is a "
                    "peak_session_params field)");
  }
  return guarded([&] {
    const std::string_view message(text ? text : "", length);
    if (raw == PEAK_ROLE_USER) {
      peak::capi::encode_user_text(*session->model, message, false, false, "peak_session_append: the user message");
    }
    session->session->append(raw == PEAK_ROLE_USER ? "user" : "assistant", std::string(message));
    return PEAK_OK;
  });
}

peak_status peak_session_append_tool_calls(peak_session* session, const char* content, size_t length,
                                           const peak_tool_call* calls, size_t n_calls) {
  PEAK_CHECK_ARG(session, "peak_session_append_tool_calls: session");
  if (!content && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_append_tool_calls: content is NULL");
  if (!calls && n_calls > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_append_tool_calls: calls is NULL");
  std::vector<peak::chat::ToolCall> list;
  for (size_t i = 0; i < n_calls; ++i) {
    const peak_tool_call& c = calls[i];
    const std::string field = "peak_session_append_tool_calls: calls[" + std::to_string(i) + "]";
    if (!peak::capi::struct_size_ok(c.struct_size, sizeof(peak_tool_call), field.c_str())) {
      return PEAK_ERR_INVALID_ARGUMENT;
    }
    if (!c.id || c.id_length == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, field + ".id is empty");
    if (!c.name || c.name_length == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, field + ".name is empty");
    if (!c.arguments && c.arguments_length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, field + ".arguments is NULL");
    list.push_back({std::string(c.id, c.id_length), std::string(c.name, c.name_length),
                    std::string(c.arguments ? c.arguments : "", c.arguments_length)});
  }
  return guarded([&] {
    std::string text(content ? content : "", length);
    if (session->session->tool_results_waiting()) {
      session->session->append_results_answer(text, list);
    } else {
      session->session->append("assistant", text, list);
    }
    return PEAK_OK;
  });
}

peak_status peak_session_regenerate(peak_session* session, const peak_generate_params* params,
                                    peak_generate_result* result) {
  PEAK_CHECK_ARG(session, "peak_session_regenerate: session");
  return run_turn(params, result, [&](const auto& o, const auto& on_reasoning) {
    return session->session->regenerate(o, on_reasoning);
  });
}

peak_status peak_session_edit_last(peak_session* session, const char* user_text, size_t length,
                                   const peak_generate_params* params, peak_generate_result* result) {
  PEAK_CHECK_ARG(session, "peak_session_edit_last: session");
  if (!user_text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_edit_last: user_text is NULL");
  return run_turn(params, result, [&](const auto& o, const auto& on_reasoning) {
    const std::string_view text(user_text ? user_text : "", length);
    peak::capi::encode_user_text(*session->model, text, false, false, "peak_session_edit_last: the message");
    return session->session->edit_last(std::string(text), o, on_reasoning);
  });
}

size_t peak_session_n_tool_calls(const peak_session* session) {
  const peak::chat::LoggedMessage* answer = session ? last_answer(session) : nullptr;
  return answer ? answer->tool_calls.size() : 0;
}

peak_status peak_session_get_tool_call(const peak_session* session, size_t index, peak_tool_call* call) {
  PEAK_CHECK_ARG(session, "peak_session_get_tool_call: session");
  PEAK_CHECK_ARG(call, "peak_session_get_tool_call: call");
  if (!peak::capi::struct_size_ok(call->struct_size, sizeof(peak_tool_call), "peak_tool_call")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const peak::chat::LoggedMessage* answer = last_answer(session);
  const size_t n = answer ? answer->tool_calls.size() : 0;
  if (!answer || index >= n) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_get_tool_call: index " + std::to_string(index) +
                                               " of an answer of " + std::to_string(n) + " tool calls");
  }
  tool_call_to_c(answer->tool_calls[index], call);
  return PEAK_OK;
}

peak_status peak_session_set_tool_call_callback(peak_session* session, peak_tool_call_fn on_call, void* user_data) {
  PEAK_CHECK_ARG(session, "peak_session_set_tool_call_callback: session");
  if (!on_call) {
    session->session->set_on_tool_call(nullptr);
    return PEAK_OK;
  }
  session->session->set_on_tool_call([on_call, user_data](const peak::chat::ToolCall& c, size_t index) {
    peak_tool_call call{};
    tool_call_to_c(c, &call);
    on_call(&call, index, user_data);
  });
  return PEAK_OK;
}

peak_status peak_session_add_tool_result(peak_session* session, const char* tool_call_id, const char* content,
                                         size_t length) {
  PEAK_CHECK_ARG(session, "peak_session_add_tool_result: session");
  PEAK_CHECK_ARG(tool_call_id, "peak_session_add_tool_result: tool_call_id");
  if (!content && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_add_tool_result: content is NULL");
  return guarded([&] {
    session->session->append_tool_result(tool_call_id, std::string(content ? content : "", length));
    return PEAK_OK;
  });
}

peak_status peak_session_continue(peak_session* session, const peak_generate_params* params,
                                  peak_generate_result* result) {
  PEAK_CHECK_ARG(session, "peak_session_continue: session");
  return run_turn(params, result, [&](const auto& o, const auto& on_reasoning) {
    return session->session->continue_turn(o, on_reasoning);
  });
}

peak_status peak_session_set_tool_choice(peak_session* session, peak_tool_choice choice, const char* tool_function,
                                         int parallel_tool_calls) {
  PEAK_CHECK_ARG(session, "peak_session_set_tool_choice: session");
  peak::chat::ToolChoiceMode mode;
  if (!tool_choice_from_c(choice, &mode)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    session->session->set_tool_choice(mode, tool_function ? tool_function : "", parallel_tool_calls != 0);
    return PEAK_OK;
  });
}

peak_status peak_session_set_sampler(peak_session* session, const peak_sampler_params* params) {
  PEAK_CHECK_ARG(session, "peak_session_set_sampler: session");
  PEAK_CHECK_ARG(params, "peak_session_set_sampler: params");
  peak_sampler_params p;
  if (!read_sampler_params(params, "peak_sampler_params", &p)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    session->session->set_sampler(sampler_params_from_c(p));
    return PEAK_OK;
  });
}

peak_status peak_session_preview_prompt(const peak_session* session, const char* user_text, size_t length, char* buf,
                                       size_t capacity, size_t* prompt_length) {
  PEAK_CHECK_ARG(session, "peak_session_preview_prompt: session");
  PEAK_CHECK_ARG(prompt_length, "peak_session_preview_prompt: prompt_length");
  *prompt_length = 0;
  if (!user_text && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_preview_prompt: user_text is NULL");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_preview_prompt: buf is NULL");
  return guarded([&] {
    const std::string prompt = session->session->preview_prompt(std::string(user_text ? user_text : "", length));
    return peak::capi::copy_out(prompt, "prompt", buf, capacity, prompt_length);
  });
}

peak_status peak_session_reset(peak_session* session) {
  PEAK_CHECK_ARG(session, "peak_session_reset: session");
  return guarded([&] {
    session->session->reset();
    return PEAK_OK;
  });
}

peak_status peak_session_set_adapters(peak_session* session, const peak_adapter_set_params* params) {
  PEAK_CHECK_ARG(session, "peak_session_set_adapters: session");
  peak::runtime::Adapters adapters;
  if (const peak_status st = peak::capi::adapters_from_c(session->model, params, &adapters); st != PEAK_OK) return st;
  return guarded([&] {
    session->session->set_adapters(adapters);
    return PEAK_OK;
  });
}

peak_status peak_session_wait_summary(peak_session* session) {
  PEAK_CHECK_ARG(session, "peak_session_wait_summary: session");
  return guarded([&] {
    session->session->wait_for_summary();
    return PEAK_OK;
  });
}

peak_status peak_session_get_stats(const peak_session* session, peak_session_stats* stats) {
  PEAK_CHECK_ARG(session, "peak_session_get_stats: session");
  PEAK_CHECK_ARG(stats, "peak_session_get_stats: stats");
  if (!peak::capi::struct_size_ok(stats->struct_size, sizeof(peak_session_stats), "peak_session_stats")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const peak::chat::SessionStats s = session->session->stats();
  stats->n_ctx = static_cast<size_t>(s.n_ctx);
  stats->prefix_tokens = static_cast<size_t>(s.prefix_tokens);
  stats->summary_tokens = static_cast<size_t>(s.summary_tokens);
  stats->recent_tokens = static_cast<size_t>(s.recent_tokens);
  stats->recent_messages = static_cast<size_t>(s.recent_messages);
  stats->dropped_since_summary = static_cast<size_t>(s.dropped_since_summary);
  stats->dropped_total = static_cast<size_t>(s.dropped_total);
  stats->summaries = static_cast<size_t>(s.summaries);
  stats->summary_running = s.summary_running ? 1 : 0;
  stats->summary_seconds = s.summary_seconds;
  stats->rebuild_seconds = s.rebuild_seconds;
  stats->last_rebuild_seconds = s.last_rebuild_seconds;
  stats->window_shift_seconds = s.window_shift_seconds;
  stats->worker_rebuild_seconds = s.worker_rebuild_seconds;
  stats->turns = static_cast<size_t>(s.turns);
  stats->kv_bytes = s.kv_bytes;
  stats->staging_kv_bytes = s.staging_kv_bytes;
  stats->summary_failures = static_cast<size_t>(s.summary_failures);
  return PEAK_OK;
}

peak_status peak_session_get_turn_stats(const peak_session* session, peak_session_turn_stats* stats) {
  PEAK_CHECK_ARG(session, "peak_session_get_turn_stats: session");
  PEAK_CHECK_ARG(stats, "peak_session_get_turn_stats: stats");
  if (!peak::capi::struct_size_ok(stats->struct_size, sizeof(peak_session_turn_stats), "peak_session_turn_stats")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const peak::chat::TurnTimes& t = session->session->last_turn_times();
  stats->rebuild_seconds = t.rebuild;
  stats->catch_up_seconds = t.catch_up;
  stats->window_shift_seconds = t.window_shift;
  stats->prefill_seconds = t.prefill;
  stats->generation_seconds = t.generation;
  stats->settle_seconds = t.settle;
  return PEAK_OK;
}

peak_status peak_session_get_summary(const peak_session* session, char* buf, size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(session, "peak_session_get_summary: session");
  PEAK_CHECK_ARG(length, "peak_session_get_summary: length");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_get_summary: buf is NULL");
  return peak::capi::copy_out(session->session->summary(), "summary", buf, capacity, length);
}

peak_status peak_session_get_summary_error(const peak_session* session, char* buf, size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(session, "peak_session_get_summary_error: session");
  PEAK_CHECK_ARG(length, "peak_session_get_summary_error: length");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_session_get_summary_error: buf is NULL");
  return peak::capi::copy_out(session->session->last_summary_error(), "summary error", buf, capacity, length);
}

peak_status peak_session_save(peak_session* session, const char* path, int include_kv) {
  PEAK_CHECK_ARG(session, "peak_session_save: session");
  PEAK_CHECK_ARG(path, "peak_session_save: path");
  return guarded([&] {
    session->session->save(path, include_kv != 0);
    return PEAK_OK;
  });
}

peak_status peak_session_restore(peak_session* session, const char* path) {
  PEAK_CHECK_ARG(session, "peak_session_restore: session");
  PEAK_CHECK_ARG(path, "peak_session_restore: path");
  return guarded([&] {
    try {
      session->session->restore(path);
    } catch (const peak::io::IoError&) {
      throw;
    } catch (const peak::chat::SessionMismatch& e) {
      return fail(PEAK_ERR_UNSUPPORTED, e.what());  // another model, or a mode that cannot continue it
    } catch (const std::runtime_error& e) {
      return fail(PEAK_ERR_FORMAT, e.what());  // a bad file
    }
    return PEAK_OK;
  });
}

}  // extern "C"
