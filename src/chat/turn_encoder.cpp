#include "chat/turn_encoder.h"

#include <algorithm>
#include <stdexcept>

#include "chat/model_chat_template.h"
#include "chat/reasoning.h"
#include "chat/tools_as_text.h"

namespace peak::chat {
namespace {

constexpr const char* kSummaryLead = "Summary of the earlier conversation: ";

// A message's text in the marked render: kMarkOpen, its number, kMarkClose.
constexpr char kMarkOpen = '\x01';
constexpr char kMarkClose = '\x02';

// The template's own text between the marked messages' texts.
std::vector<std::string> template_pieces(const std::string& framed) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < framed.size(); ++i) {
    const size_t close = framed[i] == kMarkOpen ? framed.find(kMarkClose, i) : std::string::npos;
    if (close == std::string::npos) {
      pieces.back() += framed[i];
    } else {
      pieces.emplace_back();
      i = close;
    }
  }
  return pieces;
}

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\n\r");
  if (begin == std::string::npos) return std::string();
  return text.substr(begin, text.find_last_not_of(" \t\n\r") + 1 - begin);
}

// Whether a generation prompt ends by opening the reasoning block (DeepSeek-R1
// writes "<think>\n"), so the output starts inside it.
bool opens_reasoning_block(std::string prompt) {
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.pop_back();
  const std::string open = ReasoningMarkers{}.open;
  return prompt.size() >= open.size() && prompt.compare(prompt.size() - open.size(), open.size(), open) == 0;
}

}  // namespace

TurnEncoder::TurnEncoder(const model::Model& model, const std::string& template_name, bool enable_thinking,
                         std::optional<std::string> tools, bool tools_as_text)
    : model_(model),
      chat_(template_name == "raw" ? ChatTemplate(ChatTemplateFamily::ChatML)
                                   : chat_template_for(model, template_name).chat_template),
      raw_(template_name == "raw"),
      enable_thinking_(enable_thinking),
      tools_(std::move(tools)) {
  if (raw_) {
    if (tools_) throw std::invalid_argument("tools need a chat template; template raw has none");
    return;
  }
  // What every render starts with (BOS text, Llama 3.1's dated system block):
  // the Prefix holds it once and the turns' texts leave it out. Some
  // templates cannot render no messages at all (they read messages[0]).
  try {
    render_base_ = chat_.format({}, false, format_options());
  } catch (const std::exception&) {
    render_base_.clear();
  }
  // A template without a system role (Gemma) renders nothing for a system
  // message alone: system texts (the prompt, the summary) then become user
  // turns of their own, so they stay where the session puts them.
  const std::string probe = "\x01";
  system_role_ =
      chat_.format({{"system", probe}}, false, format_options()).find(probe) != std::string::npos ? "system" : "user";
  generation_opens_reasoning_ = opens_reasoning_block(format_turn({{"user", ""}}, true));
  if (!tools_) return;
  try {
    check_tools_in_prefix();
  } catch (const std::invalid_argument&) {
    if (!tools_as_text) throw;
    tools_as_text_ = true;
  }
}

void TurnEncoder::check_tools_in_prefix() const { prefix_text(""); }

// Templates may refuse to render tools without a message (Qwen3 reads
// messages[0]): the Prefix with tools is the render of the system prompt and a
// user message, less that message as a turn renders it.
std::string TurnEncoder::prefix_text(const std::string& system_prompt) const {
  if (tools_as_text_) {
    const std::string instruction = tools_instruction(*tools_);
    return chat_.format({{system_role_, system_prompt.empty() ? instruction : system_prompt + "\n\n" + instruction}},
                        false, format_options());
  }
  std::vector<ChatMessage> messages;
  if (!system_prompt.empty()) messages.push_back({system_role_, system_prompt});
  const std::string without_tools = messages.empty() ? render_base_ : chat_.format(messages, false, format_options());
  if (!tools_) return without_tools;
  const std::string refused =
      "the chat template writes no tools before the conversation (it may put them into the first user message), so "
      "a session cannot hold them";
  const ChatMessage probe{"user", "\x01"};
  messages.push_back(probe);
  std::string with_tools;
  std::string user_turn;
  std::string without_tools_too;  // the same messages (a template may not render none)
  try {
    with_tools = chat_.format(messages, false, prefix_options());
    without_tools_too = chat_.format(messages, false, format_options());
    user_turn = format_turn({probe}, false);
  } catch (const std::exception& e) {
    throw std::invalid_argument(refused + ": " + e.what());
  }
  const size_t prefix_size = with_tools.size() - std::min(with_tools.size(), user_turn.size());
  if (with_tools == without_tools_too || with_tools.compare(prefix_size, std::string::npos, user_turn) != 0 ||
      with_tools.compare(0, prefix_size, without_tools) == 0) {
    throw std::invalid_argument(refused);
  }
  return with_tools.substr(0, prefix_size);
}

