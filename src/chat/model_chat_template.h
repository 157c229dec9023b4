// The chat template a model asks for (its tokenizer.chat_template), or one chosen
// by name, with the model's own end-of-sequence text where the family needs it.
#pragma once

#include <string>
#include <string_view>

#include "model/model.h"
#include "chat/chat_template.h"

namespace peak::chat {

// Throws std::invalid_argument for an unknown override name.
DetectedChatTemplate chat_template_for(const model::Model& model, std::string_view override_name);

// The texts of the model's BOS and EOS tokens, as a Jinja template writes them
// for bos_token and eos_token ("" for a token the model lacks).
struct SpecialTexts {
  std::string bos;
  std::string eos;
};
SpecialTexts special_texts(const model::Model& model);

// `text` less the BOS text a template writes at its start when the model's
// tokenizer adds BOS itself (so it is not tokenized twice).
std::string without_added_bos(const model::Model& model, const std::string& text);

}  // namespace peak::chat
