// peak grammar check: the verdict of a GBNF grammar or a JSON Schema on texts
// (peak_grammar_check), one line per text: complete, prefix or rejected.
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

struct CheckOptions {
  GenerationOptions grammar;  // its grammar, grammar_root and json_schema only
  std::vector<std::string> texts;
  std::string texts_file;
  bool escapes = false;
};

void print_help() {
  std::printf(
      "usage: peak grammar check (--grammar-file FILE | --json-schema-file FILE) [-e] (-f FILE | TEXT...)\n"
      "  Prints one line per text: complete (the text is a whole string of the grammar),\n"
      "  prefix (it is not, but can be continued to one) or rejected (no continuation makes it\n"
      "  one). The grammars are those peak run and peak chat sample under with the same options.\n"
      "%s"
      "  -f, --file FILE           the texts, one per line ('-': standard input); a line's text is\n"
      "                            what precedes its newline (a \\r before it is part of it)\n"
      "  -e, --escape              read escapes in the texts as llama.cpp's tools do: \\n \\r \\t \\'\n"
      "                            \\\" \\\\ \\xHH (a text with a newline, or any byte, on one line)\n"
      "  --                        what follows is texts, also those starting with '-'\n"
      "  Exit status: 0 once every text is judged (whatever the verdicts), 1 when a file cannot\n"
      "  be read or the grammar or schema is refused (the message names its line and column, or\n"
      "  the subschema), 2 for a usage error.\n",
      kGrammarOptionsHelp);
}

bool is(const char* arg, const char* a, const char* b) { return !std::strcmp(arg, a) || !std::strcmp(arg, b); }

CheckOptions parse(int argc, char** argv, bool* help) {
  CheckOptions o;
  ArgCursor args(argc, argv);
  bool options_end = false;
  while (!args.done()) {
    const char* a = args.next();
    if (options_end || a[0] != '-' || !std::strcmp(a, "-")) {
      o.texts.push_back(a);
    } else if (!std::strcmp(a, "--")) {
      options_end = true;
    } else if (is(a, "-h", "--help")) {
      *help = true;
      return o;
    } else if (is(a, "-f", "--file")) {
      o.texts_file = args.value(a);
    } else if (is(a, "-e", "--escape")) {
      o.escapes = true;
    } else if (!parse_grammar_option(a, args, o.grammar)) {
      throw UsageError(std::string("unknown option '") + a + "' (see peak grammar check --help)");
    }
  }
  if (!o.grammar.grammar_given && !o.grammar.json_schema_given) {
    throw UsageError("no grammar given (--grammar-file FILE or --json-schema-file FILE)");
  }
  if (!o.texts_file.empty() && !o.texts.empty()) throw UsageError("give the texts as arguments or with -f, not both");
  if (o.texts_file.empty() && o.texts.empty()) throw UsageError("no text given (TEXT... or -f FILE)");
  return o;
}

// The lines of `text`, without their newlines (a last line may lack one).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

struct GrammarDeleter {
  void operator()(peak_grammar* g) const { peak_grammar_free(g); }
};

std::unique_ptr<peak_grammar, GrammarDeleter> compile(const GenerationOptions& o) {
  peak_grammar* grammar = nullptr;
  const peak_status status =
      o.json_schema_given
          ? peak_grammar_from_json_schema(o.json_schema.c_str(), &grammar)
          : peak_grammar_create(o.grammar.c_str(), o.grammar_root.empty() ? nullptr : o.grammar_root.c_str(), &grammar);
  if (status != PEAK_OK) {
    // The message without the C API function's name that starts it.
    const std::string message = peak_last_error();
    const size_t colon = message.find(": ");
    throw CommandError(std::string(o.json_schema_given ? "the JSON Schema" : "the grammar") + ": " +
                       (colon == std::string::npos ? message : message.substr(colon + 2)));
  }
  return std::unique_ptr<peak_grammar, GrammarDeleter>(grammar);
}

const char* verdict_name(peak_grammar_verdict verdict) {
  switch (verdict) {
    case PEAK_GRAMMAR_COMPLETE: return "complete";
    case PEAK_GRAMMAR_PREFIX: return "prefix";
    case PEAK_GRAMMAR_REJECTED: break;
  }
  return "rejected";
}

int run_check(int argc, char** argv) {
  bool help = false;
  CheckOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  const auto grammar = compile(o.grammar);
  if (!o.texts_file.empty()) o.texts = lines_of(read_input_file(o.texts_file, "text file"));
  for (size_t i = 0; i < o.texts.size(); ++i) {
    const std::string text = o.escapes ? process_escapes(o.texts[i]) : o.texts[i];
    peak_grammar_verdict verdict = PEAK_GRAMMAR_REJECTED;
    if (peak_grammar_check(grammar.get(), text.data(), text.size(), &verdict) != PEAK_OK) {
      throw CommandError("text " + std::to_string(i + 1) + ": " + peak_last_error());
    }
    std::printf("%s\n", verdict_name(verdict));
  }
  return 0;
}

}  // namespace

int run_grammar(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "check")) return run_check(argc - 1, argv + 1);
  if (argc >= 2 && is(argv[1], "-h", "--help")) {
    print_help();
    return 0;
  }
  throw UsageError(argc < 2 ? "no subcommand given (peak grammar check --help)"
                            : std::string("unknown subcommand '") + argv[1] + "' (check)");
}
