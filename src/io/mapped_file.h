// Read-only view of a whole file: memory-mapped on POSIX, or read into a buffer
// when mapping is unavailable or disabled. Tensor data pointers point straight
// into this view: weights are not copied (except matrices repacked for the
// kernels, whose pages here are then released).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace peak::io {

// A file could not be opened, mapped or read; the message names path and cause.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MapOptions {
  bool use_mmap = true;   // false: read the file into memory (buffered-read fallback)
  bool populate = false;  // pre-fault all pages (MAP_POPULATE / madvise WILLNEED)
  bool lock = false;      // mlock the pages so they are never swapped out
};

class MappedFile {
 public:
  // Throws IoError naming the path and the system error.
  static std::unique_ptr<MappedFile> open(const std::string& path, const MapOptions& options = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }
  bool is_locked() const { return locked_; }
  // Hint that [offset, offset+length) will be read soon (no-op for read buffers).
  void prefetch(size_t offset, size_t length) const;
  // Declares that [offset, offset+length) will not be read again: a mapped,
  // unlocked file drops the whole pages inside it from the process and makes
  // them unreadable (a read would fault). No-op otherwise. Making pages
  // unreadable stalls the page faults of the process's other threads.
  void release(size_t offset, size_t length) const;
  // Drops the whole pages inside [offset, offset+length) from the process like
  // release, without stalling other threads, but leaves them readable: a read
  // maps them in again (also a read beside them, of the same page-cache folio).
  // No-op for a read buffer or a locked file.
  void drop(size_t offset, size_t length) const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  bool locked_ = false;
  std::unique_ptr<uint8_t[]> buffer_;  // owns the bytes when not mapped

  // The whole pages inside [offset, offset+length) that release and drop may
  // drop; empty (first == last) when there are none or the view keeps its pages.
  struct PageRange {
    uint8_t* first = nullptr;
    uint8_t* last = nullptr;
  };
  PageRange droppable_pages(size_t offset, size_t length) const;
};

}  // namespace peak::io
