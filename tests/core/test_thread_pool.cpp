// The thread pool: every thread runs, barriers order writes, thread counts can
// change from one run to the next, and sleeping workers wake up.
#include <gtest/gtest.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/thread_pool.h"

namespace peak::core {
namespace {

struct PhaseCheck {
  ThreadPool* pool;
  std::vector<int>* slots;  // one per thread
  std::atomic<int>* errors;
  int phases;
};

// Each phase every thread writes its slot, then after a barrier checks that all
// slots hold this phase: a barrier that let a thread through early fails it.
void phased_writes(void* context, int thread_index, int n_threads) {
  auto& check = *static_cast<PhaseCheck*>(context);
  for (int phase = 1; phase <= check.phases; ++phase) {
    (*check.slots)[static_cast<size_t>(thread_index)] = phase;
    check.pool->barrier();
    for (int t = 0; t < n_threads; ++t) {
      if ((*check.slots)[static_cast<size_t>(t)] != phase) check.errors->fetch_add(1);
    }
    check.pool->barrier();
  }
}

TEST(CoreThreadPool, BarriersOrderEveryPhaseForEachThreadCount) {
  ThreadPool pool(4);
  for (int round = 0; round < 10; ++round) {
    for (int n_threads = 1; n_threads <= 4; ++n_threads) {
      std::vector<int> slots(4, 0);
      std::atomic<int> errors{0};
      PhaseCheck check{&pool, &slots, &errors, 20};
      pool.run(n_threads, phased_writes, &check);
      ASSERT_EQ(errors.load(), 0) << n_threads << " threads";
      for (int t = 0; t < n_threads; ++t) EXPECT_EQ(slots[static_cast<size_t>(t)], 20);
    }
  }
}

void count_thread(void* context, int thread_index, int) {
  static_cast<std::atomic<int>*>(context)[thread_index].fetch_add(1);
}

TEST(CoreThreadPool, SleepingWorkersWakeForTheNextRun) {
  ThreadPool pool(3, std::chrono::microseconds(0));  // sleep at once
  std::atomic<int> counts[3] = {};
  for (int run = 0; run < 200; ++run) {
    pool.run(1 + run % 3, count_thread, counts);
    if (run % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(counts[0].load(), 200);
  EXPECT_EQ(counts[1].load(), 133);
  EXPECT_EQ(counts[2].load(), 66);
  EXPECT_THROW(pool.run(4, count_thread, counts), std::invalid_argument);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Between graphs the workers spin only briefly, then sleep: an idle pool costs
// (almost) no CPU.
TEST(CoreThreadPool, IdleWorkersSleep) {
  ThreadPool pool(4, std::chrono::microseconds(100));
  std::atomic<int> counts[4] = {};
  pool.run(4, count_thread, counts);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // spinning ends
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.02) << "three spinning workers would use ~0.3 s";
  pool.run(4, count_thread, counts);
  for (auto& count : counts) EXPECT_EQ(count.load(), 2);
}

#if defined(__linux__)
int own_nice_value() { return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))); }

void record_nice_value(void* context, int thread_index, int) {
  static_cast<int*>(context)[thread_index] = own_nice_value();
}

// A pool built on a low-priority thread has low-priority workers; restarted
// from another thread, they take that one's priority and still run every job.
TEST(CoreThreadPool, RestartedWorkersTakeTheirStartersPriority) {
  const int ours = own_nice_value();
  // Run at nice 19 (a build at the lowest priority), no thread can be lowered
  // further, so the change this test looks for cannot be seen.
  if (ours >= 19) GTEST_SKIP() << "the test process already runs at the lowest priority";
  std::unique_ptr<ThreadPool> pool;
  std::thread background([&pool] {
    lower_current_thread_priority();
    pool = std::make_unique<ThreadPool>(3);
  });
  background.join();
  int nice_values[3] = {};
  pool->run(3, record_nice_value, nice_values);
  EXPECT_EQ(nice_values[1], 19);
  EXPECT_EQ(nice_values[2], 19);
  pool->restart_workers();
  pool->run(3, record_nice_value, nice_values);
  for (const int value : nice_values) EXPECT_EQ(value, ours);
  std::atomic<int> counts[3] = {};
  pool->restart_workers();
  pool->run(3, count_thread, counts);
  pool->run(2, count_thread, counts);
  EXPECT_EQ(counts[0].load(), 2);
  EXPECT_EQ(counts[1].load(), 2);
  EXPECT_EQ(counts[2].load(), 1);
}
#endif

}  // namespace
}  // namespace peak::core
