// The grammar stage of the sampler chain against a naive reference written
// here: for every token, a fresh GrammarMatcher put in the state, fed the
// token's bytes. Masks (the trie walk over cached transitions), lazy tests in
// logit order and the chain's choices must agree with it on random states of
// real grammars, on a made-up vocabulary with tokens that cut UTF-8
// characters and on the qwen3 vocabulary (151,936 tokens); a cache too small
// for the walk must give the same answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/grammar_stage.h"
#include "sampling/grammar_vocabulary.h"
#include "sampling/pcg32.h"
#include "sampling/sampler_chain.h"
#include "tokenizer/tokenizer.h"

namespace peak::sampling {
namespace {

using Kind = GrammarVocabulary::Kind;

// RFC 8259's JSON (as tests/data/gbnf_cases.txt writes it).
const char* const kJsonGrammar =
    "root ::= ws value ws\n"
    "value ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
    "object ::= \"{\" ws ( member ( ws \",\" ws member )* ws )? \"}\"\n"
    "member ::= string ws \":\" ws value\n"
    "array ::= \"[\" ws ( value ( ws \",\" ws value )* ws )? \"]\"\n"
    "string ::= \"\\\"\" char* \"\\\"\"\n"
    "char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n"
    "number ::= \"-\"? int frac? exp?\n"
    "int ::= \"0\" | [1-9] [0-9]*\n"
    "frac ::= \".\" [0-9]+\n"
    "exp ::= [eE] [-+]? [0-9]+\n"
    "ws ::= [ \\t\\n\\r]*\n";

const char* const kJsonText =
    "{\"name\": \"Ann \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\", \"tags\": [\"a\", \"b\\n\\u00e9\"],\n"
    "  \"age\": 34, \"ratio\": -0.5e+10, \"ok\": true, \"none\": null, \"nested\": {\"x\": [[], {}]}}";

// Every byte alone, JSON's pieces, multi-byte characters whole and cut, the
// special kinds.
std::vector<GrammarVocabulary::Token> made_up_tokens(uint64_t seed) {
  std::vector<GrammarVocabulary::Token> tokens;
  tokens.push_back({"", Kind::kEndOfGeneration});
  tokens.push_back({"<ctl>", Kind::kControl});
  tokens.push_back({"", Kind::kEmpty});
  for (int b = 0; b < 256; ++b) tokens.push_back({std::string(1, static_cast<char>(b)), Kind::kText});
  const std::vector<std::string> pieces = {"{",
                                           "}",
                                           "[",
                                           "]",
                                           "\"",
                                           ":",
                                           ",",
                                           " ",
                                           "\n",
                                           "\\",
                                           "u",
                                           "0",
                                           "1",
                                           "9",
                                           "-",
                                           ".",
                                           "e",
                                           "+",
                                           "true",
                                           "false",
                                           "null",
                                           "a",
                                           "b",
                                           "n",
                                           "x",
                                           "\xc3\xa9",
                                           "\xc3",
                                           "\xa9",
                                           "\xe6\x97\xa5",
                                           "\xe6",
                                           "\x97\xa5",
                                           "\xf0\x9f\x98\x80",
                                           "\xf0\x9f",
                                           "\x98\x80",
                                           "\xff",
                                           "\x01"};
  Pcg32 rng(seed);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes;
    const int n = 1 + static_cast<int>(rng.next_unit_double() * 5);
    for (int j = 0; j < n; ++j)
      bytes += pieces[static_cast<size_t>(rng.next_unit_double() * static_cast<double>(pieces.size()))];
    tokens.push_back({bytes, Kind::kText});
  }
  tokens.push_back({"\"a", Kind::kText});  // the same bytes as some of the above
  tokens.push_back({"\"a", Kind::kText});
  return tokens;
}

// The reference: a matcher put in the state and fed the token's bytes (a
// preserved control token's too).
bool naive_allows(GrammarMatcher& matcher, const GrammarVocabulary& vocabulary, const GrammarMatcher::State& state,
                  int32_t token, const std::vector<int32_t>& preserved = {}) {
  matcher.restore(state);
  switch (vocabulary.kind(token)) {
    case Kind::kText: return matcher.accept_bytes(vocabulary.bytes(token));
    case Kind::kEndOfGeneration: return matcher.is_complete();
    case Kind::kControl:
      return std::find(preserved.begin(), preserved.end(), token) != preserved.end() &&
             matcher.accept_bytes(vocabulary.bytes(token));
    default: return false;
  }
}

std::vector<int32_t> naive_allowed(const std::shared_ptr<const Grammar>& grammar, const GrammarVocabulary& vocabulary,
                                   const GrammarMatcher::State& state, const std::vector<int32_t>& preserved = {}) {
  GrammarMatcher matcher(grammar);
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < vocabulary.size(); ++id) {
    if (naive_allows(matcher, vocabulary, state, id, preserved)) ids.push_back(id);
  }
  return ids;
}

