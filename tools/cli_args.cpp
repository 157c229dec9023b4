#include "cli_args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include <unistd.h>

#include "input_file.h"

const char* ArgCursor::value(const char* name) {
  if (done()) throw UsageError(std::string("option ") + name + " needs a value");
  return next();
}

long long ArgCursor::integer(const char* name, long long min, long long max) {
  const char* text = value(name);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    throw UsageError(std::string("option ") + name + " needs an integer, not '" + text + "'");
  }
  if (v < min || v > max) {
    throw UsageError(std::string("option ") + name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", not " + text);
  }
  return v;
}

double ArgCursor::real(const char* name, double min, double max) {
  const char* text = value(name);
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= min && v <= max)) {
    throw UsageError(std::string("option ") + name + " needs a number between " + format_number(min) + " and " +
                     format_number(max) + ", not '" + text + "'");
  }
  return v;
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

peak_type parse_cache_type(const char* option, const char* text) {
  const std::string t = text;
  if (t == "f32") return PEAK_TYPE_F32;
  if (t == "f16") return PEAK_TYPE_F16;
  if (t == "q8_0") return PEAK_TYPE_Q8_0;
  if (t == "q4_0") return PEAK_TYPE_Q4_0;
  throw UsageError(std::string("option ") + option + ": unknown cache type '" + text + "' (f32, f16, q8_0, q4_0)");
}

namespace {

bool is(const char* arg, const char* a, const char* b = nullptr) {
  return std::strcmp(arg, a) == 0 || (b && std::strcmp(arg, b) == 0);
}

// "FILE[:SCALE]": a trailing ":number" is the scale, anything else is the path.
AdapterOption parse_adapter(const char* text) {
  AdapterOption a{text, 1.0f};
  const char* colon = std::strrchr(text, ':');
  if (colon && colon != text) {
    char* end = nullptr;
    const float v = std::strtof(colon + 1, &end);
    if (end != colon + 1 && *end == '\0') {
      a.path.assign(text, static_cast<size_t>(colon - text));
      a.scale = v;
    }
  }
  return a;
}

// "A-B" -> layers A and B (0-based, inclusive).
void parse_layer_range(const char* option, const char* text, GenerationOptions& o) {
  unsigned long long first = 0, last = 0;
  int consumed = 0;
  if (std::sscanf(text, "%llu-%llu%n", &first, &last, &consumed) != 2 || text[consumed] != '\0' || first > last ||
      text[0] == '-' || text[0] == '+') {
    throw UsageError(std::string("option ") + option + " needs a layer range A-B with A <= B, not '" + text + "'");
  }
  o.control_first_layer = static_cast<size_t>(first);
  o.control_last_layer = static_cast<size_t>(last);
}

}  // namespace

bool parse_adapter_option(const char* option, ArgCursor& args, GenerationOptions& o) {
  if (is(option, "--lora", "--control-vector")) {
    o.adapters.push_back(parse_adapter(args.value(option)));
    if (!std::isfinite(o.adapters.back().scale)) {
      throw UsageError(std::string("option ") + option + ": the scale must be finite");
    }
  } else if (is(option, "--control-vector-layers")) {
    parse_layer_range(option, args.value(option), o);
  } else {
    return false;
  }
  return true;
}

bool parse_grammar_option(const char* option, ArgCursor& args, GenerationOptions& o) {
  if (is(option, "--grammar")) {
    o.grammar = args.value(option);
    o.grammar_given = true;
  } else if (is(option, "--grammar-file")) {
    o.grammar = read_input_file(args.value(option), "grammar file");
    o.grammar_given = true;
  } else if (is(option, "--grammar-root")) {
    o.grammar_root = args.value(option);
  } else if (is(option, "-j", "--json-schema")) {
    o.json_schema = args.value(option);
    o.json_schema_given = true;
  } else if (is(option, "-jf", "--json-schema-file")) {
    o.json_schema = read_input_file(args.value(option), "JSON Schema file");
    o.json_schema_given = true;
  } else {
    return false;
  }
  if (o.json_schema_given && (o.grammar_given || !o.grammar_root.empty())) {
    throw UsageError(std::string(o.grammar_given ? "--grammar" : "--grammar-root") +
                     " and --json-schema do not go together: give a grammar or a JSON Schema");
  }
  return true;
}

