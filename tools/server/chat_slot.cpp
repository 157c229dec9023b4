#include "chat_slot.h"

#include <algorithm>

#include "image_cache.h"

namespace peak_server {

void check(peak_status status) {
  if (status != PEAK_OK) throw PeakError(status, peak_last_error());
}

std::vector<ChatToolCall> session_tool_calls(const peak_session* session) {
  std::vector<ChatToolCall> calls;
  for (size_t i = 0; i < peak_session_n_tool_calls(session); ++i) {
    peak_tool_call c{};
    c.struct_size = sizeof c;
    check(peak_session_get_tool_call(session, i, &c));
    calls.push_back({std::string(c.id, c.id_length), std::string(c.name, c.name_length),
                     std::string(c.arguments, c.arguments_length)});
  }
  return calls;
}

namespace {

size_t session_tokens(const peak_session* session) {
  peak_session_stats s{};
  s.struct_size = sizeof s;
  check(peak_session_get_stats(session, &s));
  return s.prefix_tokens + s.summary_tokens + s.recent_tokens;
}

// What chat_reuse compares beside a message's role and text: an assistant's
// calls, a tool result's call id, a user's pictures. A picture is noted by
// the FNV-1a of its file and the file's length: two messages of one text
// whose pictures differ are two messages.
std::string message_note(const ChatMessage& m) {
  if (m.role == PEAK_ROLE_TOOL) return m.tool_call_id;
  std::string note;
  for (const ChatToolCall& c : m.tool_calls) note += c.id + '\n' + c.name + '\n' + c.arguments + '\n';
  for (const auto& image : m.encoded) {
    note += "image " + std::to_string(image->hash) + ' ' + std::to_string(image->bytes.size()) + '\n';
  }
  return note;
}

}  // namespace

ChatSlot::ChatSlot(const SlotSettings& settings) : settings_(settings) {
  create_session(std::nullopt, "");
  peak_session_stats s{};
  s.struct_size = sizeof s;
  check(peak_session_get_stats(session_, &s));
  n_ctx_ = s.n_ctx;
  if (settings.draft_model) {
    peak_context_params dp = peak_context_default_params();
    dp.n_ctx = n_ctx_;
    dp.n_threads = settings.session.n_threads;
    dp.type_k = settings.session.type_k;
    dp.type_v = settings.session.type_v;
    dp.pass_group = settings.draft_pass_group;
    const peak_status status = peak_draft_model_create(settings.draft_model, &dp, &draft_);
    if (status != PEAK_OK) {
      const std::string message = peak_last_error();
      peak_session_free(session_);
      throw PeakError(status, message);
    }
  }
}

ChatSlot::~ChatSlot() {
  peak_session_free(session_);
  peak_context_free(context_);
  peak_draft_model_free(draft_);
}

void ChatSlot::create_session(const std::optional<std::string>& system, const std::string& tools) {
  peak_session_params p = settings_.session;
  p.system_prompt = system ? system->c_str() : nullptr;
  // AUTO keeps the tools in the prompt; each request sets its own choice.
  p.tools_json = tools.empty() ? nullptr : tools.c_str();
  p.tool_choice = PEAK_TOOL_CHOICE_AUTO;
  peak_session* s = nullptr;
  check(peak_session_create(settings_.model, &p, &s));
  if (settings_.adapters && settings_.adapters->n_adapters > 0) {
    const peak_status status = peak_session_set_adapters(s, settings_.adapters);
    if (status != PEAK_OK) {
      const std::string message = peak_last_error();
      peak_session_free(s);
      throw PeakError(status, message);
    }
  }
  peak_session_free(session_);
  session_ = s;
  system_ = system;
  tools_ = tools;
  forget_notes();
}

void ChatSlot::forget_notes() { notes_.assign(peak_session_n_messages(session_), std::string()); }

void ChatSlot::note_answer(const ChatMessage* user) {
  const size_t n = peak_session_n_messages(session_);
  notes_.resize(n);
  if (n == 0) return;
  if (user && n >= 2) notes_[n - 2] = message_note(*user);
  ChatMessage answer;
  answer.role = PEAK_ROLE_ASSISTANT;
  answer.tool_calls = answer_calls();
  notes_[n - 1] = message_note(answer);
}

long long ChatSlot::chat_reuse(const std::optional<std::string>& system, const std::string& tools,
                               const std::vector<ChatMessage>& history) const {
  if (system != system_ || tools != tools_) return -1;
  const size_t n = peak_session_n_messages(session_);
  const size_t first = system_ ? 1 : 0;  // message 0 is the system prompt when there is one
  if (n - first > history.size()) return -1;
  for (size_t i = first; i < n; ++i) {
    peak_session_message m{};
    m.struct_size = sizeof m;
    if (peak_session_get_message(session_, i, &m) != PEAK_OK) return -1;
    const ChatMessage& want = history[i - first];
    if (m.role != want.role || std::string_view(m.text, m.length) != want.content) return -1;
    if (i >= notes_.size() || notes_[i] != message_note(want)) return -1;
  }
  return static_cast<long long>(n);
}

size_t ChatSlot::prepare_chat(const std::optional<std::string>& system, const std::string& tools,
                              const std::vector<ChatMessage>& history) {
  size_t evaluated = 0;
  long long held = chat_reuse(system, tools, history);
  if (held < 0) {
    if (system != system_ || tools != tools_) {
      create_session(system, tools);
      evaluated += session_tokens(session_);  // the system prompt and the tools
    } else {
      check(peak_session_reset(session_));
      forget_notes();
    }
    held = system_ ? 1 : 0;
  }
  const size_t first = system_ ? 1 : 0;
  return evaluated + append(history, static_cast<size_t>(held) - first);
}

size_t ChatSlot::append(const std::vector<ChatMessage>& messages, size_t from) {
  size_t evaluated = 0;
  for (size_t i = from; i < messages.size(); ++i) {
    const size_t before = session_tokens(session_);
    const ChatMessage& m = messages[i];
    add_message(m);
    notes_.resize(peak_session_n_messages(session_));
    notes_.back() = message_note(m);
    if (m.role == PEAK_ROLE_TOOL) continue;  // read by the turn that answers it
    // What the message added to the cache; when making room for it dropped
    // older messages, at least its own text's tokens.
    const size_t after = session_tokens(session_);
    size_t own = 0;
    peak_tokenize(settings_.model, m.content.data(), m.content.size(), 0, 0, nullptr, 0, &own);
    evaluated += std::max(after > before ? after - before : 0, own);
  }
  return evaluated;
}

void ChatSlot::add_message(const ChatMessage& m) {
  if (m.role == PEAK_ROLE_TOOL) {
    check(peak_session_add_tool_result(session_, m.tool_call_id.c_str(), m.content.data(), m.content.size()));
  } else if (m.role == PEAK_ROLE_ASSISTANT) {  // also the answer to tool results, which peak_session_append refuses
    std::vector<peak_tool_call> calls;
    for (const ChatToolCall& c : m.tool_calls) {
      peak_tool_call call{};
      call.struct_size = sizeof call;
      call.id = c.id.data();
      call.id_length = c.id.size();
      call.name = c.name.data();
      call.name_length = c.name.size();
      call.arguments = c.arguments.data();
      call.arguments_length = c.arguments.size();
      calls.push_back(call);
    }
    check(peak_session_append_tool_calls(session_, m.content.data(), m.content.size(), calls.data(), calls.size()));
  } else {
    attach_images(m);
    const peak_status status = peak_session_append(session_, m.role, m.content.data(), m.content.size());
    if (status != PEAK_OK) {
      const std::string message = peak_last_error();
      peak_session_clear_images(session_);  // a failed append leaves them attached
      throw PeakError(status, message);
    }
  }
}

void ChatSlot::attach_images(const ChatMessage& m) {
  for (const auto& image : m.encoded) {
    const peak_status status =
        peak_session_attach_picture(session_, image->rows.data(), image->rows.size(), image->width, image->height);
    if (status != PEAK_OK) {
      const std::string message = peak_last_error();
      peak_session_clear_images(session_);
      throw PeakError(status, message);
    }
  }
}

void ChatSlot::clear_images() { check(peak_session_clear_images(session_)); }

size_t ChatSlot::cached_tokens() const { return session_tokens(session_); }

size_t ChatSlot::summarized_messages() const {
  size_t n = 0;
  const size_t total = peak_session_n_messages(session_);
  for (size_t i = 0; i < total; ++i) {
    peak_session_message m{};
    m.struct_size = sizeof m;
    if (peak_session_get_message(session_, i, &m) == PEAK_OK && m.state != PEAK_MESSAGE_IN_CONTEXT) ++n;
  }
  return n;
}

size_t ChatSlot::summary_tokens() const {
  peak_session_stats s{};
  s.struct_size = sizeof s;
  check(peak_session_get_stats(session_, &s));
  return s.summary_tokens;
}

void ChatSlot::save(const std::string& path) { check(peak_session_save(session_, path.c_str(), 1)); }

void ChatSlot::restore(const std::string& path, const std::optional<std::string>& system) {
  if (system != system_ || !tools_.empty()) create_session(system, "");
  check(peak_session_restore(session_, path.c_str()));
  forget_notes();
}

void ChatSlot::clear() {
  if (system_ || !tools_.empty()) {
    create_session(std::nullopt, "");
  } else {
    check(peak_session_reset(session_));
    forget_notes();
  }
  conversation_.clear();
}

size_t ChatSlot::completion_reuse(const std::vector<int32_t>& tokens) const {
  const size_t n = std::min(tokens.size(), context_tokens_.size());
  size_t common = 0;
  while (common < n && tokens[common] == context_tokens_[common]) ++common;
  return common;
}

size_t ChatSlot::prepare_completion(const std::vector<int32_t>& tokens) {
  if (!context_) {
    peak_context_params p = settings_.context;
    p.n_ctx = n_ctx_;
    // As the session does: quantized cache types need a head size that is a
    // multiple of 32; others keep F16.
    peak_model_info info{};
    info.struct_size = sizeof info;
    check(peak_model_get_info(settings_.model, &info));
    if (info.head_dim % 32 != 0) {
      if (p.type_k == PEAK_TYPE_Q8_0 || p.type_k == PEAK_TYPE_Q4_0) p.type_k = PEAK_TYPE_F16;
      if (p.type_v == PEAK_TYPE_Q8_0 || p.type_v == PEAK_TYPE_Q4_0) p.type_v = PEAK_TYPE_F16;
    }
    check(peak_context_create(settings_.model, &p, &context_));
    if (settings_.adapters && settings_.adapters->n_adapters > 0) check(peak_context_set_adapters(context_, settings_.adapters));
  }
  // Keep the common prefix, but evaluate at least the last token again: its
  // logits are where generation starts.
  size_t keep = completion_reuse(tokens);
  if (keep == tokens.size()) --keep;
  const size_t used = peak_context_n_used(context_);
  context_tokens_.resize(std::min(context_tokens_.size(), keep));
  if (used > keep) check(peak_context_kv_remove(context_, keep, used - keep));
  check(peak_context_eval(context_, tokens.data() + keep, tokens.size() - keep));
  context_tokens_ = tokens;
  return tokens.size() - keep;
}

void ChatSlot::trim_to_prompt() {
  if (!context_) return;
  const size_t used = peak_context_n_used(context_);
  if (used > context_tokens_.size()) {
    check(peak_context_kv_remove(context_, context_tokens_.size(), used - context_tokens_.size()));
  }
}

}  // namespace peak_server
