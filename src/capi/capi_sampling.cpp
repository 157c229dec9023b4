// peak_sampler_*, peak_generate and peak_chat_apply_template.
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "chat/chat_messages_json.h"
#include "chat/chat_template.h"
#include "chat/model_chat_template.h"
#include "runtime/generator.h"

namespace {

using peak::capi::fail;
using peak::capi::guarded;

// A token generated (the grammar reads it) or of the prompt (it does not).
peak_status accept_token(peak_sampler* sampler, int32_t token, bool generated, const char* function) {
  PEAK_CHECK_ARG(sampler, std::string(function) + ": sampler");
  if (token < 0 || token >= sampler->chain->n_vocab()) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(function) + ": token " + std::to_string(token) +
                                               " is outside the vocabulary of " +
                                               std::to_string(sampler->chain->n_vocab()));
  }
  return guarded([&] {
    if (generated) {
      sampler->chain->accept(token);
    } else {
      sampler->chain->accept_prompt(token);
    }
    return PEAK_OK;
  });
}

// The first version of peak_chat_template_params ended at enable_thinking.
constexpr size_t kChatTemplateParamsFirstSize = offsetof(peak_chat_template_params, tools_json);

// The conversation comes from the messages array or from messages_json, not both.
bool messages_ok(const peak_chat_template_params& p, const peak_chat_message* messages, size_t n_messages) {
  if (p.messages_json && (messages || n_messages > 0)) {
    fail(PEAK_ERR_INVALID_ARGUMENT,
         "peak_chat_apply_template: give the messages array or messages_json, not both (the array must be NULL "
         "with n_messages 0 when messages_json is set)");
    return false;
  }
  if (!messages && n_messages > 0) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_apply_template: messages is NULL");
    return false;
  }
  for (size_t i = 0; i < n_messages; ++i) {
    if (!messages[i].role || !messages[i].content) {
      fail(PEAK_ERR_INVALID_ARGUMENT,
           "peak_chat_apply_template: message " + std::to_string(i) + " has a NULL role or content");
      return false;
    }
  }
  return true;
}

// Throws std::invalid_argument naming the JSON path of what messages_json gets wrong.
std::vector<peak::chat::ChatMessage> conversation(const peak_chat_template_params& p, const peak_chat_message* messages,
                                                  size_t n_messages) {
  if (p.messages_json) return peak::chat::messages_from_json(p.messages_json);
  std::vector<peak::chat::ChatMessage> list;
  list.reserve(n_messages);
  for (size_t i = 0; i < n_messages; ++i) list.push_back({messages[i].role, messages[i].content});
  return list;
}

// enable_thinking (-1: not passed) and the tools; throws std::invalid_argument
// naming the JSON path of what tools_json gets wrong.
peak::chat::FormatOptions format_options(const peak_chat_template_params& p) {
  peak::chat::FormatOptions options;
  if (p.enable_thinking < 0) {
    options.enable_thinking.reset();
  } else {
    options.enable_thinking = p.enable_thinking != 0;
  }
  if (p.tools_json) options.tools = peak::chat::tools_from_json(p.tools_json);
  return options;
}

// template_source when given (with the model's BOS and EOS texts unless the
// params give them); else the family template_name names; else the model's own.
peak::chat::ChatTemplate chosen_template(const peak_model* model, const peak_chat_template_params& p) {
  if (p.template_source) {
    const peak::chat::SpecialTexts model_texts =
        model ? peak::chat::special_texts(*model->model) : peak::chat::SpecialTexts{};
    return peak::chat::ChatTemplate::from_jinja(p.template_source, p.bos_token ? p.bos_token : model_texts.bos,
                                                p.eos_token ? p.eos_token : model_texts.eos);
  }
  if (model) return peak::chat::chat_template_for(*model->model, p.template_name ? p.template_name : "").chat_template;
  return peak::chat::ChatTemplate::from_name(p.template_name);
}

}  // namespace

extern "C" {

peak_sampler_params peak_sampler_default_params(void) {
  const peak::sampling::SamplerParams d;
  peak_sampler_params p{};
  p.struct_size = sizeof(peak_sampler_params);
  p.temperature = d.temperature;
  p.top_k = static_cast<size_t>(d.top_k);
  p.top_p = d.top_p;
  p.min_p = d.min_p;
  p.penalty_last_n = static_cast<size_t>(d.penalty_last_n);
  p.repeat_penalty = d.repeat_penalty;
  p.frequency_penalty = d.frequency_penalty;
  p.presence_penalty = d.presence_penalty;
  p.seed = d.seed;
  return p;
}

peak_status peak_sampler_create(const peak_model* model, const peak_sampler_params* params, peak_sampler** out) {
  PEAK_CHECK_ARG(out, "peak_sampler_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_sampler_create: model");
  if (!has_weights(model, "peak_sampler_create")) return PEAK_ERR_INVALID_ARGUMENT;
  peak_sampler_params p;
  if (!read_sampler_params(params, "peak_sampler_params", &p)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    const peak::sampling::SamplerParams sp = sampler_params_from_c(p);
    const bool reads_vocabulary = sp.grammar || !sp.preserved_tokens.empty();
    auto s = std::make_unique<peak_sampler>();
    s->model = model;
    s->chain =
        std::make_unique<peak::sampling::SamplerChain>(static_cast<int32_t>(model->model->hparams().n_vocab), sp,
                                                       reads_vocabulary ? model->model->grammar_vocabulary() : nullptr);
    *out = s.release();
    return PEAK_OK;
  });
}