const char* const kGrammarOptionsHelp =
    "  --grammar GBNF            only text of this grammar (llama.cpp's GBNF)\n"
    "  --grammar-file FILE       the same from a file (e.g. tools/grammars/json.gbnf)\n"
    "  --grammar-root NAME       the grammar's start rule (default root)\n"
    "  -j, --json-schema SCHEMA  only JSON that satisfies this JSON Schema ('{}': any JSON value,\n"
    "                            '{\"type\":\"object\"}': any object, OpenAI's json_object)\n"
    "  -jf, --json-schema-file FILE  the same from a file\n";

peak_sampler_params sampler_params(const GenerationOptions& o) {
  peak_sampler_params p = o.sampler;
  if (o.grammar_given) p.grammar = o.grammar.c_str();
  if (!o.grammar_root.empty()) p.grammar_root = o.grammar_root.c_str();
  if (o.json_schema_given) p.json_schema = o.json_schema.c_str();
  return p;
}

bool parse_model_option(ArgCursor& args, GenerationOptions& o) {
  const char* a = args.peek();
  if (is(a, "--lora", "--control-vector") || is(a, "--control-vector-layers")) {
    args.next();
    parse_adapter_option(a, args, o);
  } else if (is(a, "-m", "--model")) {
    args.next();
    o.model_path = args.value(a);
  } else if (is(a, "-c", "--ctx-size")) {
    args.next();
    o.context.n_ctx = static_cast<size_t>(args.integer(a, 1, 1 << 24));
  } else if (is(a, "-b", "--batch-size")) {
    args.next();
    o.context.n_batch = static_cast<size_t>(args.integer(a, 1, 1 << 16));
  } else if (is(a, "-t", "--threads")) {
    args.next();
    o.context.n_threads = static_cast<size_t>(args.integer(a, 1, 64));
  } else if (is(a, "-ctk", "--cache-type-k")) {
    args.next();
    o.context.type_k = parse_cache_type(a, args.value(a));
  } else if (is(a, "-ctv", "--cache-type-v")) {
    args.next();
    o.context.type_v = parse_cache_type(a, args.value(a));
  } else if (is(a, "--no-mmap")) {
    args.next();
    o.model.use_mmap = 0;
  } else if (is(a, "--mlock")) {
    args.next();
    o.model.use_mlock = 1;
  } else if (is(a, "--no-repack")) {
    args.next();
    o.model.repack_weights = PEAK_REPACK_NONE;
  } else if (is(a, "--repack-at-load")) {
    args.next();
    o.model.repack_weights = PEAK_REPACK_AT_LOAD;
  } else if (is(a, "--check-tensors")) {
    args.next();
    o.model.check_tensors = 1;
  } else if (is(a, "--no-memory-check")) {
    args.next();
    o.memory_check = false;
  } else {
    return false;
  }
  return true;
}

