// The file view under every GGUF read: mapped and read-into-memory views hold the
// file's bytes (or a region's, from an fd), errors name the path (or the fd)
// and the cause, releasing a range drops only the whole pages inside it, and
// dropping leaves them readable.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include <cstdint>
#include <fstream>
#include <stdexcept>
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

// An open descriptor of a file, closed at the end of the scope.
class OpenFile {
 public:
  explicit OpenFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    EXPECT_GE(fd_, 0) << path;
  }
  ~OpenFile() { close(); }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

MapOptions read_into_memory() {
  MapOptions o;
  o.use_mmap = false;
  return o;
}

// Regions at and off page boundaries, mapped and read: each view holds exactly
// the region's bytes, reading leaves the fd's file position alone, and the view
// outlives the descriptor.
TEST(MappedFileRegion, ViewsHoldTheRegionsBytesAndDoNotNeedTheFdAfterwards) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(5 * page + 333);
  const std::string path = write_temp("region", bytes);
  struct Region {
    uint64_t offset, length;
  };
  for (const Region r : {Region{0, bytes.size()}, Region{1, 100}, Region{page - 1, page + 2}, Region{page, 2 * page},
                         Region{3 * page + 7, bytes.size() - 3 * page - 7}, Region{bytes.size() - 1, 1}}) {
    for (const bool use_mmap : {true, false}) {
      OpenFile file(path);
      ASSERT_EQ(::lseek(file.fd(), 17, SEEK_SET), 17);
      const auto view =
          MappedFile::open(FileSource::region(file.fd(), r.offset, r.length), use_mmap ? MapOptions{} : read_into_memory());
      EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 17);
      file.close();
      EXPECT_EQ(view->is_mapped(), use_mmap);
      ASSERT_EQ(view->size(), r.length);
      const std::vector<uint8_t> expected(bytes.begin() + static_cast<std::ptrdiff_t>(r.offset),
                                          bytes.begin() + static_cast<std::ptrdiff_t>(r.offset + r.length));
      EXPECT_EQ(std::vector<uint8_t>(view->data(), view->data() + view->size()), expected)
          << "offset " << r.offset << ", length " << r.length << (use_mmap ? ", mapped" : ", read");
    }
  }
}

std::string region_error(int fd, uint64_t offset, uint64_t length, const MapOptions& options = {}) {
  try {
    MappedFile::open(FileSource::region(fd, offset, length), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(MappedFileRegion, RefusesRegionsOutsideTheFileNamingTheSizes) {
  const std::string path = write_temp("region_bounds", pattern(1000));
  OpenFile file(path);
  const int fd = file.fd();
  const std::string name = "fd " + std::to_string(fd);
  for (const MapOptions& options : {MapOptions{}, read_into_memory()}) {
    EXPECT_EQ(region_error(fd, 0, 0, options), name + " [0, +0): the region is empty (length 0)");
    EXPECT_EQ(region_error(fd, 999, 2, options),
              name + " [999, +2): the region ends at byte 1001, beyond the end of the file (1000 bytes)");
    EXPECT_EQ(region_error(fd, 1001, 1, options),
              name + " [1001, +1): the region ends at byte 1002, beyond the end of the file (1000 bytes)");
    EXPECT_EQ(region_error(fd, 10, UINT64_MAX, options),
              name + " [10, +18446744073709551615): the region ends at byte 2^64 or later, beyond the end of the "
                     "file (1000 bytes)");
    EXPECT_EQ(region_error(fd, UINT64_MAX, 1, options),
              name + " [18446744073709551615, +1): the region ends at byte 2^64 or later, beyond the end of the "
                     "file (1000 bytes)");
    EXPECT_EQ(region_error(fd, 1000, 0, options), name + " [1000, +0): the region is empty (length 0)");
  }
  EXPECT_THROW(MappedFile::open(FileSource::region(fd, 0, 0)), std::invalid_argument);
  EXPECT_NO_THROW(MappedFile::open(FileSource::region(fd, 0, 1000)));
}

TEST(MappedFileRegion, RefusesDescriptorsThatAreNotOpenRegularFiles) {
  EXPECT_THROW(FileSource::region(-1, 0, 10), std::invalid_argument);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], "GGUF", 4), 4);
  EXPECT_EQ(region_error(pipe_fds[0], 0, 4), "not a regular file: 'fd " + std::to_string(pipe_fds[0]) +
                                                 " [0, +4)' (a pipe, socket or device cannot be mapped or read at "
                                                 "an offset)");
  const int closed = pipe_fds[0];
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_EQ(region_error(closed, 0, 4), "cannot stat 'fd " + std::to_string(closed) + " [0, +4)': Bad file descriptor");
  const int directory = ::open(::testing::TempDir().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(directory, 0);
  EXPECT_NE(region_error(directory, 0, 4).find("not a regular file"), std::string::npos);
  ::close(directory);
}

// A region that starts inside a page: its view starts inside the mapping's
// first page, and releasing counts whole pages of memory, not of the region.
TEST(MappedFileRegion, ReleaseInARegionDropsOnlyTheWholePagesInsideTheRange) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(6 * page);
  const std::string path = write_temp("region_release", bytes);
  OpenFile file(path);
  const size_t offset = page / 2 + 12;  // region byte i is file byte offset + i
  const auto view = MappedFile::open(FileSource::region(file.fd(), offset, bytes.size() - offset));
  ASSERT_TRUE(view->is_mapped());
  // Region bytes [page, 3 page + 10) hold the whole memory pages of file bytes
  // [2 page, 3 page) only, after the first page the mapping holds.
  view->prefetch(0, 100 * page);
  view->release(page, 2 * page + 10);
  for (const size_t i : {size_t{0}, page - 1, page, 2 * page - offset - 1, 3 * page - offset, 3 * page + 9,
                         bytes.size() - offset - 1}) {
    EXPECT_EQ(view->data()[i], bytes[offset + i]) << "region byte " << i;
  }
}

}  // namespace
}  // namespace peak::io
