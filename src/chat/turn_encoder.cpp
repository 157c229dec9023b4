#include "chat/turn_encoder.h"

#include <algorithm>
#include <stdexcept>

#include "chat/model_chat_template.h"
#include "chat/reasoning.h"

namespace peak::chat {
namespace {

constexpr const char* kSummaryLead = "Summary of the earlier conversation: ";

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

TurnEncoder::TurnEncoder(const model::Model& model, const std::string& template_name, bool enable_thinking)
    : model_(model),
      chat_(template_name == "raw" ? ChatTemplate(ChatTemplateFamily::ChatML)
                                   : chat_template_for(model, template_name).chat_template),
      raw_(template_name == "raw"),
      enable_thinking_(enable_thinking) {
  if (raw_) return;
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
    system_text =
        system_prompt.empty() ? render_base_ : chat_.format({{system_role_, system_prompt}}, false, format_options());
    system_text = without_added_bos(model_, system_text);
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

std::vector<int32_t> TurnEncoder::encode_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const {
  const tokenizer::Tokenizer& tok = model_.tokenizer();
  if (raw_) {
    std::string text;
    for (const ChatMessage& m : turn) text += m.content.value_or("");
    return tok.encode(text, false, false);
  }
  // Control tokens come from the template only: the messages' texts are not
  // parsed for them (a message cannot forge a turn boundary). The turn is
  // rendered once with a marker in place of each text, which shows the
  // template's own pieces, and once for real, which shows each text as the
  // template wrote it (trimmed or not).
  std::vector<ChatMessage> marked = turn;
  for (size_t i = 0; i < marked.size(); ++i) marked[i].content = std::string(1, static_cast<char>(1 + i));
  const std::string framed = format_turn(marked, add_generation_prompt);
  std::vector<std::string> pieces(1);
  for (const char c : framed) {
    if (c >= 1 && c <= static_cast<char>(marked.size())) {
      pieces.emplace_back();
    } else {
      pieces.back() += c;
    }
  }
  if (pieces.size() != turn.size() + 1) {
    throw std::runtime_error("the chat template does not write each message exactly once");
  }
  const std::string real = format_turn(turn, add_generation_prompt);
  std::vector<int32_t> out;
  size_t at = 0;
  const auto append = [&](const std::string& text, bool special) {
    const std::vector<int32_t> ids = tok.encode(text, false, special);
    out.insert(out.end(), ids.begin(), ids.end());
  };
  for (size_t i = 0; i < turn.size(); ++i) {
    append(pieces[i], true);
    if (real.compare(at, pieces[i].size(), pieces[i]) == 0) at += pieces[i].size();
    // The text as written: as given, or trimmed when the template trims it.
    const std::string content = turn[i].content.value_or("");
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
    append(text, false);
  }
  append(pieces.back(), true);
  return out;
}

std::vector<int32_t> TurnEncoder::user_segment(const std::string& text) const {
  return encode_turn({{"user", text}}, true);
}

std::vector<int32_t> TurnEncoder::history_tokens(const std::string& user_text, const std::string& answer) const {
  const std::vector<ChatMessage> turn = {{"user", user_text}, {"assistant", answer}};
  if (raw_) return encode_turn(turn, false);
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
