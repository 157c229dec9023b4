// The structs behind the C API's opaque handles, and the conversions between C
// and engine parameters that several C API files share.
#pragma once

#include <cstddef>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capi/capi_guard.h"
#include "gguf/gguf_reader.h"
#include "model/model.h"
#include "model/projector.h"
#include "peak/peak.h"
#include "runtime/context.h"
#include "runtime/pass_group.h"
#include "runtime/generator.h"
#include "sampling/sampler_chain.h"

struct peak_gguf {
  std::unique_ptr<peak::gguf::GgufFile> file;
  std::vector<std::string> keys;          // NUL-terminated copies (file keys are not)
  std::vector<std::string> tensor_names;  // likewise
  // NUL-terminated copies of the string values (the file's are not), made at
  // open so that an immutable handle can return them to any thread.
  std::vector<char> strings;
  std::vector<size_t> string_at;  // per key: where its string, or its array's first string, starts
};

struct peak_projector {
  std::unique_ptr<peak::model::Projector> projector;
};

struct peak_model {
  std::unique_ptr<peak::model::Model> model;  // NULL when opened by peak_model_load_vocab
  std::unique_ptr<peak::tokenizer::Tokenizer> vocab_only;  // the tokenizer then, without the file
  const peak::tokenizer::Tokenizer& tokenizer() const { return model ? model->tokenizer() : *vocab_only; }
  std::string architecture;   // NUL-terminated copies for peak_model_info
  std::string name;
  std::string chat_template;  // "jinja" or the built-in family's name
  std::string chat_template_source;
  std::string chat_template_warning;
};

// Whether `model` has weights; a tokenizer opened by peak_model_load_vocab has
// none, and `function` refuses it with PEAK_ERR_INVALID_ARGUMENT.
inline bool has_weights(const peak_model* model, const char* function) {
  if (model->model) return true;
  peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, std::string(function) +
                                                  ": the model was opened by peak_model_load_vocab, a tokenizer without weights");
  return false;
}

struct peak_pass_group {
  const peak_model* model;
  std::unique_ptr<peak::runtime::PassGroup> group;
};

struct peak_context {
  const peak_model* model;
  std::unique_ptr<peak::runtime::Context> context;
};

struct peak_draft_model {
  const peak_model* model;
  std::unique_ptr<peak::runtime::DraftModel> draft;
};

namespace peak::capi {

// Checks the C model parameters (NULL: the defaults) and converts them; a
// refusal sets the last error naming `function`. (capi_model.cpp)
peak_status load_options(const peak_model_params* params, const char* function, peak::model::LoadOptions* options);
// A file descriptor's region as the engine's source; a negative fd is refused
// here, naming `function`, and the rest when the file is opened. (capi_model.cpp)
peak_status fd_source(int fd, uint64_t offset, uint64_t length, const char* function, peak::io::FileSource* source);

// Checks the C context parameters (NULL: the defaults) and converts them; a
// refusal sets the last error. `model` (may be NULL) only adds its training
// context to the message for n_ctx 0. (capi_context.cpp)
peak_status context_params_from_c(const peak_context_params* params, const peak_model* model,
                                  peak::runtime::ContextParams* cp);

// The tokens of text from a user (a prompt, a message). Text that is not empty
// but of which the model's vocabulary can spell no character gives no token:
// that is refused with std::invalid_argument, `what` ("peak_generate: the
// prompt") and the characters named, rather than run as an empty text.
// (capi_model.cpp)
std::vector<int32_t> encode_user_text(const peak_model& model, std::string_view text, bool add_special,
                                      bool parse_special, const std::string& what);

}  // namespace peak::capi

struct peak_sampler {
  const peak_model* model;  // with weights (peak_sampler_create checks)
  std::unique_ptr<peak::sampling::SamplerChain> chain;
};