FormatOptions TurnEncoder::prefix_options() const {
  FormatOptions o = format_options();
  o.tools = tools_;
  return o;
}

FormatOptions TurnEncoder::format_options() const {
  FormatOptions o;
  o.enable_thinking = enable_thinking_;
  o.fold_system = true;
  return o;
}

std::vector<int32_t> TurnEncoder::prefix(const std::string& system_prompt) const {
  std::string system_text;
  if (raw_) {
    if (!system_prompt.empty()) system_text = system_prompt + "\n";
  } else {
    system_text = without_added_bos(model_, prefix_text(system_prompt));
  }
  return model_.tokenizer().encode(system_text, /*add_special=*/true, /*parse_special=*/!raw_);
}

std::string TurnEncoder::format_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const {
  const std::string text = chat_.format(turn, add_generation_prompt, format_options());
  // Leave out what every render starts with (it is in the Prefix), or at least
  // the BOS text the tokenizer adds.
  if (!render_base_.empty() && text.compare(0, render_base_.size(), render_base_) == 0) {
    return text.substr(render_base_.size());
  }
  return without_added_bos(model_, text);
}

std::vector<int32_t> TurnEncoder::encode_turn(const std::vector<ChatMessage>& messages,
                                              bool add_generation_prompt) const {
  const std::vector<ChatMessage> turn = tools_as_text_ ? tool_messages_as_text(messages) : messages;
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  if (raw_) {
    // The texts as one (a message's end may join the next's start), unless images split them.
    std::vector<int32_t> out;
    std::string text;
    for (const ChatMessage& m : turn) {
      if (m.images.empty()) {
        text += m.content.value_or("");
        continue;
      }
      append_message_text(out, text, {});
      text.clear();
      append_message_text(out, m.content.value_or(""), m.images);
    }
    append_message_text(out, text, {});
    return out;
  }
  // Control tokens come from the template only: the messages' texts are not
  // parsed for them (a message cannot forge a turn boundary). The turn is
  // rendered once with a marker in place of each text, which shows the
  // template's own pieces, and once for real, which shows each text as the
  // template wrote it (trimmed or not). An answer of calls alone keeps its
  // empty text: templates write calls after a text differently (Qwen3 puts a
  // newline between).
  std::vector<ChatMessage> marked = turn;
  std::vector<size_t> with_text;  // the messages whose text is marked, in order
  for (size_t i = 0; i < marked.size(); ++i) {
    if (!turn[i].tool_calls.empty() && turn[i].content.value_or("").empty()) continue;
    marked[i].content = kMarkOpen + std::to_string(with_text.size()) + kMarkClose;
    with_text.push_back(i);
  }
  const std::vector<std::string> pieces = template_pieces(format_turn(marked, add_generation_prompt));
  if (pieces.size() != with_text.size() + 1) {
    throw std::runtime_error("the chat template does not write each message exactly once");
  }
  const std::string real = format_turn(turn, add_generation_prompt);
  std::vector<int32_t> out;
  size_t at = 0;
  const auto append = [&](const std::string& text, bool special) {
    const std::vector<int32_t> ids = tok.encode(text, false, special);
    out.insert(out.end(), ids.begin(), ids.end());
  };
  for (size_t i = 0; i < with_text.size(); ++i) {
    append(pieces[i], true);
    if (real.compare(at, pieces[i].size(), pieces[i]) == 0) at += pieces[i].size();
    // The text as written: as given, or trimmed when the template trims it.
    const std::string content = turn[with_text[i]].content.value_or("");
    std::string text = content;
    const std::string& next = pieces[i + 1];
    for (const std::string& candidate : {content, trimmed(content)}) {
      if (real.compare(at, candidate.size(), candidate) == 0 &&
          real.compare(at + candidate.size(), next.size(), next) == 0) {
        text = candidate;
        break;
      }
    }
    at += text.size();
    append_message_text(out, text, turn[with_text[i]].images);
  }
  append(pieces.back(), true);
  return out;
}

