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

struct LoadedModel {
  std::unique_ptr<peak_model, ModelDeleter> model;
  std::unique_ptr<peak_context, ContextDeleter> context;
  std::unique_ptr<peak_sampler, SamplerDeleter> sampler;
  peak_model_info info{};
};

// The tokens of `text` (peak_tokenize: add_special adds BOS/EOS as the model
// asks, parse_special reads control tokens written in the text).
std::vector<int32_t> tokenize(const peak_model* model, const std::string& text, bool add_special, bool parse_special);
// The bytes of one token (peak_token_to_piece).
std::string token_piece(const peak_model* model, int32_t token, bool render_special);

// Throws CommandError, saying what the context needs and what the machine has,
// when a context with `params` needs more than the physical memory (unless
// options.memory_check is off).
void check_context_fits(const peak_model* model, const peak_context_params& params, const GenerationOptions& options);

// Loads the model and, unless `with_context` is false (the caller makes its own,
// e.g. a chat session), a context and a sampler from the options.
LoadedModel load_model(const std::string& path, const GenerationOptions& options, bool with_context = true);