std::vector<float> random_logits(Pcg32& rng, int32_t n) {
  std::vector<float> logits(static_cast<size_t>(n));
  for (float& l : logits) l = static_cast<float>(rng.next_unit_double() * 20.0 - 10.0);
  return logits;
}

// The allowed ids as keep_allowed leaves them, sorted.
std::vector<int32_t> kept(GrammarStage& stage, const std::vector<float>& logits) {
  std::vector<TokenCandidate> buffer(logits.size());
  Candidates candidates = load_logits(logits.data(), static_cast<int32_t>(logits.size()), buffer.data());
  std::vector<int32_t> ids;
  try {
    stage.keep_allowed(candidates);
  } catch (const std::invalid_argument&) {
    return ids;
  }
  for (size_t i = 0; i < candidates.size; ++i) ids.push_back(candidates.data[i].id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The k best of the allowed ids by logit.
std::vector<int32_t> best_of(const std::vector<int32_t>& allowed_ids, const std::vector<float>& logits, size_t k) {
  std::vector<TokenCandidate> allowed;
  for (const int32_t id : allowed_ids) allowed.push_back({id, logits[static_cast<size_t>(id)], 0});
  std::sort(allowed.begin(), allowed.end(), ranks_before);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < std::min(k, allowed.size()); ++i) ids.push_back(allowed[i].id);
  return ids;
}

std::vector<int32_t> best_kept(GrammarStage& stage, const std::vector<float>& logits, size_t k) {
  std::vector<TokenCandidate> buffer(logits.size());
  Candidates candidates = load_logits(logits.data(), static_cast<int32_t>(logits.size()), buffer.data());
  stage.keep_best_allowed(candidates, k);
  sort_best(candidates, k);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < std::min(k, candidates.size); ++i) ids.push_back(candidates.data[i].id);
  return ids;
}

// States of `text`'s prefixes at every cut.
std::vector<GrammarMatcher::State> states_along(const std::shared_ptr<const Grammar>& grammar,
                                                const std::string& text) {
  GrammarMatcher matcher(grammar);
  std::vector<GrammarMatcher::State> states = {matcher.state()};
  for (const char c : text) {
    if (!matcher.accept_byte(static_cast<uint8_t>(c))) break;
    states.push_back(matcher.state());
  }
  return states;
}

void expect_agreement(const std::shared_ptr<const Grammar>& grammar,
                      const std::shared_ptr<const GrammarVocabulary>& vocabulary,
                      const std::vector<GrammarMatcher::State>& states, const GrammarStateCache::Limits& limits,
                      const std::vector<int32_t>& preserved = {}) {
  GrammarStage stage(grammar, vocabulary, preserved, limits);
  GrammarMatcher matcher(grammar);
  Pcg32 rng(7);
  std::vector<int32_t> probes = {0, 1, 2, 3 + '{', 3 + '"', 3 + 0xC3, vocabulary->size() - 1};
  probes.insert(probes.end(), preserved.begin(), preserved.end());
  for (size_t s = 0; s < states.size(); ++s) {
    const GrammarMatcher::State& state = states[s];
    const std::vector<int32_t> expected = naive_allowed(grammar, *vocabulary, state, preserved);
    const std::vector<float> logits = random_logits(rng, vocabulary->size());
    stage.restore(state);
    // The lazy tests first (before a mask exists), then the mask.
    EXPECT_EQ(best_kept(stage, logits, 5), best_of(expected, logits, 5)) << "state " << s;
    EXPECT_EQ(kept(stage, logits), expected) << "state " << s;
    for (const int32_t id : probes) {
      EXPECT_EQ(stage.allows(id), naive_allows(matcher, *vocabulary, state, id, preserved))
          << "state " << s << " token " << id;
    }
  }
}

