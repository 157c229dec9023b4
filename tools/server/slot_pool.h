// Who runs on which slot: N slots (one conversation context each), a bounded
// first-come-first-served queue of requests waiting for one, and the choice of
// slot for each (the caller scores the idle slots, e.g. by how much of its
// prompt a slot already holds).
//
// Fairness: a freed slot goes to the oldest waiting request that can use an
// idle slot at all (score >= 0); a request that can use only one particular
// slot (a conversation pinned to it) does not hold back those behind it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <vector>

namespace peak_server {

class SlotPool {
 public:
  // Higher is better; negative: this request cannot run on the slot. Called
  // with the pool's lock held, only for idle slots (whose state no request
  // changes meanwhile); it must not call back into the pool.
  using Score = std::function<long long(size_t slot)>;

  enum class Outcome {
    Acquired,   // *slot is this request's until release()
    QueueFull,  // all slots busy and max_queue requests already waiting: 503
    Gone,       // client_gone() turned true while waiting: the request left the queue
    Stopping,   // the server is shutting down
  };

  SlotPool(size_t n_slots, size_t max_queue);

  // Waits for a slot. `client_gone` is polled every poll_ms while waiting.
  Outcome acquire(const Score& score, const std::function<bool()>& client_gone, size_t* slot, int poll_ms = 50);
  void release(size_t slot);
  // Wakes every waiting request with Stopping; later acquires get Stopping too.
  void stop();

  size_t n_slots() const { return busy_.size(); }
  size_t busy() const;
  size_t queued() const;

 private:
  struct Waiter {
    const Score* score;
    size_t slot = SIZE_MAX;  // set when assigned
  };
  // Hands idle slots to waiters, oldest first. Lock held.
  void dispatch();

  mutable std::mutex mutex_;
  std::condition_variable assigned_;
  std::vector<bool> busy_;
  std::vector<uint64_t> last_used_;  // ties between equal scores go to the least recently used slot
  uint64_t clock_ = 0;
  std::list<Waiter> queue_;
  size_t max_queue_;
  bool stopping_ = false;
};

}  // namespace peak_server
