// A model's own chat template, rendered by the Jinja interpreter with what
// Hugging Face's apply_chat_template passes: `messages`, `add_generation_prompt`,
// `bos_token`, `eos_token` and, when set, `enable_thinking`.
#include <utility>

#include "chat/chat_template.h"
#include "jinja/template.h"

namespace peak::chat {

ChatTemplate ChatTemplate::from_jinja(std::string_view source, std::string bos_text, std::string eos_text) {
  ChatTemplate result(ChatTemplateFamily::Jinja);
  result.jinja_ = std::make_shared<const jinja::Template>(jinja::Template::parse(source));
  result.begin_of_sequence_ = std::move(bos_text);
  result.end_of_sequence_ = std::move(eos_text);
  return result;
}

namespace {

jinja::Value messages_value(const std::vector<ChatMessage>& messages) {
  jinja::Value list = jinja::Value::list();
  for (const ChatMessage& m : messages) {
    jinja::Value message = jinja::Value::dict();
    message.set("role", m.role).set("content", m.content);
    list.push_back(std::move(message));
  }
  return list;
}

// Gemma 2's policy for a system message, which its template refuses: the text
// opens the first user message, as Gemma 3's template writes it itself.
std::vector<ChatMessage> system_folded(const std::vector<ChatMessage>& messages) {
  std::vector<ChatMessage> folded(messages.begin() + 1, messages.end());
  auto user = folded.begin();
  while (user != folded.end() && user->role != "user") ++user;
  if (user == folded.end()) {
    folded.insert(folded.begin(), ChatMessage{"user", messages.front().content});
  } else {
    user->content = messages.front().content + "\n\n" + user->content;
  }
  return folded;
}

}  // namespace

std::string ChatTemplate::format_jinja(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                       const FormatOptions& options) const {
  const auto render = [&](const std::vector<ChatMessage>& list) {
    jinja::Value context = jinja::Value::dict();
    context.set("messages", messages_value(list))
        .set("add_generation_prompt", add_generation_prompt)
        .set("bos_token", begin_of_sequence_)
        .set("eos_token", end_of_sequence_);
    if (options.enable_thinking) context.set("enable_thinking", *options.enable_thinking);
    jinja::RenderOptions render_options;
    render_options.strftime_now = options.strftime_now;
    return jinja_->render(context, render_options);
  };
  try {
    return render(messages);
  } catch (const jinja::TemplateRaised&) {
    if (!options.fold_system || messages.empty() || messages.front().role != "system") throw;
    return render(system_folded(messages));
  }
}

const char* template_source_name(TemplateSource source) {
  switch (source) {
    case TemplateSource::Embedded: return "embedded";
    case TemplateSource::BuiltIn: return "built-in";
    case TemplateSource::Fallback: return "fallback";
  }
  return "unknown";
}

}  // namespace peak::chat
