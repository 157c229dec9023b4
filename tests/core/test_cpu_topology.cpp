// The default thread count's rule (core/cpu_topology.h) on fake sysfs trees:
// uniform cores, big.LITTLE by capacity, three kinds of core, speeds from the
// maximum frequency where there is no capacity, nothing readable, and CPUs
// outside the affinity mask ignored.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/cpu_topology.h"
#include "core/thread_pool.h"

namespace peak::core {
namespace {

namespace fs = std::filesystem;

// A sysfs root of its own per test, with the files a test writes.
class FakeSysfs {
 public:
  explicit FakeSysfs(const std::string& name) : root_(::testing::TempDir() + "peak_sysfs_" + name) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeSysfs() { fs::remove_all(root_); }

  // Writes devices/system/cpu/cpu<cpu>/<leaf> with `value` and a newline, as sysfs does.
  void set(int cpu, const std::string& leaf, const std::string& value) {
    const fs::path file = fs::path(root_) / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / leaf;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << value << "\n";
  }
  void capacities(const std::vector<int>& values) {
    for (size_t i = 0; i < values.size(); ++i) set(static_cast<int>(i), "cpu_capacity", std::to_string(values[i]));
  }
  void max_freqs(const std::vector<int>& khz) {
    for (size_t i = 0; i < khz.size(); ++i) {
      set(static_cast<int>(i), "cpufreq/cpuinfo_max_freq", std::to_string(khz[i]));
    }
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

std::vector<int> cpus(int n) {
  std::vector<int> list;
  for (int i = 0; i < n; ++i) list.push_back(i);
  return list;
}

TEST(CpuTopology, UniformCoresAreAllUsed) {
  FakeSysfs sys("uniform");
  sys.capacities({1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(8)), 8);
}

TEST(CpuTopology, TwoBigAndSixLittleByCapacityUseTheTwo) {
  FakeSysfs sys("big_little");
  // A Snapdragon 7-series: six Cortex-A55 (cpu0-5), two A78 (cpu6-7).
  sys.capacities({261, 261, 261, 261, 261, 261, 1024, 1024});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(8)), 2);
}

TEST(CpuTopology, ThreeKindsLeaveOutOnlyTheLittleOnes) {
  FakeSysfs sys("tri_cluster");
  // 4 little, 3 big, 1 prime (Snapdragon 8 Gen 1): the big ones are not the
  // fastest, but far faster than the little ones.
  sys.capacities({325, 325, 325, 325, 828, 828, 828, 1024});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(8)), 4);
}

TEST(CpuTopology, CoresOfNearlyEqualSpeedAreAllUsed) {
  FakeSysfs sys("favoured");
  // A desktop whose two favoured cores boost a little higher than the rest.
  sys.max_freqs({5300000, 5300000, 5100000, 5100000, 5100000, 5100000});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(6)), 6);
}

TEST(CpuTopology, WithoutCapacitiesTheMaximumFrequencyDecides) {
  FakeSysfs sys("max_freq");
  sys.max_freqs({1800000, 1800000, 1800000, 1800000, 2400000, 2400000, 2400000, 2400000});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(8)), 4);
}

TEST(CpuTopology, ACapacityMissingForOneCpuFallsBackToFrequencies) {
  FakeSysfs sys("partial_capacity");
  sys.capacities({1024, 1024, 1024, 1024, 1024, 1024});
  sys.max_freqs({1800000, 1800000, 1800000, 1800000, 1800000, 1800000, 2800000, 2800000});
  EXPECT_EQ(fast_core_count(sys.root(), cpus(8)), 2);
}

TEST(CpuTopology, NothingReadableGivesEveryAllowedCpu) {
  FakeSysfs sys("empty");
  EXPECT_EQ(fast_core_count(sys.root(), cpus(6)), 6);
  sys.set(0, "cpu_capacity", "garbage");
  sys.set(1, "cpu_capacity", "0");
  EXPECT_EQ(fast_core_count(sys.root(), cpus(2)), 2);
  EXPECT_EQ(fast_core_count(sys.root() + "/no-such-dir", cpus(3)), 3);
  EXPECT_EQ(fast_core_count(sys.root(), {}), 1);
}

TEST(CpuTopology, OnlyTheAllowedCpusCount) {
  FakeSysfs sys("affinity");
  sys.capacities({261, 261, 261, 261, 261, 261, 1024, 1024});
  // A process kept on the little cores (a background cpuset) uses all of them...
  EXPECT_EQ(fast_core_count(sys.root(), {0, 1, 2, 3}), 4);
  // ... and one allowed a little and both big cores, the big ones.
  EXPECT_EQ(fast_core_count(sys.root(), {3, 6, 7}), 2);
}

TEST(CpuTopology, ThisMachineGivesAtLeastOneThreadAndNoMoreThanItMayUse) {
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_LE(static_cast<int>(allowed.size()), hardware_threads());
  EXPECT_GE(default_threads(), 1);
  EXPECT_LE(default_threads(), static_cast<int>(allowed.size()));
}

}  // namespace
}  // namespace peak::core
