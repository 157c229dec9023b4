// The tools of a ChatSession (SessionSettings::tools and tool_choice): the
// format its answers write calls in, the grammar that holds the calls to the
// tools' schemas, and, for tool_choice auto, the text that starts that grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "chat/session_settings.h"
#include "chat/tool_call.h"
#include "json/json.h"
#include "sampling/grammar.h"

namespace peak::chat {

struct SessionTools {
  // The tools' JSON as the Prefix writes them; nullopt: none, or tool_choice
  // none at the session's start (the tools are then not in the prompt).
  std::optional<std::string> rendered;
  json::Value tools;                                 // the same, parsed (null without tools)
  const ToolCallFormat* format = nullptr;            // null: answers are not read for calls
  std::shared_ptr<const sampling::Grammar> grammar;  // null: calls are free (a format without a grammar)
  // Not empty: the grammar waits for this text in the answer (tool_choice
  // auto) and reads the answer from its start on; empty: from the answer's start.
  std::string trigger;
  // The control tokens the format's markers are written with (sorted): the
  // sampler preserves them (sampling::SamplerParams::preserved_tokens).
  std::vector<int32_t> preserved_tokens;
};

// Checks the tool settings (validate_tool_settings) and builds them for
// `model`'s chat template. Throws std::invalid_argument naming what is wrong.
// `rendered_tools`: whether the Prefix holds the tools, which a change of
// tool_choice after the session's start cannot alter (nullopt: the start).
SessionTools session_tools(const model::Model& model, const SessionSettings& settings,
                           std::optional<bool> rendered_tools = std::nullopt);

// Finds the first occurrence of a text in a stream of pieces without reading
// any piece twice (Knuth-Morris-Pratt over the pieces).
class TriggerWatch {
 public:
  explicit TriggerWatch(std::string trigger);
  // When `piece` completes the trigger's first occurrence: the offset in
  // `piece` just past its end; else std::string::npos (also once found).
  size_t feed(std::string_view piece);
  bool found() const { return found_; }
  const std::string& trigger() const { return trigger_; }

 private:
  std::string trigger_;
  std::vector<size_t> fallback_;  // fallback_[i]: the longest proper border of trigger_[0, i]
  size_t matched_ = 0;
  bool found_ = false;
};

}  // namespace peak::chat