void TurnEncoder::append_message_text(std::vector<int32_t>& out, const std::string& text,
                                      const ImageList& images) const {
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  const auto append = [&](const std::string& piece, bool special) {
    const std::vector<int32_t> ids = tok.encode(piece, false, special);
    out.insert(out.end(), ids.begin(), ids.end());
  };
  if (images.empty()) {
    if (!text.empty()) append(text, false);
    return;
  }
  if (count_image_markers(text) != images.size()) {
    throw std::invalid_argument("a message's text marks " + std::to_string(count_image_markers(text)) +
                                " places for its " + std::to_string(images.size()) + " images (" + kImageMarker + ")");
  }
  const std::string marker = kImageMarker;
  size_t from = 0;
  for (const ImagePtr& image : images) {
    const size_t at = text.find(marker, from);
    if (at > from) append(text.substr(from, at - from), false);
    for (int64_t frame = 0; frame < image->n_frames(); ++frame) {
      append(image->texts[static_cast<size_t>(frame)], true);
      const int64_t first = frame * image->rows_per_frame();
      for (int64_t row = first; row < first + image->rows_per_frame(); ++row) {
        out.push_back(image_token(image->id, row));
      }
    }
    append(image->texts.back(), true);
    from = at + marker.size();
  }
  if (from < text.size()) append(text.substr(from), false);
}

std::vector<int32_t> TurnEncoder::user_segment(const std::string& text, const ImageList& images) const {
  ChatMessage message{"user", text};
  message.images = images;
  return encode_turn({message}, true);
}

std::vector<int32_t> TurnEncoder::history_tokens(const std::string& user_text, const std::string& answer) const {
  return history_tokens({{"user", user_text}, {"assistant", answer}});
}

std::vector<int32_t> TurnEncoder::history_tokens(const std::vector<ChatMessage>& turn) const {
  if (raw_ || turn.empty()) return encode_turn(turn, false);
  // Templates render the last answer differently from earlier ones (Qwen3 gives
  // only the last an empty reasoning block): the turn as every later prompt
  // shows it is its render followed by another user message, less that message.
  std::vector<ChatMessage> followed = turn;
  followed.push_back({"user", "."});
  std::vector<int32_t> tokens = encode_turn(followed, false);
  const std::vector<int32_t> next = encode_turn({followed.back()}, false);
  if (tokens.size() > next.size() && std::equal(next.rbegin(), next.rend(), tokens.rbegin())) {
    tokens.resize(tokens.size() - next.size());
    return tokens;
  }
  return encode_turn(turn, false);
}

std::vector<int32_t> TurnEncoder::after_context(std::vector<int32_t> tokens, const std::vector<int32_t>& context) {
  if (tokens.size() < context.size() || !std::equal(context.begin(), context.end(), tokens.begin())) {
    throw std::runtime_error(
        "the chat template renders the conversation before tool results differently once they follow it");
  }
  tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(context.size()));
  return tokens;
}

std::vector<int32_t> TurnEncoder::prompt_after(const std::vector<ChatMessage>& context,
                                               const std::vector<ChatMessage>& prompt) const {
  std::vector<ChatMessage> all = context;
  all.insert(all.end(), prompt.begin(), prompt.end());
  return after_context(encode_turn(all, true), history_tokens(context));
}

std::vector<int32_t> TurnEncoder::history_after(const std::vector<ChatMessage>& context,
                                                const std::vector<ChatMessage>& messages) const {
  std::vector<ChatMessage> all = context;
  all.insert(all.end(), messages.begin(), messages.end());
  return after_context(history_tokens(all), history_tokens(context));
}

std::vector<int32_t> TurnEncoder::summary_segment(const std::string& summary) const {
  if (raw_) return model_.tokenizer().encode(std::string(kSummaryLead) + summary + "\n", false, false);
  return encode_turn({{system_role_, std::string(kSummaryLead) + summary}}, false);
}

std::vector<int32_t> TurnEncoder::summary_cells(const std::string& summary, int64_t summary_max) const {
  std::vector<int32_t> segment = summary_segment(summary);
  if (static_cast<int64_t>(segment.size()) > summary_max) segment.resize(static_cast<size_t>(summary_max));
  return segment;
}

}  // namespace peak::chat