inline peak_stop_reason stop_reason_to_c(peak::runtime::StopReason r) {
  switch (r) {
    case peak::runtime::StopReason::EndOfGeneration:
    case peak::runtime::StopReason::GrammarEnd: return PEAK_STOP_EOG;
    case peak::runtime::StopReason::MaxTokens: return PEAK_STOP_MAX_TOKENS;
    case peak::runtime::StopReason::ContextFull: return PEAK_STOP_CONTEXT_FULL;
    case peak::runtime::StopReason::Callback: return PEAK_STOP_CALLBACK;
    case peak::runtime::StopReason::Aborted: return PEAK_STOP_ABORTED;
  }
  return PEAK_STOP_ABORTED;
}

// Checks the counts of C sampler parameters the sampler chain keeps as int32_t;
// `struct_name` names the struct in the message.
inline bool sampler_counts_ok(const peak_sampler_params& p, const std::string& struct_name) {
  using peak::capi::at_most;
  using peak::capi::kMaxTokenCount;
  if (p.n_preserved_tokens > 0 && !p.preserved_tokens) {
    peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, struct_name + ".preserved_tokens is NULL with n_preserved_tokens " +
                                                    std::to_string(p.n_preserved_tokens));
    return false;
  }
  return at_most(p.top_k, kMaxTokenCount, (struct_name + ".top_k").c_str()) &&
         at_most(p.penalty_last_n, kMaxTokenCount, (struct_name + ".penalty_last_n").c_str()) &&
         at_most(p.n_preserved_tokens, kMaxTokenCount, (struct_name + ".n_preserved_tokens").c_str());
}

namespace peak::capi {

// GBNF text compiled from rule `root` (NULL: "root"), and the grammar of a
// JSON Schema's text; `what` starts the message. Throw std::invalid_argument
// naming the line and column of a grammar that does not compile, or the
// subschema ("at POINTER") of a schema that cannot be converted. (capi_grammar.cpp)
std::shared_ptr<const peak::sampling::Grammar> compile_gbnf(const char* gbnf, const char* root,
                                                            const std::string& what);
std::shared_ptr<const peak::sampling::Grammar> compile_json_schema(const char* json_schema, const std::string& what);

// The grammar the C sampler parameters ask for (grammar or json_schema), or
// NULL. Throws std::invalid_argument as above, and for both given.
std::shared_ptr<const peak::sampling::Grammar> sampler_grammar(const peak_sampler_params& p);

}  // namespace peak::capi

// The first version of peak_sampler_params ended at json_schema.
constexpr size_t kSamplerParamsFirstSize = offsetof(peak_sampler_params, preserved_tokens);

// Sampler parameters of either version (the later fields of the first keep
// their defaults), their counts checked; `struct_name` names the struct in the
// message.
inline bool read_sampler_params(const peak_sampler_params* given, const std::string& struct_name,
                                peak_sampler_params* out) {
  return peak::capi::read_versioned_params(given, peak_sampler_default_params(), {kSamplerParamsFirstSize},
                                           struct_name.c_str(), out) &&
         sampler_counts_ok(*out, struct_name);
}

// The C sampler parameters, checked by sampler_counts_ok, as the sampler chain's.
// Throws std::invalid_argument, naming the line and column, for a grammar
// that does not compile (the subschema for a JSON Schema).
inline peak::sampling::SamplerParams sampler_params_from_c(const peak_sampler_params& p) {
  peak::sampling::SamplerParams s;
  s.temperature = p.temperature;
  s.top_k = static_cast<int32_t>(p.top_k);
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.penalty_last_n = static_cast<int32_t>(p.penalty_last_n);
  s.repeat_penalty = p.repeat_penalty;
  s.frequency_penalty = p.frequency_penalty;
  s.presence_penalty = p.presence_penalty;
  s.seed = p.seed;
  s.grammar = peak::capi::sampler_grammar(p);
  // Any order from C; the chain takes them increasing (duplicates stay, for its message).
  s.preserved_tokens.assign(p.preserved_tokens, p.preserved_tokens + p.n_preserved_tokens);
  std::sort(s.preserved_tokens.begin(), s.preserved_tokens.end());
  return s;
}

