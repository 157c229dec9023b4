#include "io/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "io/have_mmap.h"

#if PEAK_HAVE_MMAP
#include <fcntl.h>
#include <sys/stat.h>
#endif

namespace peak::io {
namespace {

[[noreturn]] void throw_system_error(const std::string& what, const std::string& name, int err) {
  throw IoError(what + " '" + name + "': " + std::strerror(err));
}

#if PEAK_HAVE_MMAP
size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

// Closes a descriptor open() opened itself (never the caller's).
class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;

 private:
  int fd_;
};

// The region [offset, offset + length) of a file of `file_size` bytes, checked
// against it and against what this system's offsets and addresses reach.
void check_region(const FileSource& source, uint64_t file_size) {
  const std::string name = source.name();
  if (source.length() == 0) throw std::invalid_argument(name + ": the region is empty (length 0)");
  if (source.offset() > file_size || source.length() > file_size - source.offset()) {
    throw std::invalid_argument(name + ": the region ends at byte " +
                                (source.offset() > UINT64_MAX - source.length()
                                     ? std::string("2^64 or later")
                                     : std::to_string(source.offset() + source.length())) +
                                ", beyond the end of the file (" + std::to_string(file_size) + " bytes)");
  }
  // The whole region is a byte count of this address space and an off_t.
  if (source.length() > SIZE_MAX - page_size() ||
      source.offset() + source.length() > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    throw IoError(name + ": the region is too large for this system's address space");
  }
}
#endif

}  // namespace

FileSource FileSource::path(std::string path) {
  FileSource s;
  s.path_ = std::move(path);
  return s;
}

FileSource FileSource::region(int fd, uint64_t offset, uint64_t length) {
  if (fd < 0) throw std::invalid_argument("file descriptor " + std::to_string(fd) + " is not an open file");
  FileSource s;
  s.fd_ = fd;
  s.offset_ = offset;
  s.length_ = length;
  return s;
}

std::string FileSource::name() const {
  if (!is_region()) return path_;
  return "fd " + std::to_string(fd_) + " [" + std::to_string(offset_) + ", +" + std::to_string(length_) + ")";
}

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path, const MapOptions& options) {
  return open(FileSource::path(path), options);
}

