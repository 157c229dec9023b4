#include "chat/session_settings.h"

#include <stdexcept>

#include "chat/chat_messages_json.h"
#include "chat/tool_call.h"

namespace peak::chat {
namespace {

// Refuses `value` of the field `name` below `min`.
void require_at_least(const char* name, int64_t value, int64_t min) {
  if (value < min) {
    throw std::invalid_argument(std::string(name) + " is " + std::to_string(value) + "; it must be at least " +
                                std::to_string(min));
  }
}

}  // namespace

void validate_session_settings(const SessionSettings& s) {
  require_at_least("headroom", s.headroom, kClosingReserve + 8);
  require_at_least("recent_max", s.recent_max, 32);
  require_at_least("trigger_discard", s.trigger_discard, 1);
  require_at_least("n_batch", s.n_batch, 1);
  require_at_least("verify_kv_cells", s.verify_kv_cells, 0);
  if (s.mode == MemoryMode::Ssskv) {
    require_at_least("summary_max", s.summary_max, 16);
    validate_summarizer(s.summarizer);
  }
  validate_tool_settings(s);
}

void validate_tool_settings(const SessionSettings& s) {
  if (!s.tools.empty()) {
    try {
      tools_from_json(s.tools);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("tools: ") + e.what());
    }
  }
  if (!s.tool_call_format.empty()) tool_call_format(s.tool_call_format);
  if (s.tool_choice == ToolChoiceMode::Function && s.tool_function.empty()) {
    throw std::invalid_argument("tool_choice names a function, but tool_function is empty");
  }
  if (s.tool_choice != ToolChoiceMode::Function && !s.tool_function.empty()) {
    throw std::invalid_argument("tool_function is '" + s.tool_function + "', but tool_choice does not name a function");
  }
  if (s.tools.empty() && (s.tool_choice == ToolChoiceMode::Required || s.tool_choice == ToolChoiceMode::Function)) {
    throw std::invalid_argument("tool_choice requires a call, but there are no tools");
  }
  if (!s.tools.empty() && s.tool_choice != ToolChoiceMode::None && s.sampler.grammar) {
    throw std::invalid_argument(
        "the sampler's grammar (grammar or JSON Schema) and tools with tool_choice other than none both constrain "
        "the answer: give one of them");
  }
}

}  // namespace peak::chat
