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

// The text of the model's BOS token when its tokenizer adds BOS by itself, so
// the BOS text a template writes must be left out of what is tokenized; else "".
std::string bos_text_added_by_tokenizer(const model::Model& model);

}  // namespace peak::chat
