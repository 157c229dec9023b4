// peak tokenize -m MODEL (-p TEXT | -f FILE | --stdin): the token ids of a text,
// printed as llama-tokenize prints them. Only the tokenizer is loaded
// (peak_model_load_vocab), so vocabulary-only GGUF files work too.
//
// Output: one line per token, "%6d -> '<piece>'" (the piece with control
// tokens written out, escaped for a terminal: \n, \xNN for a byte that is not
// valid UTF-8 on its own); with --ids one line "[1, 15043, 3186]"; with
// --show-count a last line "Total number of tokens: N".
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "input_file.h"
#include "text_format.h"

namespace {

struct TokenizeOptions {
  std::string model_path;
  std::string text;
  int n_sources = 0;  // -p, -f and --stdin are exclusive
  bool ids = false;
  bool add_special = true;
  bool parse_special = true;
  bool escape = true;
  bool show_count = false;
};

void print_help() {
  std::printf(
      "usage: peak tokenize [-m MODEL] (-p TEXT | -f FILE | --stdin) [options]\n"
      "  Prints the tokens of a text as llama-tokenize does. Only the tokenizer is read,\n"
      "  so a vocabulary-only GGUF file works as well as a model.\n"
      "  -m, --model FILE          GGUF model or vocabulary (default: the demo model)\n"
      "  -p, --prompt TEXT         the text\n"
      "  -f, --file FILE           read the text from a file ('-': standard input)\n"
      "  --stdin                   read the text from standard input\n"
      "  --ids                     print only the ids, as [1, 2, 3]\n"
      "  --show-count              print the number of tokens last\n"
      "  --no-bos                  do not add BOS (or the other tokens the model adds)\n"
      "  --no-parse-special        take control-token text such as <|im_end|> as plain text\n"
      "  --no-escape               do not turn \\n, \\t, \\xHH ... in the text into characters\n");
}

TokenizeOptions parse(int argc, char** argv, bool* help) {
  TokenizeOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.model_path = args.value(a);
    } else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--prompt")) {
      o.text = args.value(a);
      ++o.n_sources;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      o.text = read_input_file(args.value(a), "text file");
      ++o.n_sources;
    } else if (!std::strcmp(a, "--stdin")) {
      o.text = read_input_file("-", "text");
      ++o.n_sources;
    } else if (!std::strcmp(a, "--ids")) {
      o.ids = true;
    } else if (!std::strcmp(a, "--show-count")) {
      o.show_count = true;
    } else if (!std::strcmp(a, "--no-bos")) {
      o.add_special = false;
    } else if (!std::strcmp(a, "--no-parse-special")) {
      o.parse_special = false;
    } else if (!std::strcmp(a, "--no-escape")) {
      o.escape = false;
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak tokenize --help)");
    }
  }
  if (o.n_sources == 0) throw UsageError("no text given (-p TEXT, -f FILE or --stdin)");
  if (o.n_sources > 1) throw UsageError("give the text once: -p, -f and --stdin exclude each other");
  return o;
}

}  // namespace

int run_tokenize(int argc, char** argv) {
  bool help = false;
  const TokenizeOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  const std::string path = o.model_path.empty() ? demo_model_path() : o.model_path;
  peak_model* loaded = nullptr;
  check_status(peak_model_load_vocab(path.c_str(), &loaded));
  const std::unique_ptr<peak_model, ModelDeleter> model(loaded);

  const std::string text = o.escape ? process_escapes(o.text) : o.text;
  check_spelled(model.get(), text, o.parse_special, "tokenize", "the text");
  const std::vector<int32_t> tokens = tokenize(model.get(), text, o.add_special, o.parse_special);

  if (o.ids) {
    std::string line = "[";
    for (size_t i = 0; i < tokens.size(); ++i) line += (i ? ", " : "") + std::to_string(tokens[i]);
    std::printf("%s]\n", line.c_str());
  } else {
    for (const int32_t t : tokens) {
      const std::string piece = token_piece(model.get(), t, true);
      std::printf("%6d -> '%s'\n", t, escape_for_terminal(piece, piece.size()).c_str());
    }
  }
  if (o.show_count) std::printf("Total number of tokens: %zu\n", tokens.size());
  return 0;
}
