// GrammarMatcher as a token sampler uses it: tokens are byte strings that cut
// through rules and characters, states are snapshot and restored, one grammar
// serves several threads; parses that meet again are followed once, and
// grammars that would multiply the parses stop at the stated bounds instead of
// growing. Also the bounds of Grammar::parse that
// take more text than a case file line.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"

namespace peak::sampling {
namespace {

std::shared_ptr<const Grammar> compile(const std::string& text) { return Grammar::parse(text); }

GrammarError parse_error(const std::string& text) {
  try {
    Grammar::parse(text);
  } catch (const GrammarError& error) {
    return error;
  }
  return GrammarError("the grammar was accepted", 0, 0);
}

TEST(GrammarMatcher, TokensMayCutThroughRulesAndCharacters) {
  GrammarMatcher matcher(compile("root ::= word \" \" word\nword ::= [a-z\u00e9]+\n"));
  EXPECT_TRUE(matcher.accept_bytes("ab \xc3"));  // ends inside the é of the second word
  EXPECT_FALSE(matcher.is_complete());
  EXPECT_TRUE(matcher.can_continue());
  EXPECT_TRUE(matcher.accept_bytes("\xa9z"));
  EXPECT_TRUE(matcher.is_complete());
  EXPECT_FALSE(matcher.accept_bytes(" "));  // a third word is not in the grammar
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kRejected);
}

TEST(GrammarMatcher, StaysStoppedAfterARejectionUntilRestored) {
  GrammarMatcher matcher(compile("root ::= \"ab\"\n"));
  const GrammarMatcher::State start = matcher.state();
  EXPECT_FALSE(matcher.accept_bytes("x"));
  EXPECT_FALSE(matcher.accept_bytes("ab"));
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kRejected);
  matcher.restore(start);
  EXPECT_TRUE(matcher.accept_bytes("ab"));
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kComplete);
  matcher.reset();
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kPrefix);
}

TEST(GrammarMatcher, SnapshotsUndoTurns) {
  GrammarMatcher matcher(compile("root ::= (\"[\" [0-9]+ \"]\")+\n"));
  ASSERT_TRUE(matcher.accept_bytes("[1]"));
  const GrammarMatcher::State after_first = matcher.state();
  ASSERT_TRUE(matcher.accept_bytes("[2"));
  const GrammarMatcher::State inside_second = matcher.state();
  EXPECT_FALSE(matcher.is_complete());

  matcher.restore(after_first);  // the second turn taken back
  EXPECT_TRUE(matcher.is_complete());
  EXPECT_FALSE(matcher.accept_bytes("]"));

  GrammarMatcher other(matcher);  // copies go their own way
  other.restore(inside_second);
  EXPECT_TRUE(other.accept_bytes("34]"));
  EXPECT_TRUE(other.is_complete());
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kRejected);
}

TEST(GrammarMatcher, APartialCharacterDropsTheParsesItCannotContinue) {
  // "é" is C3 A9, "ü" C3 BC, "日" E6 97 A5: after C3 only the parses of é and ü are left.
  GrammarMatcher matcher(compile("root ::= \"\u00e9\" \"1\" | \"\u00fc\" \"2\" | \"\u65e5\" \"3\"\n"));
  EXPECT_EQ(matcher.stack_count(), 3u);
  ASSERT_TRUE(matcher.accept_byte(0xC3));
  EXPECT_EQ(matcher.stack_count(), 2u);
  ASSERT_TRUE(matcher.accept_byte(0xBC));
  EXPECT_TRUE(matcher.accept_bytes("2"));
  EXPECT_TRUE(matcher.is_complete());
}

TEST(GrammarMatcher, AmbiguousRepetitionsKeepEachParseOnce) {
  GrammarMatcher matcher(compile("root ::= \"x\"* \"x\"* \"x\"*\n"));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(matcher.accept_byte('x'));
  EXPECT_TRUE(matcher.is_complete());
  // The next x can be read by each of the three repetitions, and the text can end.
  EXPECT_EQ(matcher.stack_count(), 4u);
}

