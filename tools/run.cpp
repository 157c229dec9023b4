// peak run: one-shot completion of a prompt, streamed to stdout.
//
// --json prints, once done, one document instead: the prompt and completion
// with their token ids, why generation stopped and the timings.
//
// --tools FILE makes the prompt a user message of a one-turn chat in the
// model's own template, answered under the tool options (tool_options.h); with
// --json the document is then the answer as OpenAI's assistant message.
//
// --logits-out FILE writes the logits of every prompt position, for comparing
// engines. Layout (little-endian): "PKLG", u32 version 1, u32 n_tokens,
// u32 n_vocab, i32 token ids [n_tokens], then f32 logits [n_tokens][n_vocab]
// (row i: the logits after reading tokens 0..i).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "chat_slot.h"
#include "model_session.h"
#include "openai_response.h"
#include "output_file.h"
#include "image_prompt.h"
#include "input_file.h"
#include "text_format.h"
#include "tool_options.h"

namespace {

struct RunOptions {
  GenerationOptions gen;
  std::string prompt;
  bool prompt_given = false;
  std::string prompt_path;  // -f FILE
  std::string logits_out;
  bool echo = true;
  bool json = false;
  ToolOptions tools;
  std::string mmproj;               // --mmproj: the model's image encoder
  std::vector<std::string> images;  // --image, in the order of the prompt's markers
};

void print_help() {
  std::printf(
      "usage: peak run [-m MODEL] (-p PROMPT | -f FILE) [options]\n"
      "  Continues a prompt and streams the text to stdout (timings go to stderr).\n"
      "  Without -m it runs the bundled demo model (a tiny story model).\n"
      "  -p, --prompt TEXT         the prompt\n"
      "  -f, --file FILE           read the prompt from a file ('-': standard input)\n"
      "  --no-echo                 do not print the prompt before the completion\n"
      "  --json                    print one JSON document (text, token ids, timings) when done\n"
      "  --logits-out FILE         write every prompt position's logits (f32; layout in tools/run.cpp)\n"
      "  --mmproj FILE             the model's image encoder (a projector file, llama.cpp's mmproj-*.gguf)\n"
      "  --image FILE              a PNG or JPEG in the prompt, at a <__media__> marker (one per image;\n"
      "                            without markers the images come first); repeatable\n"
      "%s"
      "  With --tools the prompt is a user message (not echoed) and the answer's text and calls are\n"
      "  printed; --json prints {\"message\": OpenAI's assistant message (content, reasoning_content,\n"
      "  tool_calls), \"finish_reason\": \"stop\", \"tool_calls\" or \"length\"}. -c is the room for the\n"
      "  prompt with the tools, -n the answer's.\n"
      "%s%s",
      kToolOptionsHelp, kGrammarOptionsHelp, generation_options_help());
}

RunOptions parse(int argc, char** argv, bool* help) {
  RunOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.peek();
    if (parse_generation_option(args, o.gen)) continue;
    args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--prompt")) {
      o.prompt = args.value(a);
      o.prompt_given = true;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      o.prompt_path = args.value(a);
      o.prompt = read_input_file(o.prompt_path, "prompt file");
      o.prompt_given = true;
    } else if (parse_grammar_option(a, args, o.gen)) {
      continue;
    } else if (parse_tool_option(a, args, o.tools)) {
      continue;
    } else if (!std::strcmp(a, "--logits-out")) {
      o.logits_out = args.value(a);
    } else if (!std::strcmp(a, "--no-echo")) {
      o.echo = false;
    } else if (!std::strcmp(a, "--json")) {
      o.json = true;
    } else if (!std::strcmp(a, "--mmproj")) {
      o.mmproj = args.value(a);
    } else if (!std::strcmp(a, "--image")) {
      o.images.push_back(args.value(a));

    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak run --help)");
    }
  }
  if (!o.prompt_given) throw UsageError("no prompt given (-p PROMPT or -f FILE)");
  if (!o.images.empty() && o.mmproj.empty())
    throw UsageError("--image needs the model's image encoder (--mmproj FILE)");
  if (!o.mmproj.empty() && o.images.empty()) throw UsageError("--mmproj is given without an image (--image FILE)");
  if (!o.images.empty() && (o.tools.given() || !o.logits_out.empty() || o.json)) {
    throw UsageError("--image does not go with --tools, --logits-out or --json yet");
  }
  check_tool_options(o.tools);
  if (o.tools.given() && !o.logits_out.empty()) {
    throw UsageError("--logits-out reads a plain prompt's logits: it does not go with --tools");
  }
  if ((o.gen.lookup_ngram > 0 || !o.gen.draft_model_path.empty()) && o.json) {
    throw UsageError(std::string(o.gen.lookup_ngram > 0 ? "--lookup" : "--draft-model") +
                     " does not go with --json, which samples token by token to keep the ids");
  }
  return o;
}

