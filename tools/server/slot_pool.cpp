#include "slot_pool.h"

#include <chrono>

namespace peak_server {

SlotPool::SlotPool(size_t n_slots, size_t max_queue) : busy_(n_slots, false), last_used_(n_slots, 0), max_queue_(max_queue) {}

void SlotPool::dispatch() {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->slot != SIZE_MAX) continue;
    size_t best = SIZE_MAX;
    long long best_score = -1;
    for (size_t s = 0; s < busy_.size(); ++s) {
      if (busy_[s]) continue;
      const long long score = (*it->score)(s);
      if (score < 0) continue;
      if (best == SIZE_MAX || score > best_score || (score == best_score && last_used_[s] < last_used_[best])) {
        best = s;
        best_score = score;
      }
    }
    if (best == SIZE_MAX) continue;  // nothing it can use now; the next one may
    busy_[best] = true;
    last_used_[best] = ++clock_;
    it->slot = best;
  }
}

SlotPool::Outcome SlotPool::acquire(const Score& score, const std::function<bool()>& client_gone, size_t* slot,
                                    int poll_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return Outcome::Stopping;
  // Waiting requests beyond those that could start at once (one per idle slot).
  size_t idle = 0;
  for (const bool b : busy_) idle += b ? 0 : 1;
  size_t waiting = 0;
  for (const Waiter& w : queue_) waiting += w.slot == SIZE_MAX ? 1 : 0;
  if (idle == 0 && waiting >= max_queue_) return Outcome::QueueFull;
  auto me = queue_.insert(queue_.end(), Waiter{&score});
  dispatch();
  for (;;) {
    if (me->slot != SIZE_MAX) {
      *slot = me->slot;
      queue_.erase(me);
      return Outcome::Acquired;
    }
    if (stopping_) {
      queue_.erase(me);
      return Outcome::Stopping;
    }
    lock.unlock();
    const bool gone = client_gone && client_gone();
    lock.lock();
    if (gone && me->slot == SIZE_MAX) {
      queue_.erase(me);
      return Outcome::Gone;
    }
    if (me->slot == SIZE_MAX) assigned_.wait_for(lock, std::chrono::milliseconds(poll_ms));
  }
}

void SlotPool::release(size_t slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_[slot] = false;
    last_used_[slot] = ++clock_;
    dispatch();
  }
  assigned_.notify_all();
}

void SlotPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  assigned_.notify_all();
}

size_t SlotPool::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const bool b : busy_) n += b ? 1 : 0;
  return n;
}

size_t SlotPool::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const Waiter& w : queue_) n += w.slot == SIZE_MAX ? 1 : 0;
  return n;
}

}  // namespace peak_server