TEST(GrammarVocabulary, TrieHoldsEveryTextTokenOnceOnItsPath) {
  const GrammarVocabulary vocabulary({{"ab", Kind::kText},
                                      {"a", Kind::kText},
                                      {"", Kind::kEndOfGeneration},
                                      {"b", Kind::kText},
                                      {"ab", Kind::kText},
                                      {"", Kind::kText},
                                      {"abc", Kind::kControl},
                                      {"ac", Kind::kText}});
  EXPECT_EQ(vocabulary.kind(5), Kind::kEmpty);  // a text token without bytes
  EXPECT_EQ(vocabulary.end_of_generation_tokens(), std::vector<int32_t>{2});
  // a (1), ab (0, 4), ac (7), b (3): nodes a, b under a, c under a, b.
  const auto& trie = vocabulary.trie();
  ASSERT_EQ(vocabulary.trie_node_count(), 4u);
  std::string bytes;
  for (size_t i = 0; i < 4; ++i) bytes += static_cast<char>(trie[i].byte);
  EXPECT_EQ(bytes, "abcb");
  EXPECT_EQ(trie[0].subtree_end, 3u);
  EXPECT_EQ(trie[3].subtree_end, 4u);
  const int32_t* tokens = vocabulary.trie_tokens();
  EXPECT_EQ(std::vector<int32_t>(tokens + trie[1].tokens_begin, tokens + trie[2].tokens_begin),
            (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(std::vector<int32_t>(tokens + trie[3].tokens_begin, tokens + trie[4].tokens_begin),
            std::vector<int32_t>{3});
}

TEST(GrammarStage, MasksAndLazyTestsAgreeWithANaivePassOnJsonStates) {
  const auto grammar = Grammar::parse(kJsonGrammar);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(1));
  const std::vector<GrammarMatcher::State> states = states_along(grammar, kJsonText);
  ASSERT_GT(states.size(), std::string(kJsonText).size());  // the whole text was read
  expect_agreement(grammar, vocabulary, states, {});
}

TEST(GrammarStage, ACacheTooSmallForTheWalkGivesTheSameAnswers) {
  const auto grammar = Grammar::parse(kJsonGrammar);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(2));
  std::vector<GrammarMatcher::State> states = states_along(grammar, kJsonText);
  states.resize(40);
  GrammarStateCache::Limits tiny;
  tiny.max_states = 3;
  tiny.max_transitions = 600;
  tiny.mask_bytes = 1;
  expect_agreement(grammar, vocabulary, states, tiny);
}

TEST(GrammarStage, RandomGrammarsAndStates) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"root ::= [a-z\\u00e9\\u65e5]+ (\" \" [0-9]{1,3})? \"\\n\"\n", "ab\xc3\xa9\xe6\x97\xa5 12\n"},
      {"root ::= (\"true\" | \"tree\" | \"t\" [^x]*) \"!\"\n", "tree!"},
      {"root ::= \"\\\"\" ( [^\"\\\\] | \"\\\\\" . )* \"\\\"\"\n", "\"a\\\"\xf0\x9f\x98\x80\""},
      {"root ::= x x\nx ::= \"a\"* | \"ab\"\n", "aaab"},
  };
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(3));
  for (const auto& [text, sample] : cases) {
    SCOPED_TRACE(text);
    const auto grammar = Grammar::parse(text);
    expect_agreement(grammar, vocabulary, states_along(grammar, sample), {});
  }
}

TEST(GrammarStage, EndOfGenerationOnlyWhereTheGrammarCanEndAndControlTokensNever) {
  const auto grammar = Grammar::parse("root ::= \"ab\" \"c\"?\n");
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(4));
  GrammarStage stage(grammar, vocabulary);
  EXPECT_FALSE(stage.allows(0));  // end of generation
  stage.accept(3 + 'a');
  EXPECT_FALSE(stage.allows(0));
  EXPECT_FALSE(stage.finished());
  stage.accept(3 + 'b');
  EXPECT_TRUE(stage.allows(0));
  EXPECT_FALSE(stage.finished());  // "c" can follow
  EXPECT_FALSE(stage.allows(1));   // the control token, in no state
  EXPECT_FALSE(stage.allows(2));   // the empty one
  stage.accept(3 + 'c');
  EXPECT_TRUE(stage.finished());
  std::vector<float> logits(static_cast<size_t>(vocabulary->size()), 1.0f);
  EXPECT_EQ(kept(stage, logits), std::vector<int32_t>{0});
}

TEST(GrammarStage, AcceptRefusesWhatTheGrammarDoesNotAllowAndKeepsItsState) {
  const auto grammar = Grammar::parse("root ::= \"ab\"\n");
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(5));
  GrammarStage stage(grammar, vocabulary);
  stage.accept(3 + 'a');
  const GrammarMatcher::State after_a = stage.state();
  EXPECT_THROW(stage.accept(3 + 'x'), std::invalid_argument);
  EXPECT_THROW(stage.accept(0), std::invalid_argument);  // not complete: no end of generation
  EXPECT_THROW(stage.accept(1), std::invalid_argument);  // control
  EXPECT_TRUE(stage.state() == after_a);
  stage.accept(3 + 'b');
  EXPECT_TRUE(stage.finished());
}

TEST(GrammarStage, NoTokenAllowedIsAClearError) {
  // U+65E5 whole is no token of this vocabulary, and neither are its bytes alone.
  const auto grammar = Grammar::parse("root ::= \"\\u65e5\"\n");
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(
      std::vector<GrammarVocabulary::Token>{{"", Kind::kEndOfGeneration}, {"a", Kind::kText}, {"\xc3", Kind::kText}});
  SamplerParams params;
  params.grammar = grammar;
  SamplerChain chain(3, params, vocabulary);
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
  try {
    chain.sample(logits.data());
    FAIL() << "sampled under a grammar that allows no token";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("no token of the vocabulary can continue the grammar"), std::string::npos)
        << error.what();
  }
}

