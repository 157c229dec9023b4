// Read-only view of a whole file, or of a region of one: memory-mapped on
// POSIX, or read into a buffer when mapping is unavailable or disabled. Tensor
// data pointers point straight into this view: weights are not copied (except
// matrices repacked for the kernels, whose pages here are then released).
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

// Where a view's bytes come from: a whole file named by its path, or the region
// [offset, offset + length) of a file the caller has open (a GGUF stored inside
// a larger file, such as an uncompressed entry of an Android APK). Offsets in
// the view count from the region's start.
struct FileSource {
  static FileSource path(std::string path);
  // Throws std::invalid_argument for a negative fd; open() checks the rest.
  static FileSource region(int fd, uint64_t offset, uint64_t length);

  bool is_region() const { return fd_ >= 0; }
  const std::string& file_path() const { return path_; }
  int fd() const { return fd_; }
  uint64_t offset() const { return offset_; }
  uint64_t length() const { return length_; }
  // How messages name it: the path, or "fd 7 [4096, +1234)".
  std::string name() const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
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
  // The same for any source. A region's file must be a regular file that
  // holds the whole region, and the region must not be empty: otherwise
  // IoError (a pipe, a socket, a closed fd) or std::invalid_argument (the
  // region), naming the fd and the sizes. The fd is read with pread and mapped
  // from the page that holds `offset`: its file position is not used nor
  // changed, and the view does not need it once open returns.
  static std::unique_ptr<MappedFile> open(const FileSource& source, const MapOptions& options = {});
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }
  bool is_locked() const { return locked_; }
  // Whether `path` (links followed) names the file this view was opened from:
  // a writer refuses to replace a file in use.
  bool is_file(const std::string& path) const;
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
  const uint8_t* data_ = nullptr;  // the view's first byte: inside the mapping when mapped
  size_t size_ = 0;
  uint8_t* map_base_ = nullptr;  // the mapping, from the page that holds data_
  size_t map_size_ = 0;
  bool mapped_ = false;
  bool locked_ = false;
  bool identified_ = false;  // device_ and inode_ are the file's
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
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