TEST(GrammarMatcher, OneGrammarServesThreadsAtOnce) {
  const std::shared_ptr<const Grammar> grammar = compile("root ::= \"(\" root \")\" root | \"\"\n");
  std::string nested;
  for (int i = 0; i < 200; ++i) nested = "(" + nested + ")()";
  std::vector<GrammarVerdict> verdicts(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < verdicts.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) verdicts[t] = grammar_verdict(grammar, nested);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const GrammarVerdict verdict : verdicts) EXPECT_EQ(verdict, GrammarVerdict::kComplete);
}

TEST(GrammarMatcher, ParsesThatMultiplyStopAtTheStackBound) {
  // After n x's every choice of y or z for each is a different parse: 2^n stacks.
  const std::shared_ptr<const Grammar> grammar = compile("root ::= \"x\" root \"y\" | \"x\" root \"z\" | \"\"\n");
  EXPECT_EQ(grammar_verdict(grammar, "xxxxxxxxxxzy"), GrammarVerdict::kPrefix);
  GrammarMatcher matcher(grammar);
  EXPECT_FALSE(matcher.accept_bytes(std::string(20, 'x')));
  EXPECT_TRUE(matcher.over_limit());
  EXPECT_EQ(matcher.verdict(), GrammarVerdict::kOverLimit);
  EXPECT_FALSE(matcher.accept_bytes("y"));
}

TEST(GrammarMatcher, DeepNestingStopsAtTheCellBound) {
  // Each "(" leaves 64 callers waiting: c1 for its ")", c2 for its ")"... so
  // the stacks grow by 64 positions a character (two stacks: after "(" comes
  // another "(" or the first ")").
  std::string text = "root ::= \"(\" c1 | \"\"\n";
  for (int i = 1; i < 64; ++i) text += "c" + std::to_string(i) + " ::= c" + std::to_string(i + 1) + " \")\"\n";
  text += "c64 ::= root \")\"\n";
  const std::shared_ptr<const Grammar> grammar = compile(text);
  EXPECT_EQ(grammar_verdict(grammar, std::string(3, '(') + std::string(3 * 64, ')')), GrammarVerdict::kComplete);
  const size_t depth = kGrammarMaxStackCells / 64;
  EXPECT_EQ(grammar_verdict(grammar, std::string(depth / 4, '(')), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(grammar, std::string(depth, '(')), GrammarVerdict::kOverLimit);
}

