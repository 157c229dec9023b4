// The chat template a model asks for (its tokenizer.chat_template), or one chosen
// by name, with the model's own end-of-sequence text where the family needs it.
#pragma once

#include <string_view>

#include "model/model.h"
#include "chat/chat_template.h"

namespace peak::chat {

// Throws std::invalid_argument for an unknown override name.
DetectedChatTemplate chat_template_for(const model::Model& model, std::string_view override_name);

}  // namespace peak::chat
