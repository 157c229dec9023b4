#include "core/thread_pool.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace peak::core {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a thread that waits (at a barrier, or the caller for the workers
// to finish) spins before it sleeps on the futex, per thread and adapted to
// how its waits end: one that ends while spinning lengthens the next spin by
// kSpinGrowth (up to kMaxSpin), one that outlasts it halves it (down to
// kMinSpin). While both threads have a core, the imbalance at a decode
// barrier often exceeds 10 us, and a sleeper's wake-up (an interrupt to
// another core, through the hypervisor on a VM) costs more than the spin it
// saves; when more threads than cores take turns, the partner is often
// descheduled for a slice, and spinning then only keeps it off the core.
// The budget climbs in the first case and stays near kMinSpin in the second.
//
// Sleeping, not yielding: a yield hands the core to any runnable thread for
// a whole slice, a nice-19 one included, and then cost the barriers that
// outlast the spin (a few microseconds of imbalance between threads are
// common) milliseconds each, so decode beside a low-priority process (a
// build, or the session's own summary worker) slowed several times over. A
// sleeper is woken by the thread that ends the wait and takes its core back
// from a lower-priority one at once.
constexpr std::chrono::microseconds kMinSpin{10};
constexpr std::chrono::microseconds kMaxSpin{50};
constexpr std::chrono::microseconds kSpinGrowth{2};

// Sleeps until woken if `word` still holds `value` (futex); elsewhere yields.
void sleep_while_equal(const std::atomic<uint32_t>& word, uint32_t value) {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
#else
  (void)word;
  (void)value;
  std::this_thread::yield();
#endif
}

void wake_sleepers(std::atomic<uint32_t>& word) {
#if defined(__linux__)
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

// Returns once `word` no longer holds `value`: spins first, then sleeps on it,
// counted in `sleepers` so that whoever changes it knows to wake them.
void wait_while_equal(const std::atomic<uint32_t>& word, uint32_t value, std::atomic<int>& sleepers) {
  if (word.load(std::memory_order_acquire) != value) return;
  thread_local std::chrono::microseconds spin = kMinSpin;
  const auto sleep_after = std::chrono::steady_clock::now() + spin;
  for (int round = 0; word.load(std::memory_order_acquire) == value; ++round) {
    cpu_relax();
    if (round % 16 == 15 && std::chrono::steady_clock::now() > sleep_after) {
      // seq_cst pairs with the writer's: either it sees us counted or we see its value.
      sleepers.fetch_add(1);
      while (word.load() == value) sleep_while_equal(word, value);
      sleepers.fetch_sub(1);
      spin = std::max(kMinSpin, spin / 2);
      return;
    }
  }
  spin = std::min(kMaxSpin, spin + kSpinGrowth);
}

}  // namespace

int hardware_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void lower_current_thread_priority() {
#if defined(__linux__)
  // Linux applies a PRIO_PROCESS priority to the one thread the id names.
  // Lowering it needs no privilege; failing leaves the thread as it was.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
#endif
}

ThreadPool::ThreadPool(int max_threads, std::chrono::microseconds spin_before_sleep)
    : spin_before_sleep_(spin_before_sleep) {
  if (max_threads < 1 || max_threads >= (1 << kThreadCountBits)) {
    throw std::invalid_argument("ThreadPool: max_threads must be in [1, 255]");
  }
  start_workers(max_threads - 1);
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::start_workers(int n_workers) {
  workers_.reserve(static_cast<size_t>(n_workers));
  const uint32_t current_job = job_.load();  // the workers wait for the next one
  try {
    for (int i = 1; i <= n_workers; ++i) workers_.emplace_back([this, i, current_job] { worker_loop(i, current_job); });
  } catch (...) {  // the system refused a thread: the ones started must not outlive the pool
    stop_workers();
    throw;
  }
}

void ThreadPool::restart_workers() {
  const int n_workers = static_cast<int>(workers_.size());
  stop_workers();
  start_workers(n_workers);
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    job_.store(((job_.load() >> kThreadCountBits) + 1) << kThreadCountBits);
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::run(int n_threads, Task task, void* context) {
  if (n_threads < 1 || n_threads > max_threads()) {
    throw std::invalid_argument("ThreadPool::run: n_threads out of range");
  }
  task_ = task;
  context_ = context;
  n_threads_ = n_threads;
  if (n_threads > 1) {
    busy_workers_.store(static_cast<uint32_t>(n_threads - 1), std::memory_order_relaxed);
    // seq_cst pairs with the sleepers_ increment in wait_for_job: either the
    // worker sees the new job or we see it asleep and wake it.
    const uint32_t counter = (job_.load(std::memory_order_relaxed) >> kThreadCountBits) + 1;
    job_.store((counter << kThreadCountBits) | static_cast<uint32_t>(n_threads));
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      wake_.notify_all();
    }
  }
  task(context, 0, n_threads);
  if (n_threads > 1) {
    for (uint32_t busy = busy_workers_.load(std::memory_order_acquire); busy != 0;
         busy = busy_workers_.load(std::memory_order_acquire)) {
      wait_while_equal(busy_workers_, busy, done_sleepers_);
    }
  }
}

void ThreadPool::lower_priority() {
  run(max_threads(), [](void*, int, int) { lower_current_thread_priority(); }, nullptr);
}

void ThreadPool::barrier() {
  const auto n = static_cast<uint32_t>(n_threads_);
  if (n == 1) return;
  const uint32_t generation = barrier_generation_.load(std::memory_order_acquire);
  if (barrier_arrived_.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
    barrier_arrived_.store(0, std::memory_order_relaxed);
    barrier_generation_.fetch_add(1);
    if (barrier_sleepers_.load() > 0) wake_sleepers(barrier_generation_);
    return;
  }
  wait_while_equal(barrier_generation_, generation, barrier_sleepers_);
}

uint32_t ThreadPool::wait_for_job(uint32_t seen) {
  const auto spin_end = std::chrono::steady_clock::now() + spin_before_sleep_;
  for (int round = 0; job_.load(std::memory_order_acquire) == seen; ++round) {
    cpu_relax();
    // Reading the clock costs more than a pause: check it every 64 rounds.
    if (round % 64 == 63 && std::chrono::steady_clock::now() > spin_end) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return job_.load() != seen; });
      sleepers_.fetch_sub(1);
    }
  }
  return job_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop(int thread_index, uint32_t seen_job) {
  const uint32_t thread_count_mask = (1u << kThreadCountBits) - 1;
  for (uint32_t job = wait_for_job(seen_job);; job = wait_for_job(job)) {
    const auto n_threads = static_cast<int>(job & thread_count_mask);
    if (n_threads == 0) return;
    if (thread_index < n_threads) {
      task_(context_, thread_index, n_threads);
      if (busy_workers_.fetch_sub(1) == 1 && done_sleepers_.load() > 0) wake_sleepers(busy_workers_);
    }
  }
}

}  // namespace peak::core