TEST(SamplerChainGrammar, GreedyAndTopKChooseAmongTheAllowedTokens) {
  const auto grammar = Grammar::parse(kJsonGrammar);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(6));
  const std::vector<GrammarMatcher::State> states = states_along(grammar, kJsonText);
  Pcg32 rng(9);
  for (const float temperature : {0.0f, 1.0f}) {
    SamplerParams params;
    params.grammar = grammar;
    params.temperature = temperature;
    params.top_k = 3;
    params.top_p = 1.0f;
    params.min_p = 0.0f;
    SamplerChain chain(vocabulary->size(), params, vocabulary);
    for (size_t s = 0; s < states.size(); s += 7) {
      const std::vector<float> logits = random_logits(rng, vocabulary->size());
      chain.restore_grammar(states[s]);
      const int32_t token = chain.sample(logits.data());
      const std::vector<int32_t> best =
          best_of(naive_allowed(grammar, *vocabulary, states[s]), logits, temperature == 0 ? 1 : 3);
      EXPECT_NE(std::find(best.begin(), best.end(), token), best.end()) << "state " << s;
      if (temperature > 0) {
        std::vector<int32_t> candidates;
        for (size_t i = 0; i < chain.last_candidates().size; ++i)
          candidates.push_back(chain.last_candidates().data[i].id);
        EXPECT_EQ(candidates, best) << "state " << s;
      }
    }
  }
}

TEST(SamplerChainGrammar, EveryStageOrderAndTheWholeDistributionKeepTheGrammar) {
  const auto grammar = Grammar::parse(kJsonGrammar);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(8));
  SamplerParams params;
  params.grammar = grammar;
  params.top_k = 0;
  params.temperature = 1.5f;
  params.repeat_penalty = 1.3f;
  params.order = {SamplerStage::TopP, SamplerStage::Penalties, SamplerStage::MinP};
  SamplerChain chain(vocabulary->size(), params, vocabulary);
  GrammarMatcher check(grammar);
  Pcg32 rng(10);
  std::string text;
  for (int step = 0; step < 200 && !chain.grammar_finished(); ++step) {
    const std::vector<float> logits = random_logits(rng, vocabulary->size());
    const int32_t token = chain.sample(logits.data());
    if (token == 0) break;  // end of generation
    ASSERT_EQ(vocabulary->kind(token), Kind::kText);
    chain.accept(token);
    text += vocabulary->bytes(token);
    ASSERT_TRUE(check.accept_bytes(vocabulary->bytes(token))) << text;
  }
  EXPECT_NE(check.verdict(), GrammarVerdict::kRejected);
}

// A chain on the made-up vocabulary under `grammar`, with the other params' defaults.
SamplerChain made_up_chain(const char* grammar, uint64_t seed) {
  SamplerParams params;
  params.grammar = Grammar::parse(grammar);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(seed));
  return SamplerChain(vocabulary->size(), params, vocabulary);
}

TEST(SamplerChainGrammar, PromptTokensDoNotReachTheGrammarAndSnapshotsComeBack) {
  SamplerChain chain = made_up_chain("root ::= \"ab\"\n", 11);
  chain.accept_prompt(3 + 'x');  // not in the grammar, and no harm
  chain.accept(3 + 'a');
  const SamplerChain before_b = chain;
  chain.accept(3 + 'b');
  EXPECT_TRUE(chain.grammar_finished());
  chain.take_penalty_window(before_b);
  EXPECT_FALSE(chain.grammar_finished());
  chain.accept(3 + 'b');
  chain = before_b;  // copy-assigned: the grammar state too
  EXPECT_TRUE(*chain.grammar_state() == *before_b.grammar_state());
  EXPECT_THROW(chain.accept(3 + 'a'), std::invalid_argument);
  chain.reset();
  chain.accept(3 + 'a');
  SamplerChain copy(chain);
  copy.accept(3 + 'b');
  EXPECT_TRUE(copy.grammar_finished());
  EXPECT_FALSE(chain.grammar_finished());
}

