// Once constructed, a sampler chain samples, accepts and resets without touching
// the heap; a grammar matcher, once its buffers have grown, reads, snapshots and
// restores without it, and a chain under a grammar samples without it once
// the grammar's states are known. This binary replaces the global operator new to count
// allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/grammar_vocabulary.h"
#include "sampling/pcg32.h"
#include "sampling/sampler_chain.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
int* volatile g_probe = nullptr;  // volatile: the probe allocation cannot be elided

void* counted_allocation(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace peak::sampling {
namespace {

TEST(SamplingNoAlloc, CountingHookSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  g_probe = new int(3);
  g_counting = false;
  delete g_probe;
  EXPECT_EQ(g_allocations.load(), 1);
}

void expect_no_allocation_while_sampling(const SamplerParams& params) {
  const int n_vocab = 32000;
  Pcg32 logits_source(11);
  std::vector<std::vector<float>> logits(4, std::vector<float>(n_vocab));
  for (auto& row : logits) {
    for (float& l : row) l = static_cast<float>(logits_source.next_unit_double() * 20.0 - 10.0);
  }
  SamplerChain chain(n_vocab, params);

  g_allocations = 0;
  g_counting = true;
  for (int step = 0; step < 64; ++step) {
    chain.accept(chain.sample(logits[static_cast<size_t>(step) % logits.size()].data()));
    if (step == 32) chain.reset();
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST(SamplingNoAlloc, EveryStageActive) {
  SamplerParams params;
  params.top_p = 0.9f;
  params.repeat_penalty = 1.1f;
  params.frequency_penalty = 0.2f;
  params.presence_penalty = 0.1f;
  expect_no_allocation_while_sampling(params);
}

TEST(SamplingNoAlloc, NucleusOverTheWholeVocabulary) {
  SamplerParams params;  // top-p alone over 32000 candidates: its chunked sort runs long
  params.top_k = 0;
  params.min_p = 0.0f;
  params.top_p = 0.999f;
  params.temperature = 3.0f;
  expect_no_allocation_while_sampling(params);
}

TEST(SamplingNoAlloc, Greedy) {
  SamplerParams params;
  params.temperature = 0.0f;
  params.repeat_penalty = 1.3f;
  expect_no_allocation_while_sampling(params);
}

// Speculative sampling's steps: a drafting copy of the chain takes the
// target's penalty window, draws and reports its probability; the target
// keeps or resamples against the draft's distribution.
TEST(SamplingNoAlloc, DraftingAndVerifying) {
  const int n_vocab = 32000;
  Pcg32 logits_source(13);
  std::vector<float> target(n_vocab), draft(n_vocab), q(n_vocab, 0.0f);
  for (int i = 0; i < n_vocab; ++i) {
    target[static_cast<size_t>(i)] = static_cast<float>(logits_source.next_unit_double() * 20.0 - 10.0);
    draft[static_cast<size_t>(i)] =
        target[static_cast<size_t>(i)] + static_cast<float>(logits_source.next_unit_double());
  }
  SamplerParams params;
  params.repeat_penalty = 1.1f;
  SamplerChain chain(n_vocab, params);
  SamplerChain drafting(chain);
  drafting.split_random_stream();
  g_allocations = 0;
  g_counting = true;
  for (int step = 0; step < 64; ++step) {
    drafting.take_penalty_window(chain);
    const int32_t x = drafting.sample(draft.data());
    q[static_cast<size_t>(x)] = drafting.last_probability(x);
    chain.accept(chain.sample_against_draft(target.data(), x, q.data()));
    q[static_cast<size_t>(x)] = 0.0f;
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST(SamplingNoAlloc, GrammarMatcherOnceWarm) {
  const std::shared_ptr<const Grammar> grammar = Grammar::parse(R"(root ::= value
value ::= "{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws | "[" ws (value ("," ws value)*)? "]" ws |
  string | [0-9]+ ws
string ::= "\"" [^"\\]* "\"" ws
ws ::= [ \n]*
)");
  const std::string text = "{\"a\": [1, 22, {\"b\": [[], {}]}], \"c\u00e9\": \"d\"} ";
  GrammarMatcher matcher(grammar);
  const GrammarMatcher::State start = matcher.state();
  GrammarMatcher::State halfway = start;
  bool complete = true;
  const auto read_twice = [&] {
    matcher.restore(start);
    for (size_t i = 0; i < text.size(); ++i) {
      matcher.accept_byte(static_cast<uint8_t>(text[i]));
      if (i == text.size() / 2) halfway = matcher.state();
    }
    complete = complete && matcher.is_complete();
    matcher.restore(halfway);
    matcher.accept_bytes(std::string_view(text).substr(text.size() / 2 + 1));
    complete = complete && matcher.is_complete();
  };
  read_twice();  // the buffers grow
  read_twice();
  g_allocations = 0;
  g_counting = true;
  read_twice();
  g_counting = false;
  EXPECT_TRUE(complete);
  EXPECT_EQ(g_allocations.load(), 0);
}

// Under a grammar with a preserved control token, on the mask's path and the
// lazy one: once the grammar's cache has learnt the states and the matcher's
// two state buffers (it swaps them at each byte) have both grown, sampling and
// accepting allocate nothing.
TEST(SamplingNoAlloc, GrammarWithAPreservedTokenOnceWarm) {
  using Kind = GrammarVocabulary::Kind;
  std::vector<GrammarVocabulary::Token> tokens = {{"", Kind::kEndOfGeneration}};
  for (int b = 0; b < 256; ++b) tokens.push_back({std::string(1, static_cast<char>(b)), Kind::kText});
  const int32_t marker = static_cast<int32_t>(tokens.size());
  tokens.push_back({"<|tool_call|>", Kind::kControl});
  tokens.push_back({"<|tool_call|>", Kind::kControl});  // not preserved
  const auto vocabulary = std::make_shared<const GrammarVocabulary>(std::move(tokens));
  std::vector<float> logits(static_cast<size_t>(vocabulary->size()));
  Pcg32 rng(3);
  for (float& l : logits) l = static_cast<float>(rng.next_unit_double());
  logits[static_cast<size_t>(marker) + 1] = 9.0f;
  logits[static_cast<size_t>(marker)] = 8.0f;
  for (const float temperature : {0.0f, 1.0f}) {
    SamplerParams params;
    params.grammar = Grammar::parse("root ::= \"<|tool_call|>\" [0-9]+\n");
    params.preserved_tokens = {marker};
    params.temperature = temperature;
    params.top_k = temperature == 0.0f ? 40 : 0;  // greedy tests lazily, the whole distribution takes the mask
    SamplerChain chain(vocabulary->size(), params, vocabulary);
    std::vector<int32_t> sampled;
    sampled.reserve(16);
    const auto run = [&] {
      chain.reset();
      sampled.clear();
      for (int i = 0; i < 12; ++i) {
        sampled.push_back(chain.sample(logits.data()));
        chain.accept(sampled.back());
      }
    };
    run();  // the cache learns the states; the matcher's buffers grow
    run();
    g_allocations = 0;
    g_counting = true;
    run();
    g_counting = false;
    EXPECT_EQ(g_allocations.load(), 0) << "temperature " << temperature;
    EXPECT_EQ(sampled.front(), marker);
  }
}

}  // namespace
}  // namespace peak::sampling
