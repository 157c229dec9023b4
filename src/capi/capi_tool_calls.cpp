// peak_chat_parse_response: the tool calls, reasoning and content of an answer.
#include <string>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "chat/tool_call.h"

using peak::capi::fail;
using peak::capi::guarded;

namespace {

const peak::chat::ToolCallFormat& chosen_format(const peak_model* model, const peak_tool_parse_params& p) {
  if (p.format_name) return peak::chat::tool_call_format(p.format_name);
  if (p.template_source) return peak::chat::detect_tool_call_format(p.template_source);
  return peak::chat::detect_tool_call_format(model ? model->model->chat_template() : std::string());
}

peak::chat::ToolParseOptions options_from_c(const peak_tool_parse_params& p) {
  peak::chat::ToolParseOptions options;
  options.parse_reasoning = p.parse_reasoning != 0;
  options.reasoning_opened = p.reasoning_opened != 0;
  if (p.reasoning_open) options.reasoning_markers.open = p.reasoning_open;
  if (p.reasoning_close) options.reasoning_markers.close = p.reasoning_close;
  if (p.id_prefix) options.id_prefix = p.id_prefix;
  if (p.tools_json) {
    std::string error;
    if (!peak::json::parse(p.tools_json, &options.tools, &error) || !options.tools.is_array()) {
      throw std::invalid_argument("peak_tool_parse_params.tools_json: " +
                                  (error.empty() ? std::string("not a JSON array") : error));
    }
  }
  return options;
}

bool check_flags(const peak_tool_parse_params& p) {
  if ((p.parse_reasoning != 0 && p.parse_reasoning != 1) || (p.reasoning_opened != 0 && p.reasoning_opened != 1)) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_parse_response: parse_reasoning and reasoning_opened must be 0 or 1");
    return false;
  }
  if ((p.reasoning_open && !*p.reasoning_open) || (p.reasoning_close && !*p.reasoning_close)) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_parse_response: reasoning_open and reasoning_close may not be empty");
    return false;
  }
  return true;
}

}  // namespace

peak_tool_parse_params peak_tool_parse_default_params(void) {
  peak_tool_parse_params p{};
  p.struct_size = sizeof(peak_tool_parse_params);
  p.parse_reasoning = 1;
  return p;
}

peak_status peak_chat_parse_response(const peak_model* model, const peak_tool_parse_params* params, const char* text,
                                     size_t text_length, char* buf, size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(length, "peak_chat_parse_response: length");
  *length = 0;
  const peak_tool_parse_params p = params ? *params : peak_tool_parse_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_tool_parse_params), "peak_tool_parse_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (!check_flags(p)) return PEAK_ERR_INVALID_ARGUMENT;
  if (!text && text_length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_parse_response: text is NULL");
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_parse_response: buf is NULL");
  if (!p.format_name && !p.template_source && model && !has_weights(model, "peak_chat_parse_response")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    const peak::chat::ToolCallFormat& format = chosen_format(model, p);
    const peak::chat::ParsedResponse parsed =
        peak::chat::parse_response(format, std::string_view(text ? text : "", text_length), options_from_c(p));
    return peak::capi::copy_out(peak::json::write(peak::chat::to_openai_message(parsed)), "message", buf, capacity,
                                length);
  });
}
