#include "io/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "io/have_mmap.h"

#if PEAK_HAVE_MMAP
#include <fcntl.h>
#include <sys/stat.h>
#endif

namespace peak::io {
namespace {

[[noreturn]] void throw_system_error(const std::string& what, const std::string& path, int err) {
  throw IoError(what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path, const MapOptions& options) {
  std::unique_ptr<MappedFile> file(new MappedFile());
#if PEAK_HAVE_MMAP
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before the
  // check below could refuse it. Reads of a regular file ignore the flag.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_system_error("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_system_error("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError("not a regular file: '" + path + "'");
  }
  file->size_ = static_cast<size_t>(st.st_size);
  if (options.use_mmap && file->size_ > 0) {
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (options.populate) flags |= MAP_POPULATE;
#endif
    void* addr = ::mmap(nullptr, file->size_, PROT_READ, flags, fd, 0);
    if (addr != MAP_FAILED) {
      file->data_ = static_cast<const uint8_t*>(addr);
      file->mapped_ = true;
      if (options.populate) ::madvise(addr, file->size_, MADV_WILLNEED);
      // mlock may fail for lack of RLIMIT_MEMLOCK; the file still works unlocked.
      if (options.lock) file->locked_ = ::mlock(addr, file->size_) == 0;
      ::close(fd);
      return file;
    }
    // Mapping can fail on some file systems: fall through to reading.
  }
  file->buffer_.reset(new uint8_t[file->size_ > 0 ? file->size_ : 1]);
  size_t done = 0;
  while (done < file->size_) {
    const ssize_t got = ::read(fd, file->buffer_.get() + done, file->size_ - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int err = got < 0 ? errno : EIO;
      ::close(fd);
      throw_system_error("cannot read", path, err);
    }
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  if (options.lock) file->locked_ = ::mlock(file->buffer_.get(), file->size_) == 0;
#else
  (void)options;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_system_error("cannot open", path, errno);
  std::fseek(f, 0, SEEK_END);
  const long end = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (end < 0) {
    std::fclose(f);
    throw_system_error("cannot size", path, errno);
  }
  file->size_ = static_cast<size_t>(end);
  file->buffer_.reset(new uint8_t[file->size_ > 0 ? file->size_ : 1]);
  if (std::fread(file->buffer_.get(), 1, file->size_, f) != file->size_) {
    std::fclose(f);
    throw_system_error("cannot read", path, EIO);
  }
  std::fclose(f);
#endif
  file->data_ = file->buffer_.get();
  return file;
}

MappedFile::~MappedFile() {
#if PEAK_HAVE_MMAP
  if (mapped_) {
    if (locked_) ::munlock(data_, size_);
    ::munmap(const_cast<uint8_t*>(data_), size_);
  } else if (locked_) {
    ::munlock(data_, size_);
  }
#endif
}

void MappedFile::prefetch(size_t offset, size_t length) const {
#if PEAK_HAVE_MMAP
  if (!mapped_ || offset >= size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t start = offset / page * page;
  const size_t end = offset + (length < size_ - offset ? length : size_ - offset);
  ::madvise(const_cast<uint8_t*>(data_) + start, end - start, MADV_WILLNEED);
#else
  (void)offset;
  (void)length;
#endif
}

MappedFile::PageRange MappedFile::droppable_pages(size_t offset, size_t length) const {
#if PEAK_HAVE_MMAP
  if (!mapped_ || locked_ || offset >= size_) return {};
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t start = (offset + page - 1) / page * page;
  const size_t end = (offset + (length < size_ - offset ? length : size_ - offset)) / page * page;
  if (start >= end) return {};
  uint8_t* first = const_cast<uint8_t*>(data_) + start;
  return {first, first + (end - start)};
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
