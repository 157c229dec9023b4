#include "runtime/foreground_activity.h"

#include <algorithm>
#include <thread>

namespace peak::runtime {

namespace {
constexpr std::chrono::milliseconds kPoll{5};
}

ForegroundActivity::Pass::Pass(ForegroundActivity* activity) : activity_(activity) {
  if (activity_) activity_->running_.fetch_add(1);
}

ForegroundActivity::Pass::~Pass() {
  if (!activity_) return;
  // The end first: a waiting worker that sees no pass running also sees it.
  activity_->last_end_ns_.store(now_ns());
  activity_->running_.fetch_sub(1);
}

int64_t ForegroundActivity::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ForegroundActivity::wait_until_quiet(const core::Cancellation* cancel) const {
  const int64_t quiet_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(quiet_).count();
  for (;;) {
    if (cancel && cancel->requested()) return;
    if (running_.load() == 0) {
      const int64_t since = now_ns() - last_end_ns_.load();
      if (since >= quiet_ns) return;
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(kPoll, std::chrono::nanoseconds(quiet_ns - since)));
    } else {
      std::this_thread::sleep_for(kPoll);
    }
  }
}

}  // namespace peak::runtime
