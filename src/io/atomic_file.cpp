#include "io/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace peak::io {
namespace {

// The registry of temporary files in progress, readable from a signal handler:
// fixed slots (no allocation), each claimed and released through a lock-free
// atomic state. A slot's path is written while it is kClaimed and only read
// while it is kLive, so a handler never reads a half-written path.
constexpr int kSlots = 32;
constexpr size_t kMaxRegisteredPath = 4096;  // with the terminating NUL
enum SlotState : int { kFree = 0, kClaimed = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxRegisteredPath];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

int register_temporary(const std::string& path) {
  if (path.size() >= kMaxRegisteredPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive);
    return i;
  }
  return -1;  // more writers at once than slots: this one is not removed from a handler
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_slots[slot].state.store(kFree);
}

// Messages name the path the caller gave, never the temporary file: "cannot
// write 'X' (<while doing what>): <the system's error>".
[[noreturn]] void fail(const std::string& what, const std::string& path, int err, const std::string& step = "") {
  throw IoError(what + " '" + path + "'" + (step.empty() ? "" : " (" + step + ")") + ": " + std::strerror(err));
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Follows `path` through symbolic links to the file to write. `st` receives
// the target's status when it exists; returns the target's path.
std::string resolve_target(const std::string& path, struct stat* st, bool* exists) {
  constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit for one lookup
  std::string p = path;
  for (int links = 0;; ++links) {
    if (::lstat(p.c_str(), st) != 0) {
      if (errno != ENOENT) fail("cannot write", path, errno);
      *exists = false;
      return p;
    }
    if (S_ISREG(st->st_mode)) {
      *exists = true;
      return p;
    }
    if (!S_ISLNK(st->st_mode)) {
      const std::string through = p == path ? "" : " (through its link to '" + p + "')";
      throw IoError("cannot write '" + path + "'" + through + ": it is " + file_kind(st->st_mode) +
                    ", not a regular file; refusing to replace it");
    }
    if (links == kMaxLinks) fail("cannot write", path, ELOOP);
    std::string link(static_cast<size_t>(st->st_size > 0 ? st->st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(p.c_str(), &link[0], link.size());
    if (n < 0) fail("cannot read the link", p, errno);
    if (static_cast<size_t>(n) >= link.size()) fail("cannot read the link", p, ENAMETOOLONG);  // changed meanwhile
    link.resize(static_cast<size_t>(n));
    const size_t slash = p.find_last_of('/');
    p = (link[0] == '/' || slash == std::string::npos) ? link : p.substr(0, slash + 1) + link;
  }
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  struct stat st {};
  bool exists = false;
  target_ = resolve_target(path, &st, &exists);
  if (exists) {
    keep_mode_ = true;
    mode_ = static_cast<unsigned>(st.st_mode & 07777);
    uid_ = static_cast<unsigned>(st.st_uid);
    gid_ = static_cast<unsigned>(st.st_gid);
  }
  // A name no other writer uses: the process id and a counter, retried while taken.
  static std::atomic<unsigned> counter{0};
  const std::string stem = target_ + ".partial-" + std::to_string(::getpid()) + "-";
  while (true) {
    temporary_ = stem + std::to_string(counter.fetch_add(1));
    // Registered before it exists: a signal between open and registration would leave it behind.
    slot_ = register_temporary(temporary_);
    // 0666 less the umask, as any new file; an existing target's bits are set at commit.
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) break;
    const int err = errno;
    unregister_temporary(slot_);
    slot_ = -1;
    if (err != EEXIST) fail("cannot write", path_, err, "creating its temporary file beside it");
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(temporary_.c_str());
  }
  unregister_temporary(slot_);
  slot_ = -1;
}

void AtomicFile::write(const void* data, size_t n) {
  if (fd_ < 0) throw IoError("cannot write '" + path_ + "': the file was already committed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t done = ::write(fd_, p, n);
    if (done < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path_, errno);
    }
    p += done;
    n -= static_cast<size_t>(done);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw IoError("cannot write '" + path_ + "': the file was already committed");
  if (::fsync(fd_) != 0) fail("cannot write", path_, errno);
  if (keep_mode_) {
    // The owner first: changing it clears set-user-ID bits, which fchmod then restores.
    // Only a privileged process may give a file away; others keep their own.
    if (::fchown(fd_, static_cast<uid_t>(uid_), static_cast<gid_t>(gid_)) != 0 && errno != EPERM) {
      fail("cannot write", path_, errno, "giving the new file the old one's owner");
    }
    if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0) {
      fail("cannot write", path_, errno, "giving the new file the old one's permissions");
    }
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temporary_.c_str());
    fail("cannot write", path_, err);
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary_.c_str());
    fail("cannot write", path_, err, "renaming the new file onto '" + target_ + "'");
  }
  unregister_temporary(slot_);
  slot_ = -1;
  // The rename is durable once the directory is synced; the data already is.
  const int dir = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void remove_temporary_files_from_signal_handler() noexcept {
  for (Slot& s : g_slots) {
    if (s.state.load() == kLive) ::unlink(s.path);
  }
}

}  // namespace peak::io
