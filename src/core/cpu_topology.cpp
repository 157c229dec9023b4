#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // sched_getaffinity and the CPU_* macros
#endif

#include "core/cpu_topology.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/thread_pool.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace peak::core {
namespace {

// The slowest kind of core is left out below this share of the fastest.
constexpr double kSlowShare = 0.8;

// A positive integer from the first line of a sysfs file; 0 when the file is
// missing, unreadable or holds anything else.
uint64_t read_value(const std::string& path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (!(in >> value)) return 0;
  return value;
}

// Each CPU's `leaf` under <root>/devices/system/cpu/cpuN/, or an empty list
// when one of them has none.
std::vector<uint64_t> read_speeds(const std::string& root, const std::vector<int>& cpus, const char* leaf) {
  std::vector<uint64_t> speeds;
  for (const int cpu : cpus) {
    const uint64_t v = read_value(root + "/devices/system/cpu/cpu" + std::to_string(cpu) + "/" + leaf);
    if (v == 0) return {};
    speeds.push_back(v);
  }
  return speeds;
}

}  // namespace

std::vector<int> allowed_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    if (!cpus.empty()) return cpus;
  }
#endif
  std::vector<int> cpus(static_cast<size_t>(hardware_threads()));
  for (size_t i = 0; i < cpus.size(); ++i) cpus[i] = static_cast<int>(i);
  return cpus;
}

int fast_core_count(const std::string& sysfs_root, const std::vector<int>& cpus) {
  if (cpus.empty()) return 1;
  std::vector<uint64_t> speeds = read_speeds(sysfs_root, cpus, "cpu_capacity");
  if (speeds.empty()) speeds = read_speeds(sysfs_root, cpus, "cpufreq/cpuinfo_max_freq");
  if (speeds.empty()) return static_cast<int>(cpus.size());
  const uint64_t fastest = *std::max_element(speeds.begin(), speeds.end());
  const uint64_t slowest = *std::min_element(speeds.begin(), speeds.end());
  if (static_cast<double>(slowest) >= kSlowShare * static_cast<double>(fastest)) return static_cast<int>(speeds.size());
  return static_cast<int>(std::count_if(speeds.begin(), speeds.end(), [slowest](uint64_t s) { return s != slowest; }));
}

int default_threads() { return fast_core_count("/sys", allowed_cpus()); }

int pass_threads(int requested) {
  if (requested < 0 || requested > kMaxPassThreads) {
    throw std::invalid_argument("n_threads must be between 0 (automatic) and " + std::to_string(kMaxPassThreads));
  }
  return requested > 0 ? requested : std::min(default_threads(), kMaxPassThreads);
}

}  // namespace peak::core
