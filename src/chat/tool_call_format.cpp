// The tool-call formats as data, and recognising them in chat templates. Each
// row's texts come from the family's chat template (how it renders a past
// call) or model card; see tool_call.h.
#include <stdexcept>
#include <string>

#include "chat/tool_call.h"

namespace peak::chat {

const std::vector<ToolCallFormat>& tool_call_formats() {
  static const std::vector<ToolCallFormat> formats = {
      {"hermes",
       "Qwen2.5, Qwen3, SmolLM3, Hermes",
       "<tool_call>",
       "</tool_call>",
       false,
       CallShape::JsonObject,
       "arguments",
       false,
       {},
       {}},
      {"llama3-json",
       "Llama 3.1, Llama 3.2",
       "<|python_tag|>",
       "",
       true,
       CallShape::JsonObject,
       "parameters",
       false,
       {},
       {}},
      {"mistral",
       "Mistral Nemo, Mistral v3",
       "[TOOL_CALLS]",
       "",
       false,
       CallShape::JsonArray,
       "arguments",
       true,
       {},
       {}},
      {"phi4",
       "Phi-4-mini",
       "<|tool_call|>",
       "<|/tool_call|>",
       false,
       CallShape::JsonArray,
       "arguments",
       false,
       {},
       {}},
      {"granite", "Granite 3.x", "<|tool_call|>", "", false, CallShape::JsonArray, "arguments", false, {}, {}},
      {"deepseek-r1",
       "DeepSeek-R1 and its distills",
       "<｜tool▁calls▁begin｜>",
       "<｜tool▁calls▁end｜>",
       false,
       CallShape::DeepSeekCalls,
       "arguments",
       false,
       {"<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "\n", "<｜tool▁call▁end｜>"},
       {}},
      {"qwen3-xml",
       "Qwen3.5, Qwen3-Coder",
       "<tool_call>",
       "</tool_call>",
       false,
       CallShape::XmlCalls,
       "arguments",
       false,
       {"<function=", ">", "</function>"},
       {"<parameter=", ">", "</parameter>"}},
      {"minicpm-xml",
       "MiniCPM 5",
       "<function name=\"",
       "</function>",
       false,
       CallShape::XmlCalls,
       "arguments",
       false,
       {"", "\">", ""},
       {"<param name=\"", "\">", "</param>"}},
      {"lfm2",
       "LFM2, LFM2.5",
       "<|tool_call_start|>",
       "<|tool_call_end|>",
       false,
       CallShape::PythonCalls,
       "arguments",
       false,
       {},
       {}},
      {"generic",
       "models without a format of their own (Gemma, Phi-3.5, ...)",
       "",
       "",
       true,
       CallShape::Envelope,
       "arguments",
       false,
       {},
       {}},
  };
  return formats;
}

std::string tool_call_format_names_list() {
  std::string list;
  for (const ToolCallFormat& format : tool_call_formats()) {
    if (!list.empty()) list += ", ";
    list += format.name;
  }
  return list;
}

const ToolCallFormat& tool_call_format(std::string_view name) {
  for (const ToolCallFormat& format : tool_call_formats()) {
    if (format.name == name) return format;
  }
  throw std::invalid_argument("unknown tool call format '" + std::string(name) +
                              "' (known: " + tool_call_format_names_list() + ")");
}

const ToolCallFormat& detect_tool_call_format(std::string_view template_source) {
  const auto has = [&](std::string_view needle) { return template_source.find(needle) != std::string_view::npos; };
  if (has("<｜tool▁calls▁begin｜>")) return tool_call_format("deepseek-r1");
  if (has("[TOOL_CALLS]")) return tool_call_format("mistral");
  // Granite's template names <|tool_call|> in its system prompt; Phi-4-mini's
  // wraps the tool list in <|tool|>...<|/tool|>.
  if (has("<|tool_call|>") && has("<|start_of_role|>")) return tool_call_format("granite");
  if (has("<|/tool_call|>") || has("<|/tool|>")) return tool_call_format("phi4");
  if (has("<tool_call>")) return tool_call_format(has("<function=") ? "qwen3-xml" : "hermes");
  if (has("<function name=\"")) return tool_call_format("minicpm-xml");
  // LFM2's templates wrap the tools in <|tool_list_start|>; LFM2.5's introduce
  // them as "List of tools: ", which their model cards pair with Pythonic calls.
  if (has("<|tool_call_start|>") || has("<|tool_list_start|>") || has("List of tools: ")) {
    return tool_call_format("lfm2");
  }
  // Llama 3.1 renders built-in calls after <|python_tag|>; 3.2 only asks for
  // {"name": function name, "parameters": ...}.
  if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("\"parameters\""))) {
    return tool_call_format("llama3-json");
  }
  return tool_call_format("generic");
}

}  // namespace peak::chat
