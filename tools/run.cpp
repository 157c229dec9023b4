// peak run: one-shot completion of a prompt, streamed to stdout.
//
// --logits-out FILE writes the logits of every prompt position, for comparing
// engines. Layout (little-endian): "PKLG", u32 version 1, u32 n_tokens,
// u32 n_vocab, i32 token ids [n_tokens], then f32 logits [n_tokens][n_vocab]
// (row i: the logits after reading tokens 0..i).
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "text_file.h"

namespace {

struct RunOptions {
  GenerationOptions gen;
  std::string prompt;
  bool prompt_given = false;
  std::string logits_out;
  bool echo = true;
};

void print_help() {
  std::printf(
      "usage: peak run [-m MODEL] (-p PROMPT | -f FILE) [options]\n"
      "  Continues a prompt and streams the text to stdout (timings go to stderr).\n"
      "  Without -m it runs the bundled demo model (a tiny story model).\n"
      "  -p, --prompt TEXT         the prompt\n"
      "  -f, --file FILE           read the prompt from a file\n"
      "  --no-echo                 do not print the prompt before the completion\n"
      "  --logits-out FILE         write every prompt position's logits (f32; layout in tools/run.cpp)\n"
      "%s",
      generation_options_help());
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
      o.prompt = read_text_file(args.value(a), "prompt file");
      o.prompt_given = true;
    } else if (!std::strcmp(a, "--logits-out")) {
      o.logits_out = args.value(a);
    } else if (!std::strcmp(a, "--no-echo")) {
      o.echo = false;
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak run --help)");
    }
  }
  if (!o.prompt_given) throw UsageError("no prompt given (-p PROMPT or -f FILE)");
  return o;
}

// Stops generating once stdout cannot be written (main reports the error).
int print_text(const char* text, size_t length, void*) {
  return std::fwrite(text, 1, length, stdout) == length && std::fflush(stdout) == 0;
}

// Evaluates the prompt with per-token logits and writes them; the context then
// holds the prompt, so generation continues from there.
void write_prompt_logits(LoadedModel& m, const std::vector<int32_t>& tokens, std::FILE* out,
                         const std::string& path) {
  const size_t n_vocab = static_cast<size_t>(m.info.n_vocab);
  std::vector<float> logits(tokens.size() * n_vocab);
  check_status(peak_context_eval_all_logits(m.context.get(), tokens.data(), tokens.size(), logits.data()));
  for (int32_t t : tokens) check_status(peak_sampler_accept(m.sampler.get(), t));
  const uint32_t header[4] = {0x474c4b50u /* "PKLG" */, 1, static_cast<uint32_t>(tokens.size()),
                              static_cast<uint32_t>(n_vocab)};
  const bool ok = std::fwrite(header, sizeof header, 1, out) == 1 &&
                  std::fwrite(tokens.data(), sizeof(int32_t), tokens.size(), out) == tokens.size() &&
                  std::fwrite(logits.data(), sizeof(float), logits.size(), out) == logits.size();
  if (std::fclose(out) != 0 || !ok) throw CommandError("cannot write '" + path + "'");
}

}  // namespace

int run_run(int argc, char** argv) {
  bool help = false;
  RunOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  // Open the output first: an unwritable path fails before the model loads.
  std::FILE* logits_file = nullptr;
  if (!o.logits_out.empty()) {
    logits_file = std::fopen(o.logits_out.c_str(), "wb");
    if (!logits_file) throw CommandError("cannot write '" + o.logits_out + "': " + std::strerror(errno));
    o.gen.context.logits_all = 1;
  }
  const std::string path = o.gen.model_path.empty() ? demo_model_path() : o.gen.model_path;
  const auto load_start = std::chrono::steady_clock::now();
  LoadedModel m = load_model(path, o.gen);
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = o.gen.n_predict;
  gp.on_text = print_text;
  gp.parse_special = 0;  // the prompt is the user's text: it cannot spell control tokens
  std::string prompt = o.prompt;
  if (logits_file) {
    size_t n = 0;
    peak_tokenize(m.model.get(), prompt.data(), prompt.size(), 1, 0, nullptr, 0, &n);
    std::vector<int32_t> tokens(n);
    check_status(peak_tokenize(m.model.get(), prompt.data(), prompt.size(), 1, 0, tokens.data(), n, &n));
    write_prompt_logits(m, tokens, logits_file, o.logits_out);
    gp.add_special = 0;
    prompt.clear();  // already in the context
  }
  if (o.echo) std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
  peak_generate_result r{};
  r.struct_size = sizeof r;
  check_status(peak_generate(m.context.get(), m.sampler.get(), prompt.data(), prompt.size(), &gp, &r));
  std::printf("\n");
  const double n_prompt = static_cast<double>(r.n_prompt_tokens), n_generated = static_cast<double>(r.n_generated_tokens);
  std::fprintf(stderr, "load: %.3f s | prompt: %zu tokens, %.1f tokens/s | generation: %zu tokens, %.1f tokens/s\n",
               load_seconds, r.n_prompt_tokens, r.prompt_seconds > 0 ? n_prompt / r.prompt_seconds : 0.0, r.n_generated_tokens,
               r.generate_seconds > 0 ? n_generated / r.generate_seconds : 0.0);
  return 0;
}