// A thinking model's reasoning: held, the grammar neither limits the choice
// nor reads what is accepted; released, it starts from its start.
TEST(SamplerChainGrammar, AHeldGrammarIsSetAsideAndStartsOverWhenReleased) {
  const auto grammar = Grammar::parse("root ::= \"ab\"\n");
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(13));
  SamplerParams params;
  params.grammar = grammar;
  params.temperature = 0.0f;
  SamplerChain chain(vocabulary->size(), params, vocabulary);
  std::vector<float> logits(static_cast<size_t>(vocabulary->size()), 0.0f);
  logits[3 + 'x'] = 5.0f;
  logits[3 + 'b'] = 2.0f;
  logits[3 + 'a'] = 1.0f;
  chain.accept(3 + 'a');
  chain.enter_grammar_phase(GrammarPhase::Held);
  EXPECT_EQ(chain.grammar_phase(), GrammarPhase::Held);
  EXPECT_FALSE(chain.grammar_finished());
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'x');  // refused by the grammar, free here
  chain.accept(3 + 'x');
  chain.accept(3 + 'b');
  EXPECT_FALSE(chain.grammar_finished());  // "ab" was read, but the grammar is set aside
  chain.enter_grammar_phase(GrammarPhase::Answer);
  EXPECT_EQ(chain.grammar_phase(), GrammarPhase::Answer);
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'a');  // from the start: only 'a'
  EXPECT_THROW(chain.accept(3 + 'b'), std::invalid_argument);
  chain.accept(3 + 'a');
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'b');
  chain.accept(3 + 'b');
  EXPECT_TRUE(chain.grammar_finished());

  // Sampled with the whole distribution too, and the phase is part of a snapshot.
  params.temperature = 1.0f;
  params.top_k = 0;
  SamplerChain sampled(vocabulary->size(), params, vocabulary);
  sampled.enter_grammar_phase(GrammarPhase::Held);
  const SamplerChain held = sampled;
  sampled.enter_grammar_phase(GrammarPhase::Answer);
  sampled.take_penalty_window(held);
  EXPECT_EQ(sampled.grammar_phase(), GrammarPhase::Held);
  logits[3 + 'x'] = 50.0f;
  EXPECT_EQ(sampled.sample(logits.data()), 3 + 'x');
  sampled.restart_grammar();  // a new answer is not held
  EXPECT_NE(sampled.sample(logits.data()), 3 + 'x');
}

// The phases of a thinking model's output, with "<t>" opening the reasoning
// and newlines between it and the answer.
SamplerChain reasoning_chain(float temperature) {
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(17));
  SamplerParams params;
  params.grammar = Grammar::parse("root ::= \"ab\"\n");
  params.temperature = temperature;
  params.top_k = 0;
  SamplerChain chain(vocabulary->size(), params, vocabulary);
  chain.set_reasoning_grammars(*Grammar::parse("root ::= \" \"* \"<t>\" .*\n"), *Grammar::parse("root ::= \"\\n\"*\n"));
  return chain;
}

TEST(SamplerChainGrammar, AnOutputThatMayReasonStartsWithTheAnswerOrTheOpening) {
  SamplerChain chain = reasoning_chain(0.0f);
  SamplerChain without(chain.n_vocab(), chain.params(), chain.grammar_vocabulary());
  EXPECT_THROW(without.enter_grammar_phase(GrammarPhase::AnswerOrReasoning), std::logic_error);
  without.enter_grammar_phase(GrammarPhase::Held);  // needs nothing more
  std::vector<float> logits(static_cast<size_t>(chain.n_vocab()), 0.0f);
  logits[3 + 'x'] = 9.0f;
  logits[3 + '<'] = 5.0f;
  logits[3 + 'a'] = 4.0f;
  chain.enter_grammar_phase(GrammarPhase::AnswerOrReasoning);
  EXPECT_EQ(chain.sample(logits.data()), 3 + '<');  // not 'x': neither the answer nor the opening
  logits[3 + 'a'] = 6.0f;
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'a');
  chain.accept(3 + '<');
  EXPECT_THROW(chain.accept(3 + 'a'), std::invalid_argument);  // "<a" starts neither
  chain.accept(3 + 't');
  chain.accept(3 + '>');
  EXPECT_FALSE(chain.grammar_finished());
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'x');  // the reasoning is free once opened
  // The caller saw the reasoning open; its end, then newlines and the answer.
  chain.enter_grammar_phase(GrammarPhase::Held);
  chain.accept(3 + 'x');
  chain.enter_grammar_phase(GrammarPhase::AnswerAfterReasoning);
  chain.accept_grammar_text("\n");
  logits[3 + '\n'] = 7.0f;
  EXPECT_EQ(chain.sample(logits.data()), 3 + '\n');
  chain.accept(3 + '\n');
  logits[3 + '\n'] = 0.0f;
  EXPECT_EQ(chain.sample(logits.data()), 3 + 'a');
  chain.accept(3 + 'a');
  EXPECT_THROW(chain.accept(3 + '\n'), std::invalid_argument);  // newlines only before the answer
  chain.accept(3 + 'b');
  EXPECT_TRUE(chain.grammar_finished());

  // An answer without reasoning: the answer's grammar alone from the start.
  chain.enter_grammar_phase(GrammarPhase::AnswerOrReasoning);
  chain.accept(3 + 'a');
  const SamplerChain undecided = chain;
  chain.enter_grammar_phase(GrammarPhase::Answer);
  chain.accept_grammar_text("a");
  chain.accept(3 + 'b');
  EXPECT_TRUE(chain.grammar_finished());
  chain.take_penalty_window(undecided);  // phase and state come back
  EXPECT_EQ(chain.grammar_phase(), GrammarPhase::AnswerOrReasoning);
  EXPECT_THROW(chain.accept(3 + 't'), std::invalid_argument);
  chain.accept(3 + 'b');
  EXPECT_FALSE(chain.grammar_finished());  // undecided: the caller moves to the answer
}