// Streams the completion to stdout, remembering whether it ended a line; stops
// generating once stdout cannot be written (main reports the error).
int print_text(const char* text, size_t length, void* ends_line) {
  if (length > 0) *static_cast<bool*>(ends_line) = text[length - 1] == '\n';
  return std::fwrite(text, 1, length, stdout) == length && std::fflush(stdout) == 0;
}

// The prompt and at least one generated token must fit in the context.
void check_prompt_fits(size_t n_prompt, size_t n_ctx) {
  if (n_prompt == 0) throw UsageError("the prompt is empty (nothing to continue)");
  if (n_prompt + 1 > n_ctx) {
    throw UsageError("the prompt is " + std::to_string(n_prompt) + " tokens and the context (-c) holds " +
                     std::to_string(n_ctx) + ": nothing could be generated (use -c " + std::to_string(n_prompt + 1) +
                     " or more)");
  }
}

std::string json_ids(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double per_second(size_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

// --json: generates as peak_generate does (sample, accept, stop at the end of
// generation, the token limit or a full context), keeping the token ids, and
// prints one document. The prompt is already in the context when
// `prompt_evaluated` (--logits-out evaluated it).
void generate_json(LoadedModel& m, const RunOptions& o, const std::vector<int32_t>& prompt, bool prompt_evaluated,
                   double load_seconds) {
  const auto prompt_start = std::chrono::steady_clock::now();
  if (!prompt_evaluated) {
    check_status(peak_context_eval(m.context.get(), prompt.data(), prompt.size()));
    for (const int32_t t : prompt) check_status(peak_sampler_accept_prompt(m.sampler.get(), t));
  }
  const double prompt_seconds = seconds_since(prompt_start);
  const auto generate_start = std::chrono::steady_clock::now();
  std::vector<int32_t> completion;
  std::string text;
  const char* stop = "max_tokens";
  const size_t n_ctx = peak_context_n_ctx(m.context.get());
  while (completion.size() < o.gen.n_predict) {
    int32_t token = -1;
    check_status(peak_sampler_sample(m.sampler.get(), m.context.get(), &token));
    check_status(peak_sampler_accept(m.sampler.get(), token));
    completion.push_back(token);
    if (peak_token_is_eog(m.model.get(), token)) {
      stop = "eog";
      break;
    }
    text += token_piece(m.model.get(), token, false);
    if (peak_context_n_used(m.context.get()) >= n_ctx) {
      stop = "context_full";
      break;
    }
    check_status(peak_context_eval(m.context.get(), &token, 1));
  }
  const double generate_seconds = seconds_since(generate_start);
  std::printf("{\"prompt\": %s, \"prompt_tokens\": %s, \"completion\": %s, \"completion_tokens\": %s, "
              "\"stop_reason\": \"%s\", \"timings\": {\"load_s\": %s, \"prompt_s\": %s, \"prompt_tokens_per_s\": %s, "
              "\"generation_s\": %s, \"generation_tokens_per_s\": %s}}\n",
              json_string(o.prompt).c_str(), json_ids(prompt).c_str(), json_string(text).c_str(),
              json_ids(completion).c_str(), stop, json_number(load_seconds).c_str(), json_number(prompt_seconds).c_str(),
              json_number(per_second(prompt.size(), prompt_seconds)).c_str(), json_number(generate_seconds).c_str(),
              json_number(per_second(completion.size(), generate_seconds)).c_str());
}

// Evaluates the prompt with per-token logits and writes them; the context then
// holds the prompt, so generation continues from there.
void write_prompt_logits(LoadedModel& m, const std::vector<int32_t>& tokens, OutputFile& out) {
  const size_t n_vocab = static_cast<size_t>(m.info.n_vocab);
  std::vector<float> logits(tokens.size() * n_vocab);
  check_status(peak_context_eval_all_logits(m.context.get(), tokens.data(), tokens.size(), logits.data()));
  for (int32_t t : tokens) check_status(peak_sampler_accept_prompt(m.sampler.get(), t));
  const uint32_t header[4] = {0x474c4b50u /* "PKLG" */, 1, static_cast<uint32_t>(tokens.size()),
                              static_cast<uint32_t>(n_vocab)};
  out.write(header, sizeof header);
  out.write(tokens.data(), sizeof(int32_t) * tokens.size());
  out.write(logits.data(), sizeof(float) * logits.size());
  out.commit();
}

// --tools: the turn's output as it is generated (the answer's text and each
// call on a line of its own), or kept for the --json document.
class ToolTurn {
 public:
  explicit ToolTurn(bool json) : json_(json) {}

  void text(const char* t, size_t n, peak_text_kind kind) {
    if (kind == PEAK_TEXT_REASONING) {
      reasoning_.append(t, n);
      return;
    }
    if (json_ || n == 0) return;
    line_open_ = t[n - 1] != '\n';
    std::fwrite(t, 1, n, stdout);
    std::fflush(stdout);
  }

  void call(const peak_tool_call& c) {
    if (json_) return;
    std::printf("%s%s\n", line_open_ ? "\n" : "", tool_call_line(c).c_str());
    std::fflush(stdout);
    line_open_ = false;
  }

  bool line_open() const { return line_open_; }
  const std::string& reasoning() const { return reasoning_; }

 private:
  bool json_;
  bool line_open_ = false;
  std::string reasoning_;
};

// The session's last message (the answer's text without its calls).
std::string last_message_text(const peak_session* session) {
  peak_session_message message{};
  message.struct_size = sizeof message;
  check_status(peak_session_get_message(session, peak_session_n_messages(session) - 1, &message));
  return std::string(message.text, message.length);
}

void run_tool_turn(const std::string& path, RunOptions& o) {
  read_tools_file(o.tools);
  const auto load_start = std::chrono::steady_clock::now();
  LoadedModel m = load_model(path, o.gen, /*with_context=*/false);
  const double load_seconds = seconds_since(load_start);
  check_spelled(m.model.get(), o.prompt, false, "run", "the prompt");
  peak_session_params p = peak_session_default_params();
  p.mode = PEAK_MEMORY_NONE;  // one turn: nothing to drop or summarize
  p.recent_max = o.gen.context.n_ctx;
  p.headroom = std::max<size_t>(24, std::min(o.gen.n_predict, o.gen.context.n_ctx));
  p.type_k = o.gen.context.type_k;
  p.type_v = o.gen.context.type_v;
  p.n_threads = o.gen.context.n_threads;
  p.n_batch = o.gen.context.n_batch;
  p.max_logit_rows = o.gen.context.max_logit_rows;
  p.sampler = sampler_params(o.gen);
  set_session_tools(o.tools, p);
  std::unique_ptr<peak_session, SessionDeleter> session(create_tool_session(m.model.get(), p, o.tools));
  if (!m.adapter_uses.empty()) check_status(peak_session_set_adapters(session.get(), &m.adapter_set));
  ToolTurn turn(o.json);
  check_status(peak_session_set_tool_call_callback(
      session.get(), [](const peak_tool_call* c, size_t, void* t) { static_cast<ToolTurn*>(t)->call(*c); }, &turn));
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = o.gen.n_predict;
  set_speculative(o.gen, m, gp);
  gp.user_data = &turn;
  gp.on_kinded_text = [](const char* t, size_t n, peak_text_kind kind, void* self) {
    static_cast<ToolTurn*>(self)->text(t, n, kind);
    return 1;
  };
  peak_generate_result r{};
  r.struct_size = sizeof r;
  check_status(peak_session_chat(session.get(), o.prompt.data(), o.prompt.size(), &gp, &r));
  // As peak serve answers: OpenAI's message and finish_reason.
  const std::vector<peak_server::ChatToolCall> calls = peak_server::session_tool_calls(session.get());
  const char* finish = calls.empty() ? peak_server::finish_reason(r.stop_reason, false) : "tool_calls";
  if (o.json) {
    peak_session_stats stats{};
    stats.struct_size = sizeof stats;
    check_status(peak_session_get_stats(session.get(), &stats));
    // The prompt the model read: the prefix (system part, with the tools) and the turn.
    std::printf(
        "{\"message\": %s, \"finish_reason\": \"%s\", \"usage\": {\"prompt_tokens\": %zu, "
        "\"completion_tokens\": %zu}}\n",
        peak::json::write(peak_server::assistant_message(last_message_text(session.get()), turn.reasoning(), calls))
            .c_str(),
        finish, stats.prefix_tokens + r.n_prompt_tokens, r.n_generated_tokens);
  } else if (turn.line_open()) {
    std::printf("\n");
  }
  if (std::fflush(stdout) != 0)
    throw CommandError(std::string("cannot write to standard output: ") + std::strerror(errno));
  std::fprintf(stderr, "load: %.3f s | prompt: %zu tokens, %.1f tokens/s | generation: %zu tokens, %.1f tokens/s\n",
               load_seconds, r.n_prompt_tokens, per_second(r.n_prompt_tokens, r.prompt_seconds), r.n_generated_tokens,
               per_second(r.n_generated_tokens, r.generate_seconds));
}

}  // namespace

int run_run(int argc, char** argv) {
  bool help = false;
  RunOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  if (o.tools.given()) {
    run_tool_turn(o.gen.model_path.empty() ? demo_model_path() : o.gen.model_path, o);
    return 0;
  }
  const std::string path = o.gen.model_path.empty() ? demo_model_path() : o.gen.model_path;
  // Open the output first: an unwritable path fails before the model loads.
  std::unique_ptr<OutputFile> logits_file;
  if (!o.logits_out.empty()) {
    logits_file = std::make_unique<OutputFile>(
        o.logits_out, std::vector<OutputFile::Input>{{path, "the model"}, {o.prompt_path, "the prompt file"}});
    o.gen.context.logits_all = 1;
  }
  const auto load_start = std::chrono::steady_clock::now();
  LoadedModel m = load_model(path, o.gen);
  const double load_seconds = seconds_since(load_start);

  // Tokenized as peak_generate tokenizes the prompt below (BOS as the model
  // asks; the user's text cannot spell control tokens).
  check_spelled(m.model.get(), o.prompt, false, "run", "the prompt");
  const std::vector<int32_t> tokens = tokenize(m.model.get(), o.prompt, true, false);
  check_prompt_fits(tokens.size(), peak_context_n_ctx(m.context.get()));
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = o.gen.n_predict;
  gp.parse_special = 0;  // the prompt is the user's text: it cannot spell control tokens
  set_speculative(o.gen, m, gp);
  std::string prompt = o.prompt;
  ImagePromptTimes image_times;
  if (!o.images.empty()) {
    prompt = eval_prompt_with_images(m, o.prompt, o.mmproj, o.images, o.gen.context.n_threads, &image_times);
    gp.add_special = 0;  // BOS went first
  }
  if (logits_file) {
    write_prompt_logits(m, tokens, *logits_file);
    gp.add_special = 0;
    prompt.clear();  // already in the context
  }
  if (o.json) {
    generate_json(m, o, tokens, logits_file != nullptr, load_seconds);
    return 0;
  }
  bool ends_line = o.prompt.empty() || o.prompt.back() == '\n';
  gp.on_text = print_text;
  gp.user_data = &ends_line;
  if (o.echo) {
    std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
  } else {
    ends_line = true;
  }
  peak_generate_result r{};
  r.struct_size = sizeof r;
  check_status(peak_generate(m.context.get(), m.sampler.get(), prompt.data(), prompt.size(), &gp, &r));
  // The completion ends its line before the timings, also when stdout and
  // stderr are one file.
  if (!ends_line) std::printf("\n");
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_error = errno;
  if (r.stop_reason == PEAK_STOP_CONTEXT_FULL) {
    std::fprintf(stderr, "stopped: the context of %zu tokens is full (-c)\n", peak_context_n_ctx(m.context.get()));
  }
  if (!o.images.empty()) {
    std::fprintf(stderr, "images: %zu, %zu tokens, encoded in %.3f s, evaluated with the text before them in %.3f s\n",
                 o.images.size(), image_times.image_tokens, image_times.encode_seconds, image_times.eval_seconds);
  }
  std::fprintf(stderr, "load: %.3f s | prompt: %zu tokens, %.1f tokens/s | generation: %zu tokens, %.1f tokens/s",
               load_seconds, r.n_prompt_tokens, per_second(r.n_prompt_tokens, r.prompt_seconds), r.n_generated_tokens,
               per_second(r.n_generated_tokens, r.generate_seconds));
  std::fprintf(stderr, "%s\n", acceptance_summary(o.gen, r.n_drafted_tokens, r.n_accepted_tokens).c_str());
  if (!flushed) throw CommandError(std::string("cannot write to standard output: ") + std::strerror(flush_error));
  return 0;
}
