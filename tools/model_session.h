// Loading a model and creating its context and sampler from the shared options,
// with errors reported as "peak <command>: <message>".
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_args.h"
#include "peak/peak.h"

// A failure at run time (missing file, bad model ...): exit status 1.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CommandError with peak_last_error() when `status` is not PEAK_OK.
void check_status(peak_status status);

struct ModelDeleter { void operator()(peak_model* m) const { peak_model_free(m); } };
struct ContextDeleter { void operator()(peak_context* c) const { peak_context_free(c); } };
struct SamplerDeleter { void operator()(peak_sampler* s) const { peak_sampler_free(s); } };
struct AdapterDeleter { void operator()(peak_adapter* a) const { peak_adapter_free(a); } };
struct SessionDeleter {
  void operator()(peak_session* s) const { peak_session_free(s); }
};
struct DraftModelDeleter {
  void operator()(peak_draft_model* d) const { peak_draft_model_free(d); }
};
struct EmbedderDeleter {
  void operator()(peak_embedder* e) const { peak_embedder_free(e); }
};
struct ProjectorDeleter {
  void operator()(peak_projector* p) const { peak_projector_free(p); }
};
struct ImageEncoderDeleter {
  void operator()(peak_image_encoder* e) const { peak_image_encoder_free(e); }
};
struct ImageDeleter {
  void operator()(peak_image* i) const { peak_image_free(i); }
};

struct LoadedModel {
  // Declared first, so freed last: the adapters after the context, the model after them.
  std::unique_ptr<peak_model, ModelDeleter> model;
  std::vector<std::unique_ptr<peak_adapter, AdapterDeleter>> adapters;  // as options.adapters
  std::unique_ptr<peak_context, ContextDeleter> context;
  std::unique_ptr<peak_sampler, SamplerDeleter> sampler;
  peak_model_info info{};
  std::vector<peak_adapter_use> adapter_uses;  // the adapters with their scales
  peak_adapter_set_params adapter_set = peak_adapter_set_default_params();  // points into adapter_uses
  uint64_t adapter_bytes = 0;  // LoRA matrices read per token besides the model's
  // --draft-model: its model, then its context (freed first).
  std::unique_ptr<peak_model, ModelDeleter> draft_file;
  std::unique_ptr<peak_draft_model, DraftModelDeleter> draft;
};

// The tokens of `text` (peak_tokenize: add_special adds BOS/EOS as the model
// asks, parse_special reads control tokens written in the text).
std::vector<int32_t> tokenize(const peak_model* model, const std::string& text, bool add_special, bool parse_special);
// What the model's vocabulary cannot spell of `what` ("the prompt"), text the
// user wrote: a warning on stderr ("peak <command>: ...") naming the characters
// the model will not see, or CommandError when none of the text is left.
void check_spelled(const peak_model* model, const std::string& text, bool parse_special, const char* command,
                   const char* what);
// The bytes of one token (peak_token_to_piece).
std::string token_piece(const peak_model* model, int32_t token, bool render_special);

// Throws CommandError, saying what the context needs and what the machine has,
// when a context with `params` needs more than the physical memory (unless
// options.memory_check is off).
void check_context_fits(const peak_model* model, const peak_context_params& params, const GenerationOptions& options);

// Loads the model and its adapters (--lora, --control-vector) and, unless
// `with_context` is false (the caller makes its own, e.g. a chat session, and
// gives it m.adapter_set), a context running them and a sampler.
LoadedModel load_model(const std::string& path, const GenerationOptions& options, bool with_context = true);

// Loads options.draft_model_path (when given) as m's draft model, its context
// sized as the target's (options.context), and checks that it reads m's
// vocabulary. load_model does this.
void load_draft_model(LoadedModel& m, const GenerationOptions& options);
// The speculative decoding options (--lookup, --draft-model, --draft-max,
// --draft-p-min) in generation parameters.
void set_speculative(const GenerationOptions& options, const LoadedModel& m, peak_generate_params& params);
// " | lookup: D drafted, A accepted (P%)" or " | draft: ...", empty without drafts.
std::string acceptance_summary(const GenerationOptions& options, size_t drafted, size_t accepted);

// An encoder model and an embedder on it (peak embed, peak rerank).
struct LoadedEmbedder {
  std::unique_ptr<peak_model, ModelDeleter> model;  // declared first, so freed last
  std::unique_ptr<peak_embedder, EmbedderDeleter> embedder;
};
LoadedEmbedder load_embedder(const std::string& path, const peak_embedder_params& params);

// Texts as the C API takes them, pointers and lengths into strings that must outlive them.
struct TextViews {
  std::vector<const char*> texts;
  std::vector<size_t> lengths;
};
TextViews text_views(const std::vector<std::string>& texts);