bool parse_sampling_option(ArgCursor& args, GenerationOptions& o) {
  const char* a = args.peek();
  constexpr long long kMaxInt = std::numeric_limits<int32_t>::max();
  if (is(a, "-n", "--n-predict")) {
    args.next();
    const long long n = args.integer(a, -1, kMaxInt);
    o.n_predict = n < 0 ? SIZE_MAX : static_cast<size_t>(n);
  } else if (is(a, "--temp")) {
    args.next();
    o.sampler.temperature = static_cast<float>(args.real(a, 0.0, 100.0));
  } else if (is(a, "--top-k")) {
    args.next();
    o.sampler.top_k = static_cast<size_t>(args.integer(a, 0, kMaxInt));
  } else if (is(a, "--top-p")) {
    args.next();
    o.sampler.top_p = static_cast<float>(args.real(a, 1e-6, 1.0));
  } else if (is(a, "--min-p")) {
    args.next();
    o.sampler.min_p = static_cast<float>(args.real(a, 0.0, 1.0));
  } else if (is(a, "--repeat-penalty")) {
    args.next();
    o.sampler.repeat_penalty = static_cast<float>(args.real(a, 1e-3, 100.0));
  } else if (is(a, "--repeat-last-n")) {
    args.next();
    o.sampler.penalty_last_n = static_cast<size_t>(args.integer(a, 0, kMaxInt));
  } else if (is(a, "--frequency-penalty")) {
    args.next();
    o.sampler.frequency_penalty = static_cast<float>(args.real(a, -10.0, 10.0));
  } else if (is(a, "--presence-penalty")) {
    args.next();
    o.sampler.presence_penalty = static_cast<float>(args.real(a, -10.0, 10.0));
  } else if (is(a, "-s", "--seed")) {
    args.next();
    o.sampler.seed = static_cast<uint64_t>(args.integer(a, 0, std::numeric_limits<long long>::max()));
    o.seed_given = true;
  } else {
    return false;
  }
  return true;
}

bool parse_lookup_option(ArgCursor& args, GenerationOptions& o) {
  const char* a = args.peek();
  if (is(a, "--lookup")) {
    args.next();
    o.lookup_ngram = static_cast<int>(args.integer(a, 0, 64));
  } else if (is(a, "-md", "--draft-model") || is(a, "--model-draft")) {
    args.next();
    o.draft_model_path = args.value(a);
  } else if (is(a, "--draft-max", "--draft")) {
    args.next();
    o.draft_max = static_cast<int>(args.integer(a, 1, 64));
  } else if (is(a, "--draft-p-min")) {
    args.next();
    o.draft_p_min = static_cast<float>(args.real(a, 0.0, 1.0));
  } else {
    return false;
  }
  if (o.lookup_ngram > 0 && !o.draft_model_path.empty()) {
    throw UsageError("--lookup and --draft-model both draft: use one of them");
  }
  // One pass verifies a token and its draft: a row of logits for each.
  const bool drafts = o.lookup_ngram > 0 || !o.draft_model_path.empty();
  o.context.max_logit_rows = drafts ? static_cast<size_t>(o.draft_max) + 1 : 1;
  return true;
}

bool parse_generation_option(ArgCursor& args, GenerationOptions& o) {
  return parse_model_option(args, o) || parse_sampling_option(args, o) || parse_lookup_option(args, o);
}