TEST(SamplerChainGrammar, TextAcceptedAloneAdvancesTheGrammarOrChangesNothing) {
  SamplerChain chain = made_up_chain("root ::= \"\\n\"* \"abc\"\n", 14);
  chain.accept_grammar_text("\n\na");
  const SamplerChain after_a = chain;
  EXPECT_THROW(chain.accept_grammar_text("bx"), std::invalid_argument);
  EXPECT_TRUE(*chain.grammar_state() == *after_a.grammar_state());
  EXPECT_THROW(chain.accept(3 + 'a'), std::invalid_argument);
  chain.accept_grammar_text("b");
  chain.accept(3 + 'c');
  EXPECT_TRUE(chain.grammar_finished());
  SamplerChain free_chain(chain.n_vocab(), SamplerParams());
  free_chain.accept_grammar_text("anything");  // no grammar: nothing to read it
  EXPECT_EQ(free_chain.grammar_state(), nullptr);
}

TEST(SamplerChainGrammar, NeedsTheVocabularyOfItsSize) {
  SamplerParams params;
  params.grammar = Grammar::parse("root ::= \"a\"\n");
  EXPECT_THROW(SamplerChain(10, params), std::invalid_argument);
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(made_up_tokens(12));
  EXPECT_THROW(SamplerChain(10, params, vocabulary), std::invalid_argument);
}

// The qwen3 vocabulary (byte-level BPE, 151,936 tokens): its pieces as the
// tokenizer writes them, its end-of-generation and control tokens.
struct Qwen3Vocabulary {
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  std::shared_ptr<const GrammarVocabulary> vocabulary;
};

const std::string kQwen3Path = std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-qwen3.gguf";

Qwen3Vocabulary qwen3_vocabulary() {
  const auto file = gguf::GgufFile::open(kQwen3Path);
  Qwen3Vocabulary q;
  q.tokenizer = tokenizer::Tokenizer::from_gguf(*file);
  q.vocabulary = GrammarVocabulary::from_tokenizer(*q.tokenizer, q.tokenizer->n_vocab());
  return q;
}

TEST(GrammarStage, AgreesWithANaivePassOnTheQwen3Vocabulary) {
  if (!std::ifstream(kQwen3Path)) GTEST_SKIP() << "no " << kQwen3Path;
  const auto [tokenizer, vocabulary] = qwen3_vocabulary();
  ASSERT_EQ(vocabulary->size(), 151936);
  EXPECT_EQ(vocabulary->kind(151645), Kind::kEndOfGeneration);  // <|im_end|>
  EXPECT_EQ(vocabulary->kind(151644), Kind::kControl);          // <|im_start|>
  EXPECT_EQ(vocabulary->kind(151700), Kind::kEmpty);            // [PAD...], unused
  // Byte-level characters back to bytes, characters cut between tokens.
  const std::string text = "{\"name\": \"Ann \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"}";
  std::string written;
  for (const int32_t id : tokenizer->encode(text, false, false)) written += vocabulary->bytes(id);
  EXPECT_EQ(written, text);
  const auto grammar = Grammar::parse(kJsonGrammar);
  std::vector<GrammarMatcher::State> states = states_along(grammar, kJsonText);
  std::vector<GrammarMatcher::State> some;
  for (size_t i = 0; i < states.size(); i += PEAK_TEST_SANITIZED ? 37 : 9) some.push_back(states[i]);
  expect_agreement(grammar, vocabulary, some, {});
}

// Preserved tokens: a made-up vocabulary with two control tokens of the same
// text, one preserved, the marker as a text token too, and a preserved
// control token whose text JSON allows.
struct MarkerVocabulary {
  std::shared_ptr<const GrammarVocabulary> vocabulary;
  int32_t preserved;  // "<|tool_call|>", control
  int32_t other;      // "<|tool_call|>", control, never preserved
  int32_t spelled;    // "<|tool_call|>", text
  int32_t json;       // "{\"a", control
  int32_t textless;   // control without text
};

const char* const kMarkerGrammar = "root ::= \"<|tool_call|>\" [0-9]+\n";

MarkerVocabulary marker_vocabulary(uint64_t seed) {
  std::vector<GrammarVocabulary::Token> tokens = made_up_tokens(seed);
  MarkerVocabulary v;
  const auto add = [&tokens](const std::string& bytes, Kind kind) {
    tokens.push_back({bytes, kind});
    return static_cast<int32_t>(tokens.size() - 1);
  };
  v.preserved = add("<|tool_call|>", Kind::kControl);
  v.other = add("<|tool_call|>", Kind::kControl);
  v.spelled = add("<|tool_call|>", Kind::kText);
  v.json = add("{\"a", Kind::kControl);
  v.textless = add("", Kind::kControl);
  v.vocabulary = std::make_shared<const GrammarVocabulary>(std::move(tokens));
  return v;
}