void peak_sampler_free(peak_sampler* sampler) { delete sampler; }

peak_status peak_sampler_sample(peak_sampler* sampler, const peak_context* ctx, int32_t* token) {
  PEAK_CHECK_ARG(sampler, "peak_sampler_sample: sampler");
  PEAK_CHECK_ARG(ctx, "peak_sampler_sample: ctx");
  PEAK_CHECK_ARG(token, "peak_sampler_sample: token");
  if (ctx->model != sampler->model) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_sample: the sampler and the context use different models");
  }
  if (ctx->context->kv().used() == 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_sample: the context has no logits yet (evaluate tokens first)");
  }
  return guarded([&] {
    *token = sampler->chain->sample(ctx->context->logits());
    return PEAK_OK;
  });
}

peak_status peak_sampler_accept(peak_sampler* sampler, int32_t token) {
  return accept_token(sampler, token, /*generated=*/true, "peak_sampler_accept");
}

peak_status peak_sampler_accept_prompt(peak_sampler* sampler, int32_t token) {
  return accept_token(sampler, token, /*generated=*/false, "peak_sampler_accept_prompt");
}

void peak_sampler_reset(peak_sampler* sampler) {
  if (sampler) sampler->chain->reset();
}

peak_generate_params peak_generate_default_params(void) {
  peak_generate_params p{};
  p.struct_size = sizeof(peak_generate_params);
  p.max_tokens = 256;
  p.add_special = 1;
  p.parse_special = 1;
  p.lookup_ngram = 0;
  p.draft_max = 4;
  p.draft_model = nullptr;
  p.draft_p_min = 0.75f;
  return p;
}

peak_status peak_generate(peak_context* ctx, peak_sampler* sampler, const char* prompt, size_t length,
                          const peak_generate_params* params, peak_generate_result* result) {
  PEAK_CHECK_ARG(ctx, "peak_generate: ctx");
  PEAK_CHECK_ARG(sampler, "peak_generate: sampler");
  if (!prompt && length > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_generate: prompt is NULL");
  peak_generate_params p;
  if (!generate_params_from_c(params, result, &p)) return PEAK_ERR_INVALID_ARGUMENT;
  if (ctx->model != sampler->model) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_generate: the sampler and the context use different models");
  }
  return guarded([&] {
    // BOS (and whatever else the model adds) starts a sequence: only a context
    // holding no tokens yet gets it, never a continuation.
    const bool starts_sequence = ctx->context->kv().used() == 0;
    const std::vector<int32_t> tokens = peak::capi::encode_user_text(
        *ctx->model, std::string_view(prompt ? prompt : "", length), starts_sequence && p.add_special != 0,
        p.parse_special != 0, "peak_generate: the prompt");
    if (tokens.empty() && starts_sequence) {
      return fail(PEAK_ERR_INVALID_ARGUMENT,
                  "peak_generate: the prompt is empty and the context holds no tokens, so there is nothing to "
                  "continue (with add_special set, an empty prompt starts from BOS where the model adds one)");
    }
    const peak::runtime::GenerateOptions options = generate_options_from_c(p);
    result_to_c(peak::runtime::generate(*ctx->context, *sampler->chain, tokens, options), result);
    return PEAK_OK;
  });
}

peak_chat_template_params peak_chat_template_default_params(void) {
  peak_chat_template_params p{};
  p.struct_size = sizeof(peak_chat_template_params);
  p.add_generation_prompt = 1;
  p.enable_thinking = 0;
  return p;
}

peak_status peak_chat_apply_template(const peak_model* model, const peak_chat_template_params* params,
                                     const peak_chat_message* messages, size_t n_messages, char* buf, size_t capacity,
                                     size_t* length) {
  PEAK_CHECK_ARG(length, "peak_chat_apply_template: length");
  *length = 0;
  peak_chat_template_params p;
  if (!peak::capi::read_versioned_params(params, peak_chat_template_default_params(), {kChatTemplateParamsFirstSize},
                                         "peak_chat_template_params", &p)) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  if (!model && !p.template_name && !p.template_source) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_apply_template: give a model, a template name or a template source");
  }
  if (model && !has_weights(model, "peak_chat_apply_template")) return PEAK_ERR_INVALID_ARGUMENT;
  if (p.enable_thinking < -1 || p.enable_thinking > 1) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_apply_template: enable_thinking must be -1, 0 or 1");
  }
  if (!buf && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_chat_apply_template: buf is NULL");
  if (!messages_ok(p, messages, n_messages)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    std::vector<peak::chat::ChatMessage> list;
    peak::chat::FormatOptions options;
    try {
      list = conversation(p, messages, n_messages);
      options = format_options(p);
    } catch (const std::invalid_argument& e) {
      return fail(PEAK_ERR_INVALID_ARGUMENT, std::string("peak_chat_apply_template: ") + e.what());
    }
    return peak::capi::copy_out(chosen_template(model, p).format(list, p.add_generation_prompt != 0, options), "prompt",
                                buf, capacity, length);
  });
}

}  // extern "C"
