#include "bandwidth_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

// Sums 64-bit words with eight independent accumulators, so the loop is bound by
// loads, not by an add chain; the compiler vectorizes it. On x86-64 a copy is
// also compiled for AVX-512 and AVX2 and picked at run time, so the probe reads
// with the widest loads the kernels use (this file is built without -march).
#define PEAK_SUM_WORDS_BODY                                          \
  uint64_t a[8] = {};                                                \
  size_t i = 0;                                                      \
  for (; i + 8 <= n; i += 8) {                                       \
    for (int k = 0; k < 8; ++k) a[k] += p[i + static_cast<size_t>(k)]; \
  }                                                                  \
  for (; i < n; ++i) a[0] += p[i];                                   \
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];

uint64_t sum_words_generic(const uint64_t* p, size_t n) { PEAK_SUM_WORDS_BODY }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* p, size_t n) { PEAK_SUM_WORDS_BODY }
__attribute__((target("avx512f"))) uint64_t sum_words_avx512(const uint64_t* p, size_t n) { PEAK_SUM_WORDS_BODY }

using SumFn = uint64_t (*)(const uint64_t*, size_t);
SumFn pick_sum_words() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return sum_words_avx512;
  if (__builtin_cpu_supports("avx2")) return sum_words_avx2;
  return sum_words_generic;
}
uint64_t sum_words(const uint64_t* p, size_t n) {
  static const SumFn fn = pick_sum_words();
  return fn(p, n);
}
#else
uint64_t sum_words(const uint64_t* p, size_t n) { return sum_words_generic(p, n); }
#endif
#undef PEAK_SUM_WORDS_BODY

}  // namespace

double probe_read_bandwidth(size_t bytes, int n_threads, int passes) {
  const size_t words = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[words]);
  // Touch every page (and give the words values) before timing.
  for (size_t i = 0; i < words; ++i) buffer[i] = i;
  const size_t per_thread = words / static_cast<size_t>(n_threads);
  std::vector<uint64_t> sinks(static_cast<size_t>(n_threads) * 8);  // one cache line apart
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 1; t < n_threads; ++t) {
      threads.emplace_back([&, t] {
        sinks[static_cast<size_t>(t) * 8] = sum_words(buffer.get() + static_cast<size_t>(t) * per_thread, per_thread);
      });
    }
    sinks[0] = sum_words(buffer.get(), per_thread);
    for (std::thread& th : threads) th.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(per_thread * static_cast<size_t>(n_threads) * sizeof(uint64_t)) / seconds / 1e9);
  }
  // Keep the sums observable so the reads cannot be optimised away.
  volatile uint64_t keep = 0;
  for (uint64_t s : sinks) keep = keep + s;
  (void)keep;
  return best;
}