TEST(GrammarStage, APreservedControlTokenCountsAsItsText) {
  const MarkerVocabulary v = marker_vocabulary(21);
  const auto grammar = Grammar::parse(kMarkerGrammar);
  GrammarStage stage(grammar, v.vocabulary, {v.preserved});
  EXPECT_TRUE(stage.allows(v.preserved));
  EXPECT_FALSE(stage.allows(v.other));  // the same text, not preserved
  EXPECT_TRUE(stage.allows(v.spelled));
  EXPECT_TRUE(stage.allows(3 + '<'));  // the marker spelled byte by byte
  EXPECT_FALSE(stage.allows(3 + '1'));
  const std::vector<float> logits(static_cast<size_t>(v.vocabulary->size()), 1.0f);
  const std::vector<int32_t> allowed = kept(stage, logits);
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), v.preserved), allowed.end());
  EXPECT_EQ(std::find(allowed.begin(), allowed.end(), v.other), allowed.end());
  try {
    stage.accept(v.other);
    FAIL() << "accepted a control token that is not preserved";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("a control token is allowed only when preserved"), std::string::npos)
        << error.what();
  }
  stage.accept(v.preserved);                // reads "<|tool_call|>"
  EXPECT_FALSE(stage.allows(v.preserved));  // digits now: its text does not fit
  EXPECT_FALSE(stage.allows(v.spelled));
  EXPECT_FALSE(stage.allows(0));
  try {
    stage.accept(v.preserved);
    FAIL() << "accepted the marker where the grammar wants digits";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).find("only when preserved"), std::string::npos) << error.what();
  }
  stage.accept(3 + '7');
  EXPECT_TRUE(stage.allows(0));
  EXPECT_TRUE(stage.allows(3 + '8'));
}

TEST(GrammarStage, TheMarkerSpelledWithTextTokensStaysAllowed) {
  const MarkerVocabulary v = marker_vocabulary(22);
  const auto grammar = Grammar::parse(kMarkerGrammar);
  for (const std::vector<int32_t>& preserved : {std::vector<int32_t>{}, std::vector<int32_t>{v.preserved}}) {
    GrammarStage stage(grammar, v.vocabulary, preserved);
    EXPECT_EQ(stage.allows(v.preserved), !preserved.empty());
    for (const char c : std::string("<|tool_call|>")) stage.accept(3 + static_cast<uint8_t>(c));
    stage.accept(3 + '4');
    EXPECT_TRUE(stage.allows(0));
    stage.reset();
    stage.accept(v.spelled);
    EXPECT_TRUE(stage.allows(3 + '4'));
  }
}

TEST(GrammarStage, PreservedTokensAgreeWithANaivePassInMasksAndLazyTests) {
  const MarkerVocabulary v = marker_vocabulary(23);
  const std::vector<int32_t> preserved = {v.preserved, v.json};
  GrammarStateCache::Limits tiny;
  tiny.max_states = 3;
  tiny.max_transitions = 600;
  tiny.mask_bytes = 1;
  const auto marker = Grammar::parse(kMarkerGrammar);
  const auto json = Grammar::parse(kJsonGrammar);
  std::vector<GrammarMatcher::State> json_states = states_along(json, kJsonText);
  json_states.resize(40);
  for (const GrammarStateCache::Limits& limits : {GrammarStateCache::Limits{}, tiny}) {
    SCOPED_TRACE(limits.max_states);
    expect_agreement(marker, v.vocabulary, states_along(marker, "<|tool_call|>123"), limits, preserved);
    expect_agreement(json, v.vocabulary, json_states, limits, preserved);
  }
}

TEST(SamplerChainGrammar, GreedyAndTopKTakeAPreservedTokenWhereItsTextFits) {
  const MarkerVocabulary v = marker_vocabulary(24);
  std::vector<float> logits(static_cast<size_t>(v.vocabulary->size()), 0.0f);
  logits[static_cast<size_t>(v.other)] = 9.0f;
  logits[static_cast<size_t>(v.preserved)] = 8.0f;
  logits.at(3 + '5') = 1.0f;
  for (const float temperature : {0.0f, 1.0f}) {
    SamplerParams params;
    params.grammar = Grammar::parse(kMarkerGrammar);
    params.preserved_tokens = {v.preserved};
    params.temperature = temperature;
    params.top_k = 1;
    SamplerChain chain(v.vocabulary->size(), params, v.vocabulary);
    EXPECT_TRUE(chain.preserves(v.preserved));
    EXPECT_FALSE(chain.preserves(v.other));
    EXPECT_EQ(chain.sample(logits.data()), v.preserved);
    chain.accept(v.preserved);
    EXPECT_EQ(chain.sample(logits.data()), 3 + '5');  // the marker's text cannot come again
  }
}

