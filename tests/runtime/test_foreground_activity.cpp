// A background context's passes wait while the foreground evaluates and for
// the quiet time after its last pass; a cancellation ends the wait. The
// assertions read the order of events, never a duration: "not done yet" after
// a sleep can only fail when the wait is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"
#include "runtime/foreground_activity.h"
#include "runtime/pass_group.h"
#include "tiny_models.h"

namespace peak::runtime {
namespace {

using std::chrono::milliseconds;

const model::Model& stories() {
  static const auto m = model::Model::load(test::stories_path());
  return *m;
}

bool requested(const void* flag) { return static_cast<const std::atomic<bool>*>(flag)->load(); }

// Never requested: a background context that always waits for the foreground.
const std::atomic<bool> kNever{false};
const core::Cancellation kWaitAlways(requested, &kNever);

ContextParams params(ForegroundActivity* activity, const core::Cancellation* background) {
  ContextParams p;
  p.n_ctx = 64;
  p.n_batch = 8;
  p.n_threads = 1;
  p.activity = activity;
  p.background = background;
  return p;
}

TEST(ForegroundActivity, NothingToWaitForBeforeTheFirstPass) {
  const ForegroundActivity activity(milliseconds(60000));
  activity.wait_until_quiet(nullptr);  // would hang for a minute otherwise
  EXPECT_EQ(activity.running(), 0);
}

TEST(ForegroundActivity, WaitsForTheRunningPassAndTheQuietAfterIt) {
  ForegroundActivity activity(milliseconds(20));
  std::atomic<bool> pass_ended{false}, waited{false}, ended_before_wait_returned{false};
  std::thread waiter;
  {
    const ForegroundActivity::Pass pass(&activity);
    EXPECT_EQ(activity.running(), 1);
    waiter = std::thread([&] {
      activity.wait_until_quiet(nullptr);
      ended_before_wait_returned = pass_ended.load();
      waited = true;
    });
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_FALSE(waited.load());
    pass_ended = true;
  }
  waiter.join();
  EXPECT_TRUE(ended_before_wait_returned.load());
  EXPECT_EQ(activity.running(), 0);
}

TEST(ForegroundActivity, ACancellationEndsTheWait) {
  ForegroundActivity activity(milliseconds(60000));
  const ForegroundActivity::Pass pass(&activity);
  std::atomic<bool> cancel{false}, waited{false};
  const core::Cancellation cancellation(requested, &cancel);
  std::thread waiter([&] {
    activity.wait_until_quiet(&cancellation);
    waited = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(waited.load());
  cancel = true;
  waiter.join();  // would hang for the pass's life otherwise
  EXPECT_TRUE(waited.load());
}

// The contexts' side: a foreground context's passes are marked, and a
// background context's evaluation waits for them; both compute what a context
// without an activity computes.
TEST(ForegroundActivity, ABackgroundContextEvaluatesOnlyOnceTheForegroundIsQuiet) {
  ForegroundActivity activity(milliseconds(20));
  Context foreground(stories(), params(&activity, nullptr));
  Context background(stories(), params(&activity, &kWaitAlways));
  Context alone(stories(), params(nullptr, nullptr));
  const std::vector<int32_t> tokens = {1, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410};
  const auto n = static_cast<int64_t>(tokens.size());

  std::atomic<bool> evaluated{false};
  std::thread worker;
  {
    const ForegroundActivity::Pass pass(&activity);  // as if a foreground pass ran now
    worker = std::thread([&] {
      background.eval(tokens.data(), n);
      evaluated = true;
    });
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_FALSE(evaluated.load());
    EXPECT_EQ(background.kv().used(), 0);
  }
  worker.join();
  EXPECT_EQ(background.kv().used(), n);

  foreground.eval(tokens.data(), n);
  EXPECT_EQ(activity.running(), 0);
  alone.eval(tokens.data(), n);
  for (int64_t i = 0; i < alone.n_vocab(); ++i) {
    ASSERT_EQ(background.logits()[i], alone.logits()[i]) << i;
    ASSERT_EQ(foreground.logits()[i], alone.logits()[i]) << i;
  }

  // Handed to the foreground (a rebuilt cache swapped in), its passes no longer wait.
  background.set_background(nullptr);
  const ForegroundActivity::Pass pass(&activity);
  const int32_t next = 411;
  background.eval(&next, 1);  // would wait for `pass` otherwise
  EXPECT_EQ(background.kv().used(), n + 1);
}

// A background context whose work is cancelled, or awaited, stops waiting.
TEST(ForegroundActivity, ABackgroundContextAskedToStopWaitingEvaluatesAtOnce) {
  ForegroundActivity activity(milliseconds(60000));
  std::atomic<bool> stop{false};
  const core::Cancellation stop_waiting(requested, &stop);
  Context background(stories(), params(&activity, &stop_waiting));
  const ForegroundActivity::Pass pass(&activity);
  const int32_t tokens[] = {1, 400, 401};
  std::atomic<bool> evaluated{false};
  std::thread worker([&] {
    background.eval(tokens, 3);
    evaluated = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(evaluated.load());
  stop = true;
  worker.join();  // would wait for the pass's life otherwise
  EXPECT_EQ(background.kv().used(), 3);
}

// A member of a pass group with no activity of its own (a plain context beside
// a server's sessions) marks its passes on the group's, which the sessions'
// workers wait for. Seen from inside its evaluation: a cancellation's poll.
TEST(ForegroundActivity, AMemberOfAPassGroupMarksTheGroupsActivity) {
  PassGroupParams group_params;
  group_params.n_ctx = 64;
  group_params.n_threads = 1;
  PassGroup group(stories(), group_params);
  ContextParams p = params(nullptr, nullptr);
  p.pass_group = &group;
  Context member(stories(), p);
  struct Probe {
    const ForegroundActivity* activity;
    int most_running = 0;
    static bool poll(const void* self) {
      auto* probe = const_cast<Probe*>(static_cast<const Probe*>(self));
      probe->most_running = std::max(probe->most_running, probe->activity->running());
      return false;
    }
  } probe{&group.activity()};
  const core::Cancellation watch(Probe::poll, &probe);
  const int32_t tokens[] = {1, 400, 401};
  member.eval(tokens, 3, nullptr, &watch);
  EXPECT_EQ(probe.most_running, 1);
  EXPECT_EQ(group.activity().running(), 0);
}

}  // namespace
}  // namespace peak::runtime
