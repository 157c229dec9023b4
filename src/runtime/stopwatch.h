// Elapsed wall-clock seconds on the monotonic clock, for the times a
// generation, a turn and a rebuild report.
#pragma once

#include <chrono>

namespace peak::runtime {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}

  // Seconds since construction or the last restart().
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace peak::runtime
