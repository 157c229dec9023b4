// The cases of tests/data/gbnf_cases.txt: grammars written from the GBNF Guide
// (llama.cpp's grammars/README.md) and RFC 8259, each with the verdicts a
// reader of those documents gives on texts, or the place and words of the
// error a broken grammar must be refused with.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gbnf_cases.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"

namespace peak::sampling {
namespace testing {

// Names a failing block by its place in the file, not by its bytes.
void PrintTo(const GbnfBlock& block, std::ostream* out) { *out << "gbnf_cases.txt:" << block.file_line; }

}  // namespace testing

namespace {

using testing::GbnfBlock;
using testing::GbnfCase;

const testing::GbnfCaseFile& case_file() {
  static const testing::GbnfCaseFile file = testing::load_gbnf_cases(PEAK_TEST_DATA_DIR "/gbnf_cases.txt");
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

class GbnfCaseBlock : public ::testing::TestWithParam<GbnfBlock> {};

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

INSTANTIATE_TEST_SUITE_P(File, GbnfCaseBlock, ::testing::ValuesIn(case_file().blocks),
                         [](const ::testing::TestParamInfo<GbnfBlock>& block) {
                           return "line_" + std::to_string(block.param.file_line);
                         });

}  // namespace
}  // namespace peak::sampling
