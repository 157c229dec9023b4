#include "input_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_session.h"

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return nullptr;  // regular file, FIFO or pipe: readable as a stream
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what) {
  const bool from_stdin = path == "-";
  const std::string named = what + (from_stdin ? std::string(" (standard input)") : " '" + path + "'");
  const int fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CommandError("cannot read " + named + ": " + std::strerror(errno));
  // Standard input stays open for the rest of the process.
  const auto close_file = [fd, from_stdin] {
    if (!from_stdin) ::close(fd);
  };
  // Standard input is read whatever it is (a terminal, /dev/null): the size
  // bound stops an endless one.
  struct stat st {};
  const char* kind = from_stdin ? nullptr : ::fstat(fd, &st) == 0 ? kind_of(st.st_mode) : "unreadable";
  if (kind) {
    close_file();
    throw CommandError("cannot read " + named + ": it is " + kind + ", not a file");
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close_file();
      throw CommandError("cannot read " + named + ": " + std::strerror(err));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxInputFileBytes) {
      close_file();
      throw CommandError(named + " is larger than the " + std::to_string(kMaxInputFileBytes >> 20) +
                         " MiB an input file may hold");
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close_file();
  return text;
}

std::vector<std::string> read_text_lines(const std::string& path) {
  const std::string all = read_input_file(path, "text file");
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    std::string line = all.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      throw CommandError(path + ": line " + std::to_string(lines.size() + 1) + " is empty (one text per line)");
    }
    lines.push_back(std::move(line));
    start = end + 1;
  }
  if (lines.empty()) throw CommandError(path + ": no text in the file (one text per line)");
  return lines;
}
