#include "core/thread_pool.h"

#include <stdexcept>

#if defined(__linux__)
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

// Spins on `done`, pausing the core; after a few microseconds yields the time
// slice instead, so that on an oversubscribed machine (more runnable threads than
// cores) the thread we wait for gets to run. On an idle machine yield returns at
// once and costs little more than a pause. Spinning much longer before yielding
// made barriers on a loaded machine about ten times slower.
constexpr int kSpinRoundsBeforeYield = 128;

template <typename Condition>
inline void spin_until(Condition done) {
  for (int round = 0; !done(); ++round) {
    if (round < kSpinRoundsBeforeYield) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
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
    busy_workers_.store(n_threads - 1, std::memory_order_relaxed);
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
    spin_until([this] { return busy_workers_.load(std::memory_order_acquire) == 0; });
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
    barrier_generation_.fetch_add(1, std::memory_order_release);
    return;
  }
  spin_until([&] { return barrier_generation_.load(std::memory_order_acquire) != generation; });
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
      busy_workers_.fetch_sub(1, std::memory_order_release);
    }
  }
}

}  // namespace peak::core
