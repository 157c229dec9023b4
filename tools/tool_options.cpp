#include "tool_options.h"

#include <cstring>

#include "model_session.h"
#include "input_file.h"

const char* const kToolOptionsHelp =
    "tool calling (with the model's own chat template):\n"
    "  --tools FILE              tools the model may call: OpenAI's tools array as JSON\n"
    "                            ([{\"type\": \"function\", \"function\": {\"name\", \"description\",\n"
    "                            \"parameters\"}}]); each call is shown as a line\n"
    "                            \"[tool call] NAME ARGUMENTS\", held to its parameters' schema\n"
    "  --tool-choice auto|none|required|NAME\n"
    "                            auto (default): the model calls when it sees fit; none: never;\n"
    "                            required or a tool's name: the answer to a message is a call\n"
    "                            (of that tool)\n"
    "  --parallel-tool-calls on|off\n"
    "                            one answer may make several calls (default on)\n";

bool parse_tool_option(const char* option, ArgCursor& args, ToolOptions& o) {
  if (!std::strcmp(option, "--tools")) {
    o.path = args.value(option);
    if (o.path.empty()) throw UsageError("--tools needs a file name");
  } else if (!std::strcmp(option, "--tool-choice")) {
    const std::string v = args.value(option);
    if (v.empty()) throw UsageError("--tool-choice needs auto, none, required or a tool's name");
    o.choice = v == "auto"       ? PEAK_TOOL_CHOICE_AUTO
               : v == "none"     ? PEAK_TOOL_CHOICE_NONE
               : v == "required" ? PEAK_TOOL_CHOICE_REQUIRED
                                 : PEAK_TOOL_CHOICE_FUNCTION;
    o.function = o.choice == PEAK_TOOL_CHOICE_FUNCTION ? v : std::string();
  } else if (!std::strcmp(option, "--parallel-tool-calls")) {
    const std::string v = args.value(option);
    if (v != "on" && v != "off") throw UsageError("--parallel-tool-calls needs on or off, not '" + v + "'");
    o.parallel = v == "on";
  } else {
    return false;
  }
  return true;
}

void check_tool_options(const ToolOptions& o) {
  if (!o.given() && (o.choice != PEAK_TOOL_CHOICE_AUTO || !o.parallel)) {
    throw UsageError("--tool-choice and --parallel-tool-calls need --tools FILE");
  }
}

void read_tools_file(ToolOptions& o) {
  if (o.given()) o.json = read_input_file(o.path, "tools file");
}

void set_session_tools(const ToolOptions& o, peak_session_params& p) {
  if (!o.given()) return;
  p.tools_json = o.json.c_str();
  p.tool_choice = o.choice;
  p.tool_function = o.function.empty() ? nullptr : o.function.c_str();
  p.parallel_tool_calls = o.parallel ? 1 : 0;
}

peak_session* create_tool_session(const peak_model* model, const peak_session_params& params, const ToolOptions& o) {
  peak_session* session = nullptr;
  const peak_status status = peak_session_create(model, &params, &session);
  // The library names the JSON path ("tools: tools[0].function.name: ..."); the file is ours to name.
  if (status != PEAK_OK && o.given() && std::strncmp(peak_last_error(), "tools", 5) == 0) {
    throw CommandError(o.path + ": " + peak_last_error());
  }
  check_status(status);
  return session;
}

std::string tool_call_line(const peak_tool_call& call) {
  return "[tool call] " + std::string(call.name, call.name_length) + " " +
         std::string(call.arguments, call.arguments_length);
}
