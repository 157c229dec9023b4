// Tokenizer const methods called from many threads at once: its own suite, so
// the ThreadSanitizer job runs it without the single-threaded tokenizer tests.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "vocab_fixtures.h"

namespace peak::tokenizer {
namespace {

using testing_support::read_vocab_cases;
using testing_support::vocab_tokenizer;

// const methods may be called from many threads at once on one Tokenizer.
TEST(ThreadSafety, ConcurrentEncodesAgreeWithLlamaCpp) {
  const Tokenizer& qwen = vocab_tokenizer("qwen3");
  const auto cases = read_vocab_cases("qwen3");
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        for (const auto& test_case : cases) {
          if (qwen.encode(test_case.text, false, false) != test_case.ids) ++mismatches;
          if (qwen.detokenize(test_case.ids, false, false) != test_case.text) ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace peak::tokenizer
