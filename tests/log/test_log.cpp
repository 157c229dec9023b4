// The library's messages: stderr by default ("peak: <message>"), a sink the
// program sets instead, the minimum level filtering both, and writers on
// several threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "log/log.h"

namespace peak::log {
namespace {

std::vector<std::pair<Level, std::string>> g_received;

void collect(Level level, const char* message) { g_received.emplace_back(level, message); }

// Puts the module back as a process starts, whatever a test did.
class Log : public ::testing::Test {
 protected:
  void SetUp() override { g_received.clear(); }
  void TearDown() override {
    set_sink(nullptr);
    set_min_level(Level::Warn);
  }
};

TEST_F(Log, ByDefaultWarningsAndErrorsGoToStderrAndDetailDoesNot) {
  EXPECT_TRUE(enabled(Level::Error));
  EXPECT_TRUE(enabled(Level::Warn));
  EXPECT_FALSE(enabled(Level::Info));
  EXPECT_FALSE(enabled(Level::Debug));
  ::testing::internal::CaptureStderr();
  warn("PEAK_ISA=avx9 is not a known path; using avx2");
  info("loaded");
  debug("detail");
  error("broken");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "peak: PEAK_ISA=avx9 is not a known path; using avx2\npeak: broken\n");
}

TEST_F(Log, ASinkReceivesTheMessagesInsteadOfStderrUntilItIsCleared) {
  set_sink(collect);
  ::testing::internal::CaptureStderr();
  warn("first");
  error("second");
  info("dropped below the minimum level");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(g_received.size(), 2u);
  EXPECT_EQ(g_received[0].first, Level::Warn);
  EXPECT_EQ(g_received[0].second, "first");
  EXPECT_EQ(g_received[1].first, Level::Error);
  EXPECT_EQ(g_received[1].second, "second");

  set_sink(nullptr);
  ::testing::internal::CaptureStderr();
  warn("back on stderr");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "peak: back on stderr\n");
  EXPECT_EQ(g_received.size(), 2u);
}

TEST_F(Log, TheMinimumLevelLetsThroughItsOwnAndTheMoreSevere) {
  set_sink(collect);
  set_min_level(Level::Debug);
  debug("d");
  info("i");
  set_min_level(Level::Error);
  warn("w");
  error("e");
  ASSERT_EQ(g_received.size(), 3u);
  EXPECT_EQ(g_received[0].second, "d");
  EXPECT_EQ(g_received[1].second, "i");
  EXPECT_EQ(g_received[2].second, "e");
}

std::atomic<int> g_counted{0};
void count(Level, const char*) { g_counted.fetch_add(1, std::memory_order_relaxed); }

// Run under ThreadSanitizer in CI: writers and a thread switching the sink
// and the level share no unsynchronised state.
TEST_F(Log, ThreadsWriteWhileAnotherSwitchesTheSinkAndTheLevel) {
  set_min_level(Level::Debug);
  set_sink(count);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([] {
      for (int i = 0; i < 1000; ++i) debug("message");
    });
  }
  for (int i = 0; i < 1000; ++i) set_min_level(i % 2 ? Level::Debug : Level::Info);
  set_min_level(Level::Debug);
  for (std::thread& w : writers) w.join();
  EXPECT_GT(g_counted.load(), 0);
  EXPECT_LE(g_counted.load(), 4000);
}

}  // namespace
}  // namespace peak::log
