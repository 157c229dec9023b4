// The cases of tests/data/gbnf_cases.txt (format in its header): GBNF
// grammars, each with texts and their verdicts, or the error a broken grammar
// is refused with.
#pragma once

#include <string>
#include <vector>

#include "sampling/grammar_matcher.h"

namespace peak::sampling::testing {

struct GbnfCase {
  int file_line = 0;
  bool is_error = false;
  GrammarVerdict verdict = GrammarVerdict::kRejected;  // when !is_error
  std::string text;
  int line = 0;  // of the error, when is_error
  int column = 0;
  std::string message;  // words the error's message holds
};

struct GbnfBlock {
  int file_line = 0;
  std::string grammar;
  std::string root = "root";
  std::vector<GbnfCase> cases;
};

struct GbnfCaseFile {
  std::vector<GbnfBlock> blocks;
  std::string error;  // why the file could not be read, if it could not
};

GbnfCaseFile load_gbnf_cases(const std::string& path);

}  // namespace peak::sampling::testing
