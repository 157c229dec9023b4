// Counts heap bytes requested through global operator new (plain and aligned)
// while a scope is active (a test binary linking alloc_counter.cpp replaces
// operator new/delete).
#pragma once

#include <cstddef>

namespace peak::test {

struct AllocationStats {
  size_t bytes = 0;        // total requested
  size_t largest = 0;      // largest single request
};

class AllocationScope {
 public:
  AllocationScope();
  ~AllocationScope();
  AllocationStats stats() const;
};

}  // namespace peak::test
