// The POSIX calls that map and advise memory, where the system has them
// (PEAK_HAVE_MMAP 1). Windows (TODO: MapViewOfFile, VirtualAlloc) reads files
// into heap memory instead.
#pragma once

#if defined(_WIN32)
#define PEAK_HAVE_MMAP 0
#else
#include <sys/mman.h>
#include <unistd.h>
#define PEAK_HAVE_MMAP 1
#endif
