// The passes of a session's foreground (the user's turns) against those of its
// background work (writing a summary, rebuilding a cache) on the same cores and
// memory bus. A pass of each at once slows the user's tokens markedly, even
// with the worker's threads at the lowest priority (they take every moment
// the foreground's threads sleep, and the memory bandwidth with it); a
// background context therefore starts each pass only once the foreground has
// been quiet for a while: between the user's turns, while the user reads and
// types.
//
// Thread-safe. The foreground's side (Pass) is two atomic operations and a
// clock read per pass: no lock, no allocation.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/executor.h"

namespace peak::runtime {

class ForegroundActivity {
 public:
  // Longer than the foreground's gaps inside a turn (sampling, a streamed
  // piece written out, a template rendered): the worker waits out a whole turn.
  static constexpr std::chrono::milliseconds kDefaultQuiet{100};

  explicit ForegroundActivity(std::chrono::milliseconds quiet = kDefaultQuiet) : quiet_(quiet) {}
  ForegroundActivity(const ForegroundActivity&) = delete;
  ForegroundActivity& operator=(const ForegroundActivity&) = delete;

  // One forward pass of the foreground, from construction to destruction.
  class Pass {
   public:
    explicit Pass(ForegroundActivity* activity);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    ForegroundActivity* activity_;
  };

  // For a background pass: returns once no foreground pass runs and none has
  // ended for `quiet`, or once `cancel` (may be null) is requested. Polls
  // every few milliseconds, so a waiting worker costs no CPU to speak of.
  void wait_until_quiet(const core::Cancellation* cancel) const;

  // Foreground passes running now (for tests).
  int running() const { return running_.load(); }

 private:
  static int64_t now_ns();

  const std::chrono::milliseconds quiet_;
  std::atomic<int> running_{0};
  std::atomic<int64_t> last_end_ns_{INT64_MIN / 2};  // long ago
};

}  // namespace peak::runtime
