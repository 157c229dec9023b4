#include "chat/session_state.h"

namespace peak::chat {

int64_t SessionState::recent_cells() const {
  int64_t n = 0;
  for (const RecentMessage& m : recent) n += static_cast<int64_t>(m.tokens.size());
  return n;
}

MessageState SessionState::where(size_t index) const {
  if (index >= log.size() - unsent - recent.size()) return MessageState::InContext;
  return index < summarized_messages ? MessageState::Summarized : MessageState::Dropped;
}

std::vector<int32_t> SessionState::cached_tokens(const std::vector<int32_t>& prefix) const {
  std::vector<int32_t> all = prefix;
  all.insert(all.end(), summary_tokens.begin(), summary_tokens.end());
  for (const RecentMessage& m : recent) all.insert(all.end(), m.tokens.begin(), m.tokens.end());
  return all;
}

ImageList SessionState::recent_images() const {
  ImageList images;
  for (const RecentMessage& m : recent) add_images(images, m.images);
  return images;
}

void SessionState::count_dropped(int64_t cells) {
  stats.dropped_since_summary += cells;
  stats.dropped_total += cells;
}

int64_t SessionState::drop_front() {
  const RecentMessage& m = recent.front();
  dropped_text += dropped_message_line(m.role, m.text);
  const auto n = static_cast<int64_t>(m.tokens.size());
  count_dropped(n);
  recent.pop_front();
  return n;
}

void SessionState::cut_front(int64_t n) {
  RecentMessage& m = recent.front();
  dropped_text += cut_message_line(m.role, m.text);
  count_dropped(n);
  m.tokens.erase(m.tokens.begin(), m.tokens.begin() + n);
}

size_t SessionState::cut_long_segment(std::vector<int32_t>& segment, int64_t limit, const std::string& user_text,
                                      size_t user_part, const std::string& answer, const std::string& prompt_role) {
  if (static_cast<int64_t>(segment.size()) <= limit) return 0;
  const size_t cut = segment.size() - static_cast<size_t>(limit);
  if (cut < user_part) {
    dropped_text += cut_message_line(prompt_role, user_text);
  } else {
    dropped_text += dropped_message_line(prompt_role, user_text);
    if (cut > user_part) dropped_text += cut_message_line("assistant", answer);
  }
  count_dropped(static_cast<int64_t>(cut));
  segment.erase(segment.begin(), segment.begin() + static_cast<std::ptrdiff_t>(cut));
  return cut;
}

namespace {

std::string speaker(const std::string& role) {
  if (role == "user") return "User";
  return role == "tool" ? "Tool result" : "Assistant";
}

}  // namespace

std::string dropped_message_line(const std::string& role, const std::string& text) {
  return speaker(role) + ": " + text_for_summary(text) + "\n";
}

ChatMessage chat_message(const LoggedMessage& m) {
  // Built whole: assigning the pictures after gave g++ 12 for aarch64 a
  // false -Wnull-dereference in the vector's assignment.
  ChatMessage c{m.role, m.content, m.tool_calls, {}, {}, m.images};
  if (m.role == "tool") {
    c.tool_call_id = m.tool_call_id;
    c.name = m.name;
  }
  return c;
}

std::vector<ChatMessage> chat_messages(const std::vector<LoggedMessage>& messages) {
  std::vector<ChatMessage> out;
  for (const LoggedMessage& m : messages) out.push_back(chat_message(m));
  return out;
}

size_t exchange_start(const std::vector<LoggedMessage>& log, size_t at) {
  size_t from = at;
  while (from > 0 && log[from - 1].role != "user") --from;
  return from > 0 ? from - 1 : 0;
}

std::string summary_text(const LoggedMessage& m) {
  if (m.role == "tool") return m.name.empty() ? m.content : "(" + m.name + ") " + m.content;
  std::string text = m.content;
  for (const ToolCall& call : m.tool_calls) {
    text += (text.empty() ? "" : " ") + std::string("[calls ") + call.name + "(" + call.arguments + ")]";
  }
  return text;
}

std::string cut_message_line(const std::string& role, const std::string& text) {
  // About its first half, cut before a UTF-8 character rather than inside one.
  const std::string readable = text_for_summary(text);
  size_t n = readable.size() / 2;
  while (n > 0 && (static_cast<unsigned char>(readable[n]) & 0xC0) == 0x80) --n;
  return speaker(role) + std::string(" (start of a long message): ") + readable.substr(0, n) + "\n";
}

}  // namespace peak::chat