// The C generation parameters as the generator's. The generator's pieces are
// strings, so the text callback gets them NUL-terminated as they are.
inline peak::runtime::GenerateOptions generate_options_from_c(const peak_generate_params& p) {
  peak::runtime::GenerateOptions o;
  o.lookup_ngram = p.lookup_ngram;
  o.draft_max = p.draft_max;
  o.draft_model = p.draft_model ? p.draft_model->draft.get() : nullptr;
  o.draft_p_min = p.draft_p_min;
  // A limit above INT32_MAX is never reached (positions are int32_t): no limit.
  o.max_tokens = p.max_tokens > peak::capi::kMaxTokenCount ? -1 : static_cast<int32_t>(p.max_tokens);
  o.abort_flag = p.abort_flag;
  if (p.on_kinded_text) {
    o.on_text = [&p](const std::string& piece) {
      return p.on_kinded_text(piece.c_str(), piece.size(), PEAK_TEXT_ANSWER, p.user_data) != 0;
    };
  } else if (p.on_text) {
    o.on_text = [&p](const std::string& piece) { return p.on_text(piece.c_str(), piece.size(), p.user_data) != 0; };
  }
  return o;
}

// The first versions of peak_generate_params and peak_generate_result (before
// prompt lookup), and peak_generate_params of 0.6.0 (before draft models).
constexpr size_t kGenerateParamsFirstSize = offsetof(peak_generate_params, lookup_ngram);
constexpr size_t kGenerateParamsLookupSize = offsetof(peak_generate_params, draft_model);
constexpr size_t kGenerateResultFirstSize = offsetof(peak_generate_result, n_drafted_tokens);

// The generation parameters of any version, and the result's struct_size
// checked; false (the message set) when either is refused.
inline bool generate_params_from_c(const peak_generate_params* params, const peak_generate_result* result,
                                   peak_generate_params* out) {
  if (!peak::capi::read_versioned_params(params, peak_generate_default_params(),
                                         {kGenerateParamsFirstSize, kGenerateParamsLookupSize}, "peak_generate_params",
                                         out)) {
    return false;
  }
  if (result && result->struct_size != kGenerateResultFirstSize &&
      !peak::capi::struct_size_ok(result->struct_size, sizeof(peak_generate_result), "peak_generate_result")) {
    return false;
  }
  if (out->lookup_ngram < 0) {
    peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, "peak_generate_params.lookup_ngram is " +
                                                    std::to_string(out->lookup_ngram) +
                                                    ": 0 (off) or the longest n-gram looked up");
    return false;
  }
  const bool drafts = out->lookup_ngram > 0 || out->draft_model;
  if (out->lookup_ngram > 0 && out->draft_model) {
    peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT,
                     "peak_generate_params: lookup_ngram and draft_model both draft; set one of them");
    return false;
  }
  if (drafts && out->draft_max < 1) {
    peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, "peak_generate_params.draft_max is " + std::to_string(out->draft_max) +
                                                    ": a draft is 1 or more tokens");
    return false;
  }
  if (out->draft_model && !(out->draft_p_min >= 0.0f && out->draft_p_min <= 1.0f)) {
    peak::capi::fail(PEAK_ERR_INVALID_ARGUMENT, "peak_generate_params.draft_p_min is " +
                                                    std::to_string(out->draft_p_min) + ": a probability, in [0, 1]");
    return false;
  }
  return true;
}

// Fills a C generation result (when the caller asked for one), as far as its version goes.
inline void result_to_c(const peak::runtime::GenerateResult& r, peak_generate_result* result) {
  if (!result) return;
  result->n_prompt_tokens = static_cast<size_t>(r.n_prompt);
  result->n_generated_tokens = static_cast<size_t>(r.n_generated);
  result->stop_reason = stop_reason_to_c(r.reason);
  result->prompt_seconds = r.prompt_seconds;
  result->generate_seconds = r.generate_seconds;
  if (result->struct_size == kGenerateResultFirstSize) return;
  result->n_drafted_tokens = static_cast<size_t>(r.n_drafted);
  result->n_accepted_tokens = static_cast<size_t>(r.n_accepted);
}