namespace {

const char kModelHelpHead[] =
    "model and context:\n"
    "  -m, --model FILE          GGUF model\n";
const char kContextSizeHelp[] = "  -c, --ctx-size N          context size in tokens (default 4096)\n";
std::string model_help_tail(const char* kv_cache_default) {
  return std::string(
             "  -b, --batch-size N        prompt tokens per forward pass (default 512)\n"
             "  -t, --threads N           threads (default: the fast cores this process may use)\n"
             "  -ctk, --cache-type-k T    K cache type: f32, f16, q8_0, q4_0 (default ") +
         kv_cache_default +
         ")\n"
         "  -ctv, --cache-type-v T    V cache type, likewise\n"
         "  --no-mmap                 read the model into memory instead of mapping it\n"
         "  --mlock                   keep the model in RAM\n"
         "  --no-repack               keep weights in the file's layout (slower Q4_0, and Q8_0 on arm64)\n"
         "  --repack-at-load          repack them before the first prompt, not in the background\n"
         "  --check-tensors           refuse the model at the first NaN or Inf weight, naming the tensor\n"
         "  --no-memory-check         create a context even when it needs more than the physical memory\n"
         "  --lora FILE[:SCALE]       apply a LoRA adapter (GGUF) at run time, times SCALE (default 1); repeatable\n"
         "  --control-vector FILE[:STRENGTH]  add a control vector (GGUF) to the residual stream; repeatable\n"
         "  --control-vector-layers A-B  layers the control vectors act after (default: all)\n";
}
const char kSamplingHelp[] =
    "sampling:\n"
    "  -n, --n-predict N         tokens to generate (-1: until the end of text; default 256)\n"
    "  --temp T                  temperature (default 0.8; 0 = greedy)\n"
    "  --top-k N                 (default 40; 0 = off)\n"
    "  --top-p P                 (default 0.95; 1 = off)\n"
    "  --min-p P                 (default 0.05; 0 = off)\n"
    "  --repeat-penalty X        (default 1.0 = off)\n"
    "  --repeat-last-n N         tokens the penalties look back over (default 64)\n"
    "  --frequency-penalty X, --presence-penalty X   (default 0 = off)\n"
    "  -s, --seed N              ";  // then the command's meaning of it
const char kLookupHelp[] =
    "speculative decoding (one pass verifies a token and the tokens drafted after it; the acceptance\n"
    "is reported):\n"
    "  --lookup N                by prompt lookup: after each token, the longest n-gram of N down to 2\n"
    "                            tokens ending the text that occurred before proposes what followed it.\n"
    "                            The same text as without, faster where it repeats its input\n"
    "                            (default 0: off)\n"
    "  -md, --draft-model FILE   by a smaller model of the same vocabulary (GGUF), with a context as\n"
    "                            large as the model's. Greedy, the same text as without; sampled, the\n"
    "                            same distribution (speculative sampling)\n"
    "  --draft-max N             the most tokens drafted after a token (default 4)\n"
    "  --draft-p-min P           the draft model drafts while its probability of its choice is at\n"
    "                            least P (default 0.75)\n";

}  // namespace

std::string generation_options_help(const char* kv_cache_default) {
  return kModelHelpHead + std::string(kContextSizeHelp) + model_help_tail(kv_cache_default) + sampling_options_help() +
         kLookupHelp;
}

const char* generation_options_help() {
  static const std::string help = generation_options_help("f16");
  return help.c_str();
}

std::string model_options_help(const char* kv_cache_default) {
  return kModelHelpHead + model_help_tail(kv_cache_default);
}

std::string sampling_options_help(const char* seed_help) { return kSamplingHelp + std::string(seed_help) + "\n"; }

std::string demo_model_path() {
  if (const char* env = std::getenv("PEAK_DEMO_MODEL")) return env;
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    const std::string installed = dir + "/../share/peak/stories260K.gguf";
    if (std::ifstream(installed).good()) return installed;
  }
  return PEAK_SOURCE_DEMO_MODEL;
}

