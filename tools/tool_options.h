// Tool calling on `peak run` and `peak chat`: the options (--tools FILE,
// --tool-choice, --parallel-tool-calls), the session parameters they give and
// how a call is shown.
#pragma once

#include <string>

#include "cli_args.h"
#include "peak/peak.h"

struct ToolOptions {
  std::string path;  // --tools FILE: OpenAI's tools array; empty: no tools
  std::string json;  // its text (read_tools_file)
  peak_tool_choice choice = PEAK_TOOL_CHOICE_AUTO;
  std::string function;  // --tool-choice NAME
  bool parallel = true;
  bool given() const { return !path.empty(); }
};

extern const char* const kToolOptionsHelp;

// Consumes the value of `option` (already taken from the cursor) when it is
// one of the tool options; false otherwise. UsageError for a bad value.
bool parse_tool_option(const char* option, ArgCursor& args, ToolOptions& options);
// UsageError when --tool-choice or --parallel-tool-calls come without --tools.
void check_tool_options(const ToolOptions& options);
// Reads options.path into options.json (CommandError when it cannot).
void read_tools_file(ToolOptions& options);
// Sets the session's tools fields, pointing into `options`.
void set_session_tools(const ToolOptions& options, peak_session_params& params);
// peak_session_create with the tools set: an error about the tools file names it.
peak_session* create_tool_session(const peak_model* model, const peak_session_params& params,
                                  const ToolOptions& options);
// A call as the commands show it: "[tool call] NAME ARGUMENTS".
std::string tool_call_line(const peak_tool_call& call);