TEST(SamplerChain, WithoutAGrammarAPreservedTokenIsSampledLikeAnyToken) {
  const MarkerVocabulary v = marker_vocabulary(25);
  std::vector<float> logits(static_cast<size_t>(v.vocabulary->size()), 0.0f);
  logits[static_cast<size_t>(v.preserved)] = 5.0f;
  SamplerParams params;
  params.temperature = 0.0f;
  params.preserved_tokens = {v.preserved};
  SamplerChain chain(v.vocabulary->size(), params, v.vocabulary);
  EXPECT_EQ(chain.sample(logits.data()), v.preserved);
  chain.accept(v.preserved);
  EXPECT_TRUE(chain.preserves(v.preserved));
}

TEST(SamplerChain, PreservedTokensTheVocabularyRefusesAreClearErrors) {
  const MarkerVocabulary v = marker_vocabulary(26);
  const int32_t n = v.vocabulary->size();
  const std::vector<std::pair<std::vector<int32_t>, std::string>> cases = {
      {{v.spelled}, "is a text token"},
      {{0}, "ends the generation"},
      {{2}, "writes nothing"},
      {{n}, "is outside the vocabulary"},
      {{-1}, "is outside the vocabulary"},
      {{v.textless}, "without text"},
      {{v.preserved, v.preserved}, "is listed twice"},
      {{v.json, v.preserved}, "comes after a greater id"},
  };
  for (const bool with_grammar : {false, true}) {
    for (const auto& [tokens, message] : cases) {
      SamplerParams params;
      if (with_grammar) params.grammar = Grammar::parse(kMarkerGrammar);
      params.preserved_tokens = tokens;
      try {
        SamplerChain chain(n, params, v.vocabulary);
        ADD_FAILURE() << "took preserved tokens " << ::testing::PrintToString(tokens);
      } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
      }
    }
  }
  SamplerParams params;
  params.preserved_tokens = {v.preserved};
  try {
    SamplerChain chain(n, params, nullptr);
    ADD_FAILURE() << "preserved tokens without a vocabulary";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("preserved tokens need the vocabulary"), std::string::npos)
        << error.what();
  }
}

// A real control token: qwen3's <|im_start|>, which its tokenizer parses out
// of the text as one token.
TEST(GrammarStage, APreservedControlTokenOfTheQwen3Vocabulary) {
  if (!std::ifstream(kQwen3Path)) GTEST_SKIP() << "no " << kQwen3Path;
  const auto [tokenizer, vocabulary] = qwen3_vocabulary();
  const int32_t im_start = 151644;
  ASSERT_EQ(tokenizer->encode("<|im_start|>", false, true), std::vector<int32_t>{im_start});
  ASSERT_EQ(vocabulary->kind(im_start), Kind::kControl);
  EXPECT_EQ(vocabulary->bytes(im_start), "<|im_start|>");
  EXPECT_THROW(GrammarStage(Grammar::parse("root ::= \"a\"\n"), vocabulary, {151645}), std::invalid_argument);

  const auto grammar = Grammar::parse("root ::= \"<|im_start|>\" [a-z]+\n");
  GrammarStage preserving(grammar, vocabulary, {im_start});
  GrammarStage plain(grammar, vocabulary);
  std::vector<float> logits(static_cast<size_t>(vocabulary->size()), 0.0f);
  logits[static_cast<size_t>(im_start)] = 10.0f;
  EXPECT_EQ(best_kept(preserving, logits, 1), std::vector<int32_t>{im_start});
  const std::vector<int32_t> spelled = best_kept(plain, logits, 1);
  ASSERT_EQ(spelled.size(), 1u);
  EXPECT_NE(spelled[0], im_start);
  EXPECT_EQ(std::string("<|im_start|>").rfind(std::string(vocabulary->bytes(spelled[0])), 0), 0u);
  const std::vector<int32_t> with = kept(preserving, logits);
  const std::vector<int32_t> without = kept(plain, logits);
  EXPECT_NE(std::find(with.begin(), with.end(), im_start), with.end());
  EXPECT_EQ(std::find(without.begin(), without.end(), im_start), without.end());
  std::vector<int32_t> rest;
  std::set_difference(with.begin(), with.end(), without.begin(), without.end(), std::back_inserter(rest));
  EXPECT_EQ(rest, std::vector<int32_t>{im_start});

  preserving.accept(im_start);
  EXPECT_FALSE(preserving.allows(im_start));
  const std::vector<int32_t> word = tokenizer->encode("hello", false, false);
  ASSERT_FALSE(word.empty());
  EXPECT_TRUE(preserving.allows(word[0]));
}

}  // namespace
}  // namespace peak::sampling
