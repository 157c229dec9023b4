// A generation's text on its way to the client, as a route passes it on:
// through the request's stop strings, streamed as it comes or gathered for the
// whole response, cut short when the client leaves or the time is up. peak's
// callbacks get a pointer to it (params()).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "http_message.h"
#include "json/json.h"
#include "openai_request.h"
#include "openai_response.h"
#include "peak/peak.h"
#include "stop_filter.h"

namespace peak_server {

struct Generation {
  using Clock = std::chrono::steady_clock;

  // `timeout_ms` 0: no time limit.
  Generation(HttpResponder& responder, const GenerationRequest& request, int timeout_ms, ResponseHead response_head);

  // Starts the stream, when the request asked for one; false when the client is gone.
  bool open();
  // Generation parameters sending the text here.
  peak_generate_params params(size_t max_tokens);
  // A call of the answer as it parsed (peak_session_set_tool_call_callback):
  // streamed now when the request asked for a stream.
  static void on_tool_call(const peak_tool_call* call, size_t index, void* self);
  // After the generation: sends what the stop strings held back.
  void finish();
  // Ends the answer of a generation that succeeded (the client still there):
  // the stream's last events (the tool calls first), or the whole response,
  // with `extension` as its `peak` member. An answer that made calls ends
  // with finish_reason "tool_calls".
  void answer(const peak_generate_result& result, size_t prompt_tokens, peak::json::Value extension);

  HttpResponder& out;
  const bool stream;
  const bool include_usage;
  const ResponseHead head;

  std::string content, reasoning;        // all the text so far
  std::vector<ChatToolCall> tool_calls;  // a chat answer's calls (the session's, after the turn)
  bool stop_string = false;              // a stop string ended it
  bool gone = false;                     // the client left
  bool timed_out = false;                // the time was up

 private:
  int take(const char* text, size_t n, peak_text_kind kind);
  void send(const std::string& new_content, const std::string& new_reasoning);
  bool write_all(const std::vector<std::string>& events);

  void stream_call(size_t index, const ChatToolCall& call);

  size_t calls_streamed_ = 0;
  StopFilter filter_;
  const Clock::time_point deadline_;
  const bool has_deadline_;
};

}  // namespace peak_server
