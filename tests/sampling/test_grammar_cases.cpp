// The cases of tests/data/gbnf_cases.txt: grammars written from the GBNF Guide
// (llama.cpp's grammars/README.md) and RFC 8259, each with the verdicts a
// reader of those documents gives on texts, or the place and words of the
// error a broken grammar must be refused with.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"

namespace peak::sampling {
namespace {

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

struct CaseFile {
  std::vector<GbnfBlock> blocks;
  std::string error;  // why the file could not be read, if it could not
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `"..."` from the start of `in` (escapes \\ \" \n \r \t \xHH) into
// *out; returns what follows it, or sets *error.
std::string read_quoted(const std::string& in, std::string* out, std::string* error) {
  if (in.empty() || in[0] != '"') {
    *error = "expected a quoted string";
    return "";
  }
  out->clear();
  for (size_t i = 1; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '"') return in.substr(i + 1);
    if (c != '\\') {
      *out += c;
      continue;
    }
    const char e = i + 1 < in.size() ? in[++i] : '\0';
    if (e == '\\' || e == '"') {
      *out += e;
    } else if (e == 'n' || e == 'r' || e == 't') {
      *out += e == 'n' ? '\n' : e == 'r' ? '\r' : '\t';
    } else if (e == 'x' && i + 2 < in.size() && hex_digit(in[i + 1]) >= 0 && hex_digit(in[i + 2]) >= 0) {
      *out += static_cast<char>(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
      i += 2;
    } else {
      *error = "bad escape in a quoted string";
      return "";
    }
  }
  *error = "unterminated quoted string";
  return "";
}

// " root=NAME" or nothing.
bool read_root(const std::string& rest, std::string* root) {
  if (rest.empty()) return true;
  if (rest.rfind(" root=", 0) != 0 || rest.size() == 6) return false;
  *root = rest.substr(6);
  return true;
}

bool read_case(const std::string& line, GbnfCase* c, std::string* error) {
  const size_t space = line.find(' ');
  const std::string word = line.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (word == "error") {
    c->is_error = true;
    char colon = 0;
    std::istringstream where(rest);
    where >> c->line >> colon >> c->column;
    if (!where || colon != ':' || where.get() != ' ') return (*error = "expected error LINE:COLUMN words"), false;
    std::getline(where, c->message);
    return true;
  }
  if (word == "complete") c->verdict = GrammarVerdict::kComplete;
  if (word == "prefix") c->verdict = GrammarVerdict::kPrefix;
  if (word != "complete" && word != "prefix" && word != "reject") return (*error = "unknown line"), false;
  const std::string after = read_quoted(rest, &c->text, error);
  if (error->empty() && !after.empty()) *error = "text after the quoted string";
  return error->empty();
}

// Starts a block from a `grammar` or `grammar-text` line; false if the line is neither.
bool read_block_start(const std::string& line, GbnfBlock* block, bool* multiline, std::string* error) {
  if (line.rfind("grammar-text ", 0) == 0) {
    const std::string rest = read_quoted(line.substr(13), &block->grammar, error);
    if (error->empty() && !read_root(rest, &block->root)) *error = "expected root=NAME";
    *multiline = false;
    return true;
  }
  if (line == "grammar" || line.rfind("grammar ", 0) == 0) {
    if (!read_root(line.substr(7), &block->root)) *error = "expected root=NAME";
    *multiline = true;
    return true;
  }
  return false;
}

CaseFile load_cases(const std::string& path) {
  CaseFile file;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CaseFile{{}, "cannot open " + path};
  std::string line;
  int number = 0;
  bool in_grammar = false;
  std::string error;
  while (error.empty() && std::getline(in, line)) {
    ++number;
    GbnfBlock block;
    bool multiline = false;
    if (in_grammar) {
      if (line == "end") {
        in_grammar = false;
      } else {
        file.blocks.back().grammar += line + "\n";
      }
    } else if (line.empty() || line[0] == '#') {
    } else if (read_block_start(line, &block, &multiline, &error)) {
      block.file_line = number;
      file.blocks.push_back(block);
      in_grammar = multiline;
    } else if (file.blocks.empty()) {
      error = "a case before any grammar";
    } else {
      GbnfCase c;
      c.file_line = number;
      if (read_case(line, &c, &error)) file.blocks.back().cases.push_back(c);
    }
    if (!error.empty()) error = path + ":" + std::to_string(number) + ": " + error + ": " + line;
  }
  if (error.empty() && in_grammar) error = path + ": a grammar without its end line";
  file.error = error;
  return file;
}

const CaseFile& case_file() {
  static const CaseFile file = load_cases(PEAK_TEST_DATA_DIR "/gbnf_cases.txt");
  return file;
}

TEST(GbnfCaseFile, ReadsWithEveryBlockHoldingCasesOfOneKind) {
  ASSERT_EQ(case_file().error, "");
  size_t cases = 0;
  for (const GbnfBlock& block : case_file().blocks) {
    SCOPED_TRACE("gbnf_cases.txt:" + std::to_string(block.file_line));
    ASSERT_FALSE(block.cases.empty());
    const bool errors = block.cases.front().is_error;
    for (const GbnfCase& c : block.cases) EXPECT_EQ(c.is_error, errors);
    if (errors) {
      EXPECT_EQ(block.cases.size(), 1u);
    }
    cases += block.cases.size();
  }
  EXPECT_GE(cases, 150u);
}

void expect_error(const GbnfBlock& block, const GbnfCase& expected) {
  SCOPED_TRACE("gbnf_cases.txt:" + std::to_string(expected.file_line));
  try {
    Grammar::parse(block.grammar, block.root);
    ADD_FAILURE() << "the grammar was accepted";
  } catch (const GrammarError& error) {
    EXPECT_EQ(error.line(), expected.line) << error.what();
    EXPECT_EQ(error.column(), expected.column) << error.what();
    EXPECT_NE(error.message().find(expected.message), std::string::npos) << error.what();
  }
}

// Also: the text read in two parts, the first handed over as a snapshot to
// another matcher, gives the same verdict at every split, and no part of a
// text that can still become a string of the grammar is rejected.
void expect_verdict(const std::shared_ptr<const Grammar>& grammar, const GbnfCase& expected) {
  SCOPED_TRACE("gbnf_cases.txt:" + std::to_string(expected.file_line));
  EXPECT_STREQ(to_string(grammar_verdict(grammar, expected.text)), to_string(expected.verdict));
  for (size_t split = 0; split < expected.text.size(); ++split) {
    GrammarMatcher first(grammar);
    first.accept_bytes(expected.text.substr(0, split));
    if (expected.verdict != GrammarVerdict::kRejected) {
      EXPECT_TRUE(first.can_continue()) << "after " << split;
    }
    GrammarMatcher second(grammar);
    second.restore(first.state());
    second.accept_bytes(expected.text.substr(split));
    EXPECT_STREQ(to_string(second.verdict()), to_string(expected.verdict)) << "split at " << split;
  }
}

// Names a failing block by its place in the file, not by its bytes.
void PrintTo(const GbnfBlock& block, std::ostream* out) { *out << "gbnf_cases.txt:" << block.file_line; }

class GbnfCaseBlock : public testing::TestWithParam<GbnfBlock> {};

TEST_P(GbnfCaseBlock, GivesTheWrittenVerdictsOrError) {
  const GbnfBlock& block = GetParam();
  if (block.cases.front().is_error) return expect_error(block, block.cases.front());
  std::shared_ptr<const Grammar> grammar;
  try {
    grammar = Grammar::parse(block.grammar, block.root);
  } catch (const GrammarError& error) {
    FAIL() << "gbnf_cases.txt:" << block.file_line << ": " << error.what();
  }
  for (const GbnfCase& c : block.cases) expect_verdict(grammar, c);
}

INSTANTIATE_TEST_SUITE_P(File, GbnfCaseBlock, testing::ValuesIn(case_file().blocks),
                         [](const testing::TestParamInfo<GbnfBlock>& block) {
                           return "line_" + std::to_string(block.param.file_line);
                         });

}  // namespace
}  // namespace peak::sampling
