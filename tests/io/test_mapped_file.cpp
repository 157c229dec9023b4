// The file view under every GGUF read: mapped and read-into-memory views hold the
// file's bytes, errors name the path and the cause, releasing a range drops
// only the whole pages inside it, and dropping leaves them readable.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "io/mapped_file.h"

namespace peak::io {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + i / 251) & 0xff);
  return bytes;
}

std::string write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = ::testing::TempDir() + "peak_io_" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << path;
  return path;
}

std::string open_error(const std::string& path) {
  try {
    MappedFile::open(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(MappedFile, MappedAndReadViewsHoldTheFileBytes) {
  const std::vector<uint8_t> bytes = pattern(3 * 4096 + 77);
  const std::string path = write_temp("bytes", bytes);
  MapOptions read_options;
  read_options.use_mmap = false;
  const auto mapped = MappedFile::open(path);
  const auto read = MappedFile::open(path, read_options);
  EXPECT_TRUE(mapped->is_mapped());
  EXPECT_FALSE(read->is_mapped());
  for (const MappedFile* view : {mapped.get(), read.get()}) {
    ASSERT_EQ(view->size(), bytes.size());
    EXPECT_EQ(std::vector<uint8_t>(view->data(), view->data() + view->size()), bytes);
  }
}

TEST(MappedFile, AnEmptyFileIsAnEmptyView) {
  const std::string path = write_temp("empty", {});
  MapOptions read_options;
  read_options.use_mmap = false;
  EXPECT_EQ(MappedFile::open(path)->size(), 0u);
  EXPECT_EQ(MappedFile::open(path, read_options)->size(), 0u);
}

TEST(MappedFile, ErrorsNameThePathAndTheCause) {
  EXPECT_EQ(open_error("/nonexistent-dir/model.gguf"),
            "cannot open '/nonexistent-dir/model.gguf': No such file or directory");
  EXPECT_EQ(open_error(::testing::TempDir()).rfind("not a regular file: '", 0), 0u) << open_error(::testing::TempDir());
}

// Releasing [page + 10, 3 pages + 10) may drop only page 2, the one whole page
// inside it: the bytes of pages 1 and 3 around it stay readable and unchanged (a
// page released by mistake would fault on the read).
TEST(MappedFile, ReleaseDropsOnlyTheWholePagesInsideTheRange) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(4 * page + 100);
  const std::string path = write_temp("release", bytes);
  MapOptions read_options;
  read_options.use_mmap = false;
  for (const bool use_mmap : {true, false}) {
    const auto view = MappedFile::open(path, use_mmap ? MapOptions{} : read_options);
    view->prefetch(page, 10 * page);  // past the end: clamped
    view->release(page + 10, 2 * page);
    view->release(4 * page + 50, 10 * page);  // no whole page inside: nothing
    for (const size_t readable : {size_t{0}, page, page + 9, page + 10, 2 * page - 1, 3 * page, 3 * page + 10,
                                  4 * page + 99}) {
      EXPECT_EQ(view->data()[readable], bytes[readable]) << "byte " << readable << (use_mmap ? " mapped" : " read");
    }
    if (!use_mmap) {  // a read buffer is never released
      EXPECT_EQ(std::vector<uint8_t>(view->data(), view->data() + view->size()), bytes);
    }
  }
}

#if defined(__linux__)
size_t resident_pages() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident;
}

// Dropping leaves the pages readable with their bytes (a released page would
// fault on the read) after taking them out of the process's resident set.
TEST(MappedFile, DropTakesThePagesOutButLeavesThemReadable) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(256 * page);
  const auto view = MappedFile::open(write_temp("drop", bytes));
  ASSERT_TRUE(view->is_mapped());
  uint64_t sum = 0;
  for (size_t i = 0; i < bytes.size(); i += page) sum += view->data()[i];  // maps every page in
  const size_t before = resident_pages();
  view->drop(page / 2, 255 * page);  // pages 1 to 254
  EXPECT_GE(before - resident_pages(), 200u) << "of 254 pages dropped (checksum " << sum << ")";
  EXPECT_EQ(std::vector<uint8_t>(view->data(), view->data() + view->size()), bytes);
}
#endif

TEST(MappedFile, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = ::testing::TempDir() + "peak_io_fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  auto opened = std::async(std::launch::async, [&path] { return open_error(path); });
  if (opened.wait_for(std::chrono::seconds(5)) == std::future_status::timeout) {
    ADD_FAILURE() << "opening a FIFO blocked";
    ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK));  // a writer lets the blocked open return
  }
  EXPECT_NE(opened.get().find("not a regular file"), std::string::npos);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace peak::io
