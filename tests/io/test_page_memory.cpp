// Memory in whole pages: populate() maps in exactly the pages a range touches
// (the kernel's own count of resident pages, mincore), and the buffer holds
// what is written to it.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "io/page_memory.h"

namespace peak::io {
namespace {

std::vector<bool> resident_pages(const PageMemory& m, size_t page) {
  std::vector<unsigned char> flags((m.size() + page - 1) / page);
  EXPECT_EQ(::mincore(m.data(), m.size(), flags.data()), 0);
  std::vector<bool> resident;
  for (unsigned char f : flags) resident.push_back((f & 1) != 0);
  return resident;
}

TEST(PageMemory, PopulateMapsInThePagesOfTheRange) {
#ifndef MADV_POPULATE_WRITE
  GTEST_SKIP() << "the system cannot populate a range";
#endif
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const PageMemory m(10 * page + 100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 64, 0u);
  ASSERT_EQ(resident_pages(m, page), std::vector<bool>(11, false));
  m.populate(2 * page + 5, 3 * page);  // bytes in pages 2 to 5
  m.populate(10 * page + 99, 1000);     // the last byte; the range ends past the buffer
  m.populate(7 * page, 0);              // nothing
  std::vector<bool> want(11, false);
  for (const size_t p : {2, 3, 4, 5, 10}) want[p] = true;
  EXPECT_EQ(resident_pages(m, page), want);
  for (size_t i = 0; i < m.size(); ++i) m.data()[i] = static_cast<uint8_t>(i * 7);
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(m.data()[i], static_cast<uint8_t>(i * 7)) << i;
}

TEST(PageMemory, AnEmptyBufferHasNoPages) {
  const PageMemory m(0);
  EXPECT_EQ(m.size(), 0u);
  m.populate(0, 100);
}

}  // namespace
}  // namespace peak::io
