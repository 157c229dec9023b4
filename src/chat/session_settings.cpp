#include "chat/session_settings.h"

#include <stdexcept>

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
  if (s.mode == MemoryMode::Ssskv) {
    require_at_least("summary_max", s.summary_max, 16);
    validate_summarizer(s.summarizer);
  }
}

}  // namespace peak::chat
