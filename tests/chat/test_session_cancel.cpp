// A turn cancelled while its message is evaluated (the abort flag, or the
// library's own cancel flag, set when the turn starts) fails with Cancelled
// and leaves the session as it was, as any failed turn does: the same cells,
// segments, statistics and log, before and after making room dropped
// messages, and the conversation goes on as in a session that never had it.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "chat/chat_session.h"
#include "model/model.h"
#include "stories_session.h"

namespace peak::chat {
namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(testing::kStoriesPath);
  return *m;
}

void expect_same_session(const ChatSession& live, const ChatSession& control, int turn) {
  EXPECT_EQ(live.cached_tokens(), control.cached_tokens()) << "turn " << turn;
  EXPECT_EQ(live.context().kv().positions(), control.context().kv().positions()) << "turn " << turn;
  EXPECT_EQ(live.context().kv().snapshot(), control.context().kv().snapshot()) << "turn " << turn;
  EXPECT_EQ(live.stats().turns, control.stats().turns) << "turn " << turn;
  EXPECT_EQ(live.stats().dropped_total, control.stats().dropped_total) << "turn " << turn;
  EXPECT_EQ(live.log().size(), control.log().size()) << "turn " << turn;
  EXPECT_EQ(live.dropped_text(), control.dropped_text()) << "turn " << turn;
}

TEST(SessionCancel, ATurnCancelledDuringItsMessageLeavesTheSessionAsItWas) {
  const SessionSettings settings = testing::small_stories_settings(MemoryMode::Ssskv);
  ChatSession live(stories(), settings), control(stories(), settings);
  const std::string long_message = "A very long story about a cat, a dog, a bird and the big blue sea.";
  for (int turn = 0; turn < 14; ++turn) {
    if (turn == 2 || turn == 9) {
      // Turn 9's message cannot fit without dropping messages first.
      EXPECT_EQ(control.stats().recent_tokens + 20 > settings.recent_max, turn == 9);
      runtime::GenerateOptions aborted;
      aborted.max_tokens = 12;
      volatile int abort_flag = 1;
      aborted.abort_flag = &abort_flag;
      EXPECT_THROW(live.chat(long_message, aborted), runtime::Cancelled);
      expect_same_session(live, control, turn);

      runtime::GenerateOptions cancelled;
      cancelled.max_tokens = 12;
      std::atomic<int> cancel{1};
      cancelled.cancel = &cancel;
      EXPECT_THROW(live.chat(long_message, cancelled), runtime::Cancelled);
      expect_same_session(live, control, turn);
    }
    EXPECT_EQ(testing::answer(live, testing::kStoryLines[turn % 5], 12),
              testing::answer(control, testing::kStoryLines[turn % 5], 12))
        << "turn " << turn;
  }
  EXPECT_GT(live.stats().dropped_total, 0);
}

}  // namespace
}  // namespace peak::chat