bool parse_session_option(ArgCursor& args, peak_session_params& p) {
  const char* a = args.peek();
  if (is(a, "--mode")) {
    args.next();
    const std::string m = args.value(a);
    if (m == "ssskv") p.mode = PEAK_MEMORY_SSSKV;
    else if (m == "window") p.mode = PEAK_MEMORY_WINDOW;
    else if (m == "none") p.mode = PEAK_MEMORY_NONE;
    else throw UsageError("option --mode: unknown mode '" + m + "' (ssskv, window, none)");
  } else if (is(a, "--recent-max")) {
    args.next();
    p.recent_max = static_cast<size_t>(args.integer(a, 32, 1 << 24));
  } else if (is(a, "--summary-max")) {
    args.next();
    p.summary_max = static_cast<size_t>(args.integer(a, 16, 1 << 20));
  } else if (is(a, "--trigger-discard")) {
    args.next();
    p.trigger_discard = static_cast<size_t>(args.integer(a, 1, 1 << 24));
  } else if (is(a, "--headroom")) {
    args.next();
    p.headroom = static_cast<size_t>(args.integer(a, 24, 1 << 20));
  } else if (is(a, "--rebuild")) {
    args.next();
    const std::string r = args.value(a);
    if (r == "background") p.rebuild = PEAK_REBUILD_BACKGROUND;
    else if (r == "shift") p.rebuild = PEAK_REBUILD_SHIFT;
    else if (r == "reprefill") p.rebuild = PEAK_REBUILD_REPREFILL;
    else throw UsageError("option --rebuild: unknown strategy '" + r + "' (background, shift, reprefill)");
  } else if (is(a, "--summary-wait")) {
    args.next();
    p.wait_for_summary = 1;
  } else if (is(a, "--verify-kv")) {
    args.next();
    p.verify_kv_cells = static_cast<size_t>(args.integer(a, 0, 1 << 24));
  } else if (is(a, "--summary-ctx")) {
    args.next();
    p.summary_n_ctx = static_cast<size_t>(args.integer(a, 64, 1 << 20));
    // A summary is written in at most a quarter of its context.
    p.summary_max_new_tokens = std::min(p.summary_max_new_tokens, p.summary_n_ctx / 4);
  } else {
    return false;
  }
  return true;
}

bool parse_chat_session_option(ArgCursor& args, ChatSessionOptions& o) {
  const char* a = args.peek();
  const bool is_ctx = !std::strcmp(a, "-c") || !std::strcmp(a, "--ctx-size");
  if (parse_generation_option(args, o.gen)) {
    o.context_given = o.context_given || is_ctx;
    return true;
  }
  if (parse_session_option(args, o.session)) return true;
  if (!std::strcmp(a, "--chat-template")) {
    args.next();
    o.template_name = args.value(a);
  } else if (!std::strcmp(a, "--think")) {
    args.next();
    const std::string v = args.value(a);
    if (v != "on" && v != "off") throw UsageError("--think needs on or off, not '" + v + "'");
    o.think = v == "on";
  } else {
    return false;
  }
  return true;
}

peak_session_params chat_session_params(const ChatSessionOptions& o) {
  peak_session_params p = o.session;
  p.chat_template = o.template_name.empty() ? nullptr : o.template_name.c_str();
  p.enable_thinking = o.think ? 1 : 0;
  p.type_k = o.gen.context.type_k;
  p.type_v = o.gen.context.type_v;
  p.n_threads = o.gen.context.n_threads;
  p.n_batch = o.gen.context.n_batch;
  p.max_logit_rows = o.gen.context.max_logit_rows;
  p.sampler = sampler_params(o.gen);
  if (o.context_given) {
    const long rest = static_cast<long>(o.gen.context.n_ctx) - static_cast<long>(p.summary_max) - static_cast<long>(p.headroom);
    if (rest < 32) throw UsageError("-c is too small for the summary and headroom (see --help)");
    p.recent_max = static_cast<size_t>(rest);
  }
  return p;
}

const char* session_options_help() {
  return "long conversations (SSSKV-lite: Prefix + Summary + Recent in a fixed KV cache):\n"
         "  --mode M                  ssskv (default), window (sliding window only) or none (grow, then stop)\n"
         "  --recent-max N            tokens of recent messages kept (default 4096)\n"
         "  --summary-max N           tokens of the rolling summary (default 256)\n"
         "  --trigger-discard N       dropped tokens that trigger a new summary (default 2048)\n"
         "  --headroom N              room for one answer, its length limit (default 512)\n"
         "  --rebuild S               background (default: prefill the new cache on the summary worker,\n"
         "                            a second main cache meanwhile), shift (re-rotate kept keys) or reprefill\n"
         "  --summary-wait            a message sent while a summary is written (or rebuilt) waits for it\n"
         "  --summary-ctx N           the summary context's size (default 2048)\n"
         "  --verify-kv N             a restored session's first N KV cells are prefilled again and compared;\n"
         "                            cells that differ are not used: the conversation is prefilled (default 0)\n";
}
