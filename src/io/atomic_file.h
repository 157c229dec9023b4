// Writing a file so that its readers see either the old content or the whole new
// one, never a part, and so that what the path names is never swapped for
// something else. Every file peak writes (quantized and synthetic models,
// session files) goes through AtomicFile.
//
// What the path may name:
//   - nothing: the file is created (its directory must exist);
//   - a regular file: it is replaced atomically, keeping its permission bits
//     (and its owner where the process may set it);
//   - a symbolic link: the link is followed (up to 40 links) and its final
//     target is written as above, so the link stays a link. A dangling link
//     creates its target, as a shell's `>` through the link would;
//   - anything else (directory, device, FIFO, socket): refused with IoError
//     before anything is written, so `/dev/null` stays a device.
//
// The new bytes go to a temporary file beside the target ("TARGET.partial-N-M",
// same directory so that the rename cannot cross file systems), which is
// synced and then renamed onto the target. The temporary file never outlives
// the writer: the destructor removes it unless commit() renamed it, and a
// signal handler may remove every one in progress with
// remove_temporary_files_from_signal_handler().
#pragma once

#include <cstddef>
#include <string>

#include "io/mapped_file.h"

namespace peak::io {

class AtomicFile {
 public:
  // Resolves `path` and creates the temporary file. Throws IoError naming the
  // path: not a regular file, a link loop, or the system's error.
  explicit AtomicFile(const std::string& path);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends `n` bytes; throws IoError (disk full ...).
  void write(const void* data, size_t n);
  // Syncs the data, gives it the target's permission bits, renames it onto the
  // target and syncs the directory. Throws IoError; the target is then unchanged.
  void commit();

  // The file that commit() replaces or creates (the path with links followed).
  const std::string& target() const { return target_; }
  const std::string& temporary_path() const { return temporary_; }

 private:
  void discard() noexcept;

  std::string path_;       // as given, for messages
  std::string target_;
  std::string temporary_;
  int fd_ = -1;
  int slot_ = -1;          // this writer's entry in the registry of temporary files
  bool keep_mode_ = false; // the target exists: give the new file its permission bits
  unsigned mode_ = 0;
  unsigned uid_ = 0, gid_ = 0;
};

// Removes (unlinks) every temporary file an AtomicFile of this process is
// writing. Only async-signal-safe calls, so a SIGINT / SIGTERM handler may call
// it before ending the process; the writers themselves are then abandoned, so
// the handler must not return into them (re-raise the signal with its default
// action, or _exit). Paths longer than 4095 bytes are not registered and are
// not removed from a handler (the destructor still removes them).
void remove_temporary_files_from_signal_handler() noexcept;

}  // namespace peak::io
