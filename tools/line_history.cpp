#include "line_history.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

// The most of a history file that is read: its newest part. Beyond it, the
// file is cut back to what was read.
constexpr off_t kMaxReadBytes = off_t{4} << 20;

std::string error_text(int err) { return std::strerror(err); }

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// mkdir -p of the directory holding `path` (private: the history is the user's
// conversation). Returns 0 or the errno of the failure.
int make_parent_directories(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

}  // namespace

bool History::add(std::string entry) {
  stop_browsing();
  if (entry.empty() || (!entries_.empty() && entries_.back() == entry)) return false;
  entries_.push_back(std::move(entry));
  while (entries_.size() > max_entries_) entries_.pop_front();
  position_ = entries_.size();
  return true;
}

const std::string& History::text_at(size_t i) const {
  const auto edited = edited_.find(i);
  return edited != edited_.end() ? edited->second : entries_[i];
}

const std::string* History::older(const std::string& shown) {
  if (!browsing_) {
    browsing_ = true;
    position_ = entries_.size();
  }
  if (position_ == 0) return nullptr;
  edited_[position_] = shown;
  --position_;
  return &text_at(position_);
}

const std::string* History::newer(const std::string& shown) {
  if (!browsing_ || position_ >= entries_.size()) return nullptr;
  edited_[position_] = shown;
  ++position_;
  return &text_at(position_);
}

void History::stop_browsing() {
  browsing_ = false;
  position_ = entries_.size();
  edited_.clear();
}

std::string HistoryFile::default_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && state[0] == '/') return std::string(state) + "/peak/history";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.local/state/peak/history";
  return std::string();
}

std::string HistoryFile::escape(const std::string& entry) {
  std::string out;
  out.reserve(entry.size());
  for (const char c : entry) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string HistoryFile::unescape(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '\\' || line[i + 1] == 'n')) {
      out += line[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += line[i];  // a lone backslash (a hand-edited file) stays as it is
    }
  }
  return out;
}

void HistoryFile::warn(const std::string& what) {
  if (warned_) return;
  warned_ = true;
  warn_(what);
}

void HistoryFile::load(History& history, size_t max_entries) {
  if (path_.empty()) {
    write_failed_ = true;
    warn("the history is not kept: neither XDG_STATE_HOME nor HOME names a directory");
    return;
  }
  // Non-blocking: opening a FIFO to read waits for a writer, which never comes.
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) warn("cannot read the history file '" + path_ + "': " + error_text(errno));
    return;
  }
  struct stat st {};
  std::string bytes;
  int err = 0;
  bool cut = false;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (!S_ISREG(st.st_mode)) {
    err = EINVAL;
  } else {
    cut = st.st_size > kMaxReadBytes;
    if (cut && ::lseek(fd, st.st_size - kMaxReadBytes, SEEK_SET) < 0) err = errno;
    char buf[65536];
    while (err == 0) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      if (n <= 0) break;
      bytes.append(buf, static_cast<size_t>(n));
      if (bytes.size() > static_cast<size_t>(kMaxReadBytes)) break;  // the file grew while read
    }
  }
  ::close(fd);
  if (err != 0) {
    // Nothing is appended to what is not a history file: a FIFO would block
    // the write, a device would take it.
    if (err == EINVAL) write_failed_ = true;
    warn("cannot read the history file '" + path_ + "': " +
         (err == EINVAL ? std::string("not a regular file") : error_text(err)));
    return;
  }
  size_t start = 0;
  if (cut) {  // the first line read is the end of an entry that was not
    const size_t nl = bytes.find('\n');
    start = nl == std::string::npos ? bytes.size() : nl + 1;
  }
  size_t lines = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    history.add(unescape(bytes.substr(start, end - start)));
    ++lines;
    start = end + 1;
  }
  if (cut || lines > max_entries) rewrite(history);
}

void HistoryFile::append(const std::string& entry) {
  if (write_failed_) return;
  int err = make_parent_directories(path_);
  if (err == 0) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      err = errno;
    } else {
      if (!write_all(fd, escape(entry) + "\n")) err = errno != 0 ? errno : EIO;
      if (::close(fd) != 0 && err == 0) err = errno;
    }
  }
  if (err != 0) {
    write_failed_ = true;
    warn("cannot write the history file '" + path_ + "': " + error_text(err) + " (history is not kept)");
  }
}

// Replaces the file with `history` through a new file renamed over it, so
// that a failure leaves the old file whole.
void HistoryFile::rewrite(const History& history) {
  std::string bytes;
  for (size_t i = 0; i < history.size(); ++i) bytes += escape(history[i]) + "\n";
  const std::string tmp = path_ + ".new-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    if (!write_all(fd, bytes)) err = errno != 0 ? errno : EIO;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && ::rename(tmp.c_str(), path_.c_str()) != 0) err = errno;
    if (err != 0) ::unlink(tmp.c_str());
  }
  if (err != 0) warn("cannot shorten the history file '" + path_ + "': " + error_text(err));
}
