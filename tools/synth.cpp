// peak synth --preset NAME --type T -o FILE: a random-weight model with a real
// model's shapes and metadata, for benchmarks without downloads.
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "output_file.h"
#include "progress_bar.h"

namespace {

void print_help() {
  std::printf(
      "usage: peak synth --preset NAME [--type T] -o FILE [--vocab-from FILE.gguf] [--seed N]\n"
      "  Writes a model with random weights (N(0, 0.02) matrices, unit norms) and the exact\n"
      "  shapes, tensor names and metadata of a real one.\n"
      "  --preset NAME        %s\n"
      "  --type T             as peak quantize (default Q4_0)\n"
      "  -o, --output FILE    the file to write\n"
      "  --vocab-from FILE    copy the tokenizer of a real model (same vocabulary size);\n"
      "                       else a synthetic SentencePiece-style vocabulary\n"
      "  --seed N             random seed (default 1)\n",
      peak_synth_presets());
}

}  // namespace

int run_synth(int argc, char** argv) {
  peak_synth_params sp = peak_synth_default_params();
  std::string preset, type = sp.type, output, vocab;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      print_help();
      return 0;
    } else if (!std::strcmp(a, "--preset")) {
      preset = args.value(a);
    } else if (!std::strcmp(a, "--type")) {
      type = args.value(a);
    } else if (!std::strcmp(a, "-o") || !std::strcmp(a, "--output")) {
      output = args.value(a);
    } else if (!std::strcmp(a, "--vocab-from")) {
      vocab = args.value(a);
    } else if (!std::strcmp(a, "--seed")) {
      sp.seed = static_cast<uint64_t>(args.integer(a, 0, std::numeric_limits<long long>::max()));
    } else {
      throw UsageError(std::string("unknown argument '") + a + "' (see peak synth --help)");
    }
  }
  if (preset.empty()) throw UsageError(std::string("no --preset given (one of ") + peak_synth_presets() + ")");
  if (output.empty()) throw UsageError("no output file given (-o FILE)");
  refuse_inputs(output, {{vocab, "the --vocab-from model"}});
  ProgressBar bar{"writing"};
  sp.preset = preset.c_str();
  sp.type = type.c_str();
  sp.vocab_from = vocab.empty() ? nullptr : vocab.c_str();
  sp.progress = draw_progress;
  sp.progress_user_data = &bar;
  check_status(peak_synth(output.c_str(), &sp));
  std::fprintf(stderr, "wrote %s (%s, %s)\n", output.c_str(), preset.c_str(), type.c_str());
  return 0;
}
