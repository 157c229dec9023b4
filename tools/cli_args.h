// Command-line parsing shared by the sub-commands: a cursor over argv that
// reads typed option values with range checks, and the model / context /
// sampling options every generating command accepts (named as in llama.cpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "peak/peak.h"

// A usage mistake: the command prints the message and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ArgCursor {
 public:
  ArgCursor(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool done() const { return index_ >= argc_; }
  const char* peek() const { return argv_[index_]; }
  const char* next() { return argv_[index_++]; }
  // The value after option `name`; UsageError when it is missing.
  const char* value(const char* name);
  long long integer(const char* name, long long min, long long max);
  double real(const char* name, double min, double max);

 private:
  int argc_;
  char** argv_;
  int index_ = 1;  // argv[0] is the sub-command's name
};

// --lora FILE[:SCALE] / --control-vector FILE[:STRENGTH], in the order given.
struct AdapterOption {
  std::string path;
  float scale = 1.0f;
};

struct GenerationOptions {
  std::string model_path;  // empty: the command's default
  peak_model_params model = peak_model_default_params();
  peak_context_params context = peak_context_default_params();
  peak_sampler_params sampler = peak_sampler_default_params();
  bool seed_given = false;  // -s/--seed set sampler.seed (else it is the default)
  size_t n_predict = 256;  // tokens per answer; SIZE_MAX: no limit
  bool memory_check = true;  // refuse a context larger than physical memory (--no-memory-check)
  std::vector<AdapterOption> adapters;  // LoRA adapters and control vectors (the file says which)
  size_t control_first_layer = 0;       // --control-vector-layers A-B
  size_t control_last_layer = SIZE_MAX;
  // --grammar / --grammar-file: GBNF for sampler.grammar, from --grammar-root;
  // --json-schema / --json-schema-file: a JSON Schema for sampler.json_schema
  // (sampler_params points them here).
  std::string grammar;
  bool grammar_given = false;
  std::string grammar_root;  // empty: "root"
  std::string json_schema;
  bool json_schema_given = false;
  // Speculative decoding: --lookup N by prompt lookup, or --draft-model FILE
  // (peak_generate_params.lookup_ngram, draft_model), drafting at most
  // --draft-max N tokens (and, for a draft model, while its probability is at
  // least --draft-p-min P); the context then hands out draft_max + 1 rows of
  // logits (max_logit_rows).
  int lookup_ngram = 0;
  std::string draft_model_path;
  int draft_max = 4;
  float draft_p_min = 0.75f;
};

// options.sampler with its grammar or JSON Schema, pointing into `options`.
peak_sampler_params sampler_params(const GenerationOptions& options);

// Consumes one model/context/sampling option at the cursor. Returns false
// (consuming nothing) when the option is not one of them.
bool parse_generation_option(ArgCursor& args, GenerationOptions& options);
// Likewise for the model and context options alone (-m, -c, -b, -t, cache
// types, mapping and repacking): for commands that do not sample.
bool parse_model_option(ArgCursor& args, GenerationOptions& options);
// --lora, --control-vector or --control-vector-layers, `option` being the one
// just read: reads its value. Returns false for any other option.
bool parse_adapter_option(const char* option, ArgCursor& args, GenerationOptions& options);

// --grammar TEXT, --grammar-file FILE, --grammar-root NAME, -j/--json-schema
// SCHEMA or -jf/--json-schema-file FILE (llama.cpp's names), `option` being the
// one just read: reads its value into options. UsageError for a grammar and a
// schema both. Returns false for any other option.
bool parse_grammar_option(const char* option, ArgCursor& args, GenerationOptions& options);
extern const char* const kGrammarOptionsHelp;

// Help text for the model, context and sampling options, with the -ctk/-ctv
// default the command uses (the second form: a context's own, f16).
std::string generation_options_help(const char* kv_cache_default);
const char* generation_options_help();
// Help text for the model and context options without -c, which a command that
// gives the context size another meaning describes itself, and for the
// sampling options alone, with what -s/--seed means to the command.
std::string model_options_help(const char* kv_cache_default = "f16");
std::string sampling_options_help(const char* seed_help = "random seed (default 0)");

// A number as a message shows it: 0.5, 1, 100, 1e-06 (no "0.000000").
std::string format_number(double v);

// Consumes one long-conversation (SSSKV-lite) option at the cursor: --mode,
// --recent-max, --summary-max, --trigger-discard, --headroom, --rebuild,
// --summary-wait, --summary-ctx. Returns false when it is not one of them.
bool parse_session_option(ArgCursor& args, peak_session_params& session);
const char* session_options_help();

// The options of the commands that hold chat sessions (peak chat, peak serve):
// the model, context, sampling and long-conversation options, -c as the
// session's size, --chat-template and --think.
struct ChatSessionOptions {
  ChatSessionOptions() { gen.context.type_k = gen.context.type_v = PEAK_TYPE_Q8_0; }
  GenerationOptions gen;
  peak_session_params session = peak_session_default_params();
  bool context_given = false;  // -c: the recent messages get what it leaves after the summary and headroom
  std::string template_name;   // empty: the model's; "raw": no template
  bool think = false;          // --think on: let a thinking model reason first
};

// Consumes one of those options at the cursor; false when it is not one.
bool parse_chat_session_option(ArgCursor& args, ChatSessionOptions& options);
// The session parameters the options give (chat_template points into them;
// no system prompt). UsageError when -c leaves under 32 tokens for the
// recent messages.
peak_session_params chat_session_params(const ChatSessionOptions& options);

// "f16" -> PEAK_TYPE_F16 (f32, f16, q8_0, q4_0); UsageError otherwise.
peak_type parse_cache_type(const char* option, const char* text);

// The demo model shipped with peak (tests/data/stories260K.gguf): PEAK_DEMO_MODEL
// from the environment, else next to an installed binary, else in the source tree.
std::string demo_model_path();
