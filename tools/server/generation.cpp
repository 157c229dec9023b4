#include "generation.h"

#include <string_view>
#include <utility>

namespace peak_server {

Generation::Generation(HttpResponder& responder, const GenerationRequest& request, int timeout_ms,
                       ResponseHead response_head)
    : out(responder),
      stream(request.stream),
      include_usage(request.include_usage),
      head(std::move(response_head)),
      filter_(request.stop),
      deadline_(Clock::now() + std::chrono::milliseconds(timeout_ms)),
      has_deadline_(timeout_ms > 0) {}

bool Generation::open() {
  if (!stream) return true;
  return out.start_stream(200, "text/event-stream", {{"Cache-Control", "no-cache"}}) && write_all(opening_events(head));
}

peak_generate_params Generation::params(size_t max_tokens) {
  peak_generate_params p = peak_generate_default_params();
  p.max_tokens = max_tokens;
  p.on_kinded_text = [](const char* text, size_t n, peak_text_kind kind, void* self) {
    return static_cast<Generation*>(self)->take(text, n, kind);
  };
  p.user_data = this;
  return p;
}

void Generation::on_tool_call(const peak_tool_call* call, size_t index, void* self) {
  const ChatToolCall c{std::string(call->id, call->id_length), std::string(call->name, call->name_length),
                       std::string(call->arguments, call->arguments_length)};
  static_cast<Generation*>(self)->stream_call(index, c);
}

void Generation::stream_call(size_t index, const ChatToolCall& call) {
  if (!stream || gone || index != calls_streamed_) return;
  ++calls_streamed_;
  if (!write_all(tool_call_events(head, index, call))) gone = true;
}

int Generation::take(const char* text, size_t n, peak_text_kind kind) {
  if (has_deadline_ && Clock::now() >= deadline_) {
    timed_out = true;
    return 0;
  }
  if (out.client_gone()) {
    gone = true;
    return 0;
  }
  std::string new_content, new_reasoning;
  if (kind == PEAK_TEXT_REASONING) {
    new_reasoning.assign(text, n);
  } else {
    stop_string = filter_.feed(std::string_view(text, n), &new_content);
  }
  send(new_content, new_reasoning);
  return gone || stop_string ? 0 : 1;
}

void Generation::send(const std::string& new_content, const std::string& new_reasoning) {
  content += new_content;
  reasoning += new_reasoning;
  if (stream && (!new_content.empty() || !new_reasoning.empty()) && !gone) {
    if (!out.write(text_event(head, new_content, new_reasoning))) gone = true;
  }
}

void Generation::finish() {
  if (stop_string) return;
  std::string rest;
  filter_.flush(&rest);
  send(rest, "");
}

void Generation::answer(const peak_generate_result& result, size_t prompt_tokens, peak::json::Value extension) {
  const char* reason = !tool_calls.empty() ? "tool_calls"
                       : timed_out         ? "length"
                                           : finish_reason(result.stop_reason, stop_string);
  const ResponseEnd end{reason, prompt_tokens, result.n_generated_tokens, std::move(extension)};
  if (!stream) {
    out.respond(200, "application/json", response_body(head, end, content, reasoning, tool_calls), {});
    return;
  }
  // Calls the answer made that did not stream as they parsed.
  for (size_t i = calls_streamed_; i < tool_calls.size(); ++i) stream_call(i, tool_calls[i]);
  if (gone) return;
  if (write_all(closing_events(head, end, include_usage))) out.write(kDoneEvent);
}

bool Generation::write_all(const std::vector<std::string>& events) {
  for (const std::string& e : events)
    if (!out.write(e)) return false;
  return true;
}

}  // namespace peak_server
