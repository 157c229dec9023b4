// Once constructed, a sampler chain samples, accepts and resets without touching
// the heap; a grammar matcher, once its buffers have grown, reads, snapshots and
// restores without it. This binary replaces the global operator new to count
// allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
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

}  // namespace
}  // namespace peak::sampling