std::unique_ptr<MappedFile> MappedFile::open(const FileSource& source, const MapOptions& options) {
  std::unique_ptr<MappedFile> file(new MappedFile());
  const std::string name = source.name();
#if PEAK_HAVE_MMAP
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before the
  // check below could refuse it. Reads of a regular file ignore the flag.
  const int fd = source.is_region() ? source.fd() : ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_system_error("cannot open", name, errno);
  const OwnedFd owned(source.is_region() ? -1 : fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_system_error("cannot stat", name, errno);
  file->identified_ = true;
  file->device_ = static_cast<uint64_t>(st.st_dev);
  file->inode_ = static_cast<uint64_t>(st.st_ino);
  if (!S_ISREG(st.st_mode)) {
    throw IoError("not a regular file: '" + name + "'" +
                  (source.is_region() ? " (a pipe, socket or device cannot be mapped or read at an offset)" : ""));
  }
  const auto file_size = static_cast<uint64_t>(st.st_size);
  uint64_t offset = 0;
  file->size_ = static_cast<size_t>(file_size);
  if (source.is_region()) {
    check_region(source, file_size);
    offset = source.offset();
    file->size_ = static_cast<size_t>(source.length());
  }
  if (options.use_mmap && file->size_ > 0) {
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (options.populate) flags |= MAP_POPULATE;
#endif
    // Mappings start at a page: map from the page that holds the first byte.
    const uint64_t base = offset / page_size() * page_size();
    const size_t lead = static_cast<size_t>(offset - base);
    void* addr = ::mmap(nullptr, lead + file->size_, PROT_READ, flags, fd, static_cast<off_t>(base));
    if (addr != MAP_FAILED) {
      file->map_base_ = static_cast<uint8_t*>(addr);
      file->map_size_ = lead + file->size_;
      file->data_ = file->map_base_ + lead;
      file->mapped_ = true;
      if (options.populate) ::madvise(addr, file->map_size_, MADV_WILLNEED);
      // mlock may fail for lack of RLIMIT_MEMLOCK; the file still works unlocked.
      if (options.lock) file->locked_ = ::mlock(addr, file->map_size_) == 0;
      return file;
    }
    // Mapping can fail on some file systems: fall through to reading.
  }
  file->buffer_.reset(new uint8_t[file->size_ > 0 ? file->size_ : 1]);
  size_t done = 0;
  while (done < file->size_) {
    const ssize_t got =
        ::pread(fd, file->buffer_.get() + done, file->size_ - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw_system_error("cannot read", name, got < 0 ? errno : EIO);
    done += static_cast<size_t>(got);
  }
  if (options.lock) file->locked_ = ::mlock(file->buffer_.get(), file->size_) == 0;
#else
  (void)options;
  if (source.is_region()) throw IoError(name + ": this system cannot read a file descriptor's region");
  std::FILE* f = std::fopen(name.c_str(), "rb");
  if (!f) throw_system_error("cannot open", name, errno);
  std::fseek(f, 0, SEEK_END);
  const long end = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (end < 0) {
    std::fclose(f);
    throw_system_error("cannot size", name, errno);
  }
  file->size_ = static_cast<size_t>(end);
  file->buffer_.reset(new uint8_t[file->size_ > 0 ? file->size_ : 1]);
  if (std::fread(file->buffer_.get(), 1, file->size_, f) != file->size_) {
    std::fclose(f);
    throw_system_error("cannot read", name, EIO);
  }
  std::fclose(f);
#endif
  file->data_ = file->buffer_.get();
  return file;
}

MappedFile::~MappedFile() {
#if PEAK_HAVE_MMAP
  if (mapped_) {
    if (locked_) ::munlock(map_base_, map_size_);
    ::munmap(map_base_, map_size_);
  } else if (locked_) {
    ::munlock(data_, size_);
  }
#endif
}

bool MappedFile::is_file(const std::string& path) const {
#if PEAK_HAVE_MMAP
  struct stat st {};
  return identified_ && ::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == device_ &&
         static_cast<uint64_t>(st.st_ino) == inode_;
#else
  (void)path;
  return false;  // no identity without POSIX: the file is not known as in use
#endif
}

void MappedFile::prefetch(size_t offset, size_t length) const {
#if PEAK_HAVE_MMAP
  if (!mapped_ || offset >= size_) return;
  // From the page that holds the first byte, which lies inside the mapping.
  const auto first = reinterpret_cast<uintptr_t>(data_ + offset) / page_size() * page_size();
  const auto end = reinterpret_cast<uintptr_t>(data_ + offset + (length < size_ - offset ? length : size_ - offset));
  ::madvise(reinterpret_cast<void*>(first), end - first, MADV_WILLNEED);
#else
  (void)offset;
  (void)length;
#endif
}

MappedFile::PageRange MappedFile::droppable_pages(size_t offset, size_t length) const {
#if PEAK_HAVE_MMAP
  if (!mapped_ || locked_ || offset >= size_) return {};
  // Whole pages of the address space: a region's view need not start at one.
  const uintptr_t page = page_size();
  const auto begin = reinterpret_cast<uintptr_t>(data_ + offset);
  const auto end = reinterpret_cast<uintptr_t>(data_ + offset + (length < size_ - offset ? length : size_ - offset));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = end / page * page;
  if (first >= last) return {};
  return {reinterpret_cast<uint8_t*>(first), reinterpret_cast<uint8_t*>(last)};
#else
  (void)offset;
  (void)length;
  return {};
#endif
}

void MappedFile::release(size_t offset, size_t length) const {
  const PageRange pages = droppable_pages(offset, length);
  if (pages.first == pages.last) return;
#if PEAK_HAVE_MMAP
  // Dropping the pages is not enough on its own: a later read of a small
  // tensor beside the range maps the page cache's whole large folio around it,
  // which brought back 1-2 MB of released bytes per neighbour (65 MB for a
  // 1.1B model). Without read access the mapping is split there, and faults
  // stay inside the parts still readable. Changing the access takes the
  // process's memory map for writing, which stalls the page faults of its
  // other threads meanwhile.
  ::madvise(pages.first, static_cast<size_t>(pages.last - pages.first), MADV_DONTNEED);
  ::mprotect(pages.first, static_cast<size_t>(pages.last - pages.first), PROT_NONE);
#endif
}

void MappedFile::drop(size_t offset, size_t length) const {
  const PageRange pages = droppable_pages(offset, length);
#if PEAK_HAVE_MMAP
  // MADV_DONTNEED reads the memory map only: page faults elsewhere go on.
  if (pages.first != pages.last) ::madvise(pages.first, static_cast<size_t>(pages.last - pages.first), MADV_DONTNEED);
#else
  (void)pages;
#endif
}

}  // namespace peak::io
