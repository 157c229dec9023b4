// A memory read-bandwidth probe for `peak bench`: streams a buffer much larger
// than the caches with n threads and reports the best of several passes, so
// decode speed can be quoted as a share of what the machine's memory delivers
// in the same run.
#pragma once

#include <cstddef>

// GB/s (1e9 bytes per second) reading `bytes` with `n_threads` threads.
double probe_read_bandwidth(size_t bytes, int n_threads, int passes);
