#include "chat/model_chat_template.h"

namespace peak::chat {

DetectedChatTemplate chat_template_for(const model::Model& model, std::string_view override_name) {
  const SpecialTexts texts = special_texts(model);
  DetectedChatTemplate chosen = choose_chat_template(override_name, model.chat_template(), texts.bos, texts.eos);
  // Zephyr closes every turn with the model's end-of-sequence text.
  if (chosen.chat_template.family() == ChatTemplateFamily::Zephyr && model.tokenizer().eos() >= 0) {
    chosen.chat_template = ChatTemplate::zephyr(texts.eos);
  }
  return chosen;
}

SpecialTexts special_texts(const model::Model& model) {
  const tokenizer::Tokenizer& tok = model.tokenizer();
  const auto text_of = [&tok](int32_t id) { return id >= 0 ? tok.token_to_piece(id, /*render_special=*/true) : std::string(); };
  return {text_of(tok.bos()), text_of(tok.eos())};
}

std::string without_added_bos(const model::Model& model, const std::string& text) {
  const tokenizer::Tokenizer& tok = model.tokenizer();
  if (!tok.add_bos() || tok.bos() < 0) return text;
  const std::string bos = tok.token_to_piece(tok.bos(), /*render_special=*/true);
  return !bos.empty() && text.compare(0, bos.size(), bos) == 0 ? text.substr(bos.size()) : text;
}

}  // namespace peak::chat
