// How many threads a forward pass should use by default: the fast cores the
// process may run on. Every node of a graph ends at a barrier, so a pass runs
// at the pace of its slowest thread: a little core of a phone's big.LITTLE CPU
// (a third of a big one's speed, or less) holds the big ones back at every
// node, and leaving the littles out is faster.
//
// The rule, on Linux and Android: the CPUs of the process's affinity mask
// (sched_getaffinity), less the slowest kind of core when a faster kind exists
// and the slowest reaches less than 80% of the fastest. A core's speed is its
// cpu_capacity (the kernel's per-core performance, 1024 for the fastest: arm64
// big.LITTLE, recent x86 hybrids), or, when a CPU has none, its
// cpufreq/cpuinfo_max_freq; a kind is the cores of equal speed. So 2 big + 6
// little cores give 2, 1 prime + 3 big + 4 little give 4, a desktop's uniform
// cores all of them. When no speed is readable for every allowed CPU (sysfs
// hidden, another system): all allowed CPUs.
#pragma once

#include <string>
#include <vector>

namespace peak::core {

// The CPUs this process may run on, by number; 0..hardware_threads()-1 where
// the system does not say.
std::vector<int> allowed_cpus();

// The rule above, reading <sysfs_root>/devices/system/cpu/cpuN/... for the
// CPUs in `cpus` (a fake tree in tests; "/sys" for real). At least 1.
int fast_core_count(const std::string& sysfs_root, const std::vector<int>& cpus);

// fast_core_count("/sys", allowed_cpus()): what a thread count of 0 means for
// a forward pass.
int default_threads();

// The most threads a forward pass takes.
constexpr int kMaxPassThreads = 64;

// The threads a forward pass runs with when `requested` are asked for:
// those, or default_threads() (at most kMaxPassThreads) for 0. Throws
// std::invalid_argument outside 0..kMaxPassThreads.
int pass_threads(int requested);

}  // namespace peak::core