TEST(GrammarMatcher, PathsThatMeetAgainExpandOnce) {
  // Each n can be skipped two ways: 2^30 paths lead from the start to "x".
  std::string text = "root ::= ";
  for (int i = 0; i < 30; ++i) text += "n ";
  text += "\"x\"\nn ::= \"a\"? | \"b\"?\n";
  const std::shared_ptr<const Grammar> grammar = compile(text);
  EXPECT_EQ(grammar_verdict(grammar, "x"), GrammarVerdict::kComplete);
  std::string letters;
  for (int i = 0; i < 15; ++i) letters += "ab";
  EXPECT_EQ(grammar_verdict(grammar, letters + "x"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(grammar, letters), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(grammar, letters + "ax"), GrammarVerdict::kRejected);
}

TEST(GrammarMatcher, ExpansionsStopAtTheStepBound) {
  // A call of e queues one stack per alternative: more than the steps allowed.
  std::string text = "root ::= e \"a\"\ne ::= \"\"";
  for (size_t i = 0; i < kGrammarMaxExpansionSteps; ++i) text += "|";
  const std::shared_ptr<const Grammar> grammar = compile(text);
  EXPECT_EQ(grammar_verdict(grammar, ""), GrammarVerdict::kOverLimit);
  EXPECT_EQ(grammar_verdict(grammar, "a"), GrammarVerdict::kOverLimit);
}

TEST(GrammarParse, RefusesTextAboveTheSizeBound) {
  std::string text = "root ::= \"a\"\n";
  text += std::string(kGrammarMaxTextBytes + 1 - text.size(), '#');
  const GrammarError error = parse_error(text);
  EXPECT_EQ(error.line(), 1);
  EXPECT_EQ(error.column(), 1);
  EXPECT_NE(error.message().find("above the limit"), std::string::npos) << error.what();
  text.pop_back();
  EXPECT_NO_THROW(Grammar::parse(text));
}

TEST(GrammarParse, RefusesMoreRulesThanTheBound) {
  // Each rule ri adds itself and the 4095 helper rules of its {0,4095}: root and
  // r1..r15 make 61441 rules, and r16's helpers (on line 17) pass the bound.
  std::string text = "root ::= \"a\"\n";
  for (int i = 1; i <= 17; ++i) text += "r" + std::to_string(i) + " ::= \"a\"{0,4095}\n";
  const GrammarError error = parse_error(text);
  EXPECT_EQ(error.line(), 17);
  EXPECT_EQ(error.column(), 9);
  EXPECT_NE(error.message().find("more than 65536 rules"), std::string::npos) << error.what();
}

TEST(GrammarParse, RefusesMoreElementsThanTheBound) {
  // root's 2 elements and x's first 255 items leave fewer than 4096 elements to
  // the bound of 2^20: the 256th item passes it.
  std::string text = "root ::= x\nx ::=";
  for (int i = 0; i < 256; ++i) text += " \"a\"{4096}";
  const GrammarError error = parse_error(text + "\n");
  EXPECT_EQ(error.line(), 2);
  EXPECT_EQ(error.column(), 7 + 10 * 255);
  EXPECT_NE(error.message().find("more than 1048576 elements"), std::string::npos) << error.what();
}

TEST(Grammar, EitherTakesTheStringsOfBoth) {
  // Both with a rule named root and helper rules: the joined grammar keeps them apart.
  const auto a = Grammar::parse("root ::= item (\",\" item)*\nitem ::= [0-9]+\n");
  const auto b = Grammar::parse("root ::= \"<\" (\"x\" | root) \">\"\n");
  const auto either = Grammar::either(*a, *b);
  EXPECT_EQ(grammar_verdict(either, "1,22"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(either, "<<x>>"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(either, "<<x>"), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(either, "1,"), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(either, ""), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(either, "1<x>"), GrammarVerdict::kRejected);
  EXPECT_EQ(grammar_verdict(either, "<1>"), GrammarVerdict::kRejected);
  EXPECT_EQ(either->rule_count(), a->rule_count() + b->rule_count() + 1);
}

TEST(Grammar, ThenTakesAStringOfOneFollowedByOneOfTheOther) {
  const auto blanks = Grammar::parse("root ::= \"\\n\"*\n");
  const auto json_bit = Grammar::parse("root ::= \"{\" [a-z]* \"}\"\n");
  const auto then = Grammar::then(*blanks, *json_bit);
  EXPECT_EQ(grammar_verdict(then, "{ab}"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(then, "\n\n{}"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(then, "\n\n"), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(then, "\n{}\n"), GrammarVerdict::kRejected);
  EXPECT_EQ(grammar_verdict(then, "{a}{b}"), GrammarVerdict::kRejected);
  const auto reversed = Grammar::then(*json_bit, *blanks);
  EXPECT_EQ(grammar_verdict(reversed, "{}\n\n"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(reversed, "\n{}"), GrammarVerdict::kRejected);
}

TEST(Grammar, OneOrMoreRepeatsAnItemWithASeparator) {
  const auto item = Grammar::parse("root ::= \"<c>\" [0-9]+ \"</c>\"\n");
  const auto list = Grammar::one_or_more(*item, *Grammar::parse("root ::= \"\\n\"\n"));
  EXPECT_EQ(grammar_verdict(list, "<c>1</c>"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(list, "<c>1</c>\n<c>22</c>\n<c>3</c>"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(list, "<c>1</c>\n"), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(list, ""), GrammarVerdict::kPrefix);
  EXPECT_EQ(grammar_verdict(list, "<c>1</c><c>2</c>"), GrammarVerdict::kRejected);
  EXPECT_EQ(grammar_verdict(list, "<c>1</c>\n\n<c>2</c>"), GrammarVerdict::kRejected);
  // An empty separator: items back to back.
  const auto joined = Grammar::one_or_more(*item, *Grammar::parse("root ::= \"\"\n"));
  EXPECT_EQ(grammar_verdict(joined, "<c>1</c><c>2</c>"), GrammarVerdict::kComplete);
  EXPECT_THROW(Grammar::one_or_more(*Grammar::parse("root ::= \"a\"?\n"), *item), std::invalid_argument);
}

}  // namespace
}  // namespace peak::sampling
