// A pool of persistent worker threads for the executor: one wake-up per graph,
// a cheap barrier between dependent nodes, no locks or allocation while running.
// A thread that waits inside a run (at a barrier, or the caller for the
// workers) spins for 10-50 microseconds (adapted per thread to how its waits
// end, thread_pool.cpp), then sleeps on a futex (Linux and
// Android; a yield loop elsewhere) until the thread that ends the wait wakes it.
//
// Idle workers spin for a short while after each job (the next token's graph
// usually follows quickly), then sleep on a condition variable so an idle
// session costs no CPU. One run() at a time: a pool serves one caller thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace peak::core {

// The hardware's thread count, at least 1: what a thread count of 0 stands for.
int hardware_threads();

// Gives the calling thread the lowest scheduling priority (nice 19), for work
// that should only use time the forward passes leave; threads it creates
// afterwards inherit it. Only on Linux and Android, where the priority is a
// thread's own; a no-op elsewhere.
void lower_current_thread_priority();

class ThreadPool {
 public:
  // thread_index is 0 for the calling thread, 1.. for the workers.
  using Task = void (*)(void* context, int thread_index, int n_threads);

  // Room for `max_threads` threads per run: the caller plus max_threads - 1 workers.
  explicit ThreadPool(int max_threads,
                      std::chrono::microseconds spin_before_sleep = std::chrono::microseconds(200));
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int max_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(context, i, n_threads) for i in [0, n_threads), i = 0 on the calling
  // thread, and returns once every thread finished. 1 <= n_threads <= max_threads().
  // `task` must not throw.
  void run(int n_threads, Task task, void* context);

  // Gives the calling thread and every worker the lowest scheduling priority
  // (lower_current_thread_priority), for a pool that serves only background
  // work; call it from the thread that runs the pool's jobs, between runs.
  void lower_priority();
  // Joins the workers and starts them again from the calling thread: threads
  // take their creator's priority, so a pool built on a low-priority thread
  // runs at the caller's from then on. Between runs; throws as the constructor.
  void restart_workers();

  // Inside a task: returns once all n_threads threads of the current run reached it;
  // what each wrote before is then visible to all.
  void barrier();

 private:
  void start_workers(int n_workers);
  // Runs the jobs that follow `seen_job` until told to exit.
  void worker_loop(int thread_index, uint32_t seen_job);
  // Tells the workers to exit and joins them.
  void stop_workers();
  // Waits until job_ differs from `seen` and returns the new value.
  uint32_t wait_for_job(uint32_t seen);

  std::vector<std::thread> workers_;
  const std::chrono::microseconds spin_before_sleep_;

  // The current job, written by run() before job_ changes. Only the workers that
  // take part read them, and run() waits for those before writing the next job.
  Task task_ = nullptr;
  void* context_ = nullptr;
  int n_threads_ = 1;  // of the current run, for barrier()

  // A job counter in the high bits and the job's thread count in the low 8 bits,
  // so a worker learns whether it takes part from the same load that wakes it
  // (n_threads_ may already belong to a later job it does not take part in).
  // A thread count of 0 tells the workers to exit.
  static constexpr uint32_t kThreadCountBits = 8;
  std::atomic<uint32_t> job_{0};
  std::atomic<uint32_t> busy_workers_{0};
  std::atomic<int> done_sleepers_{0};  // the caller, asleep until busy_workers_ is 0

  alignas(64) std::atomic<uint32_t> barrier_arrived_{0};
  alignas(64) std::atomic<uint32_t> barrier_generation_{0};
  std::atomic<int> barrier_sleepers_{0};

  std::atomic<int> sleepers_{0};
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
};

}  // namespace peak::core
