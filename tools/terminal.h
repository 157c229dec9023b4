// The terminal `peak chat` edits its prompt on: raw mode with bracketed paste
// while a line is read, and the mode it had before put back on every way out:
// the end of the scope or an exception (the destructor), and the signals that
// end the process while it is raw (SIGTERM, SIGHUP and SIGQUIT here; a SIGINT
// handler calls restore_terminal_from_signal() itself).
#pragma once

#include <cstddef>

class RawTerminal {
 public:
  // Raw input (no echo, no line discipline and so no line length limit, no
  // signal keys: Ctrl-C and Ctrl-Z arrive as bytes, no flow control), output
  // processed as before, bracketed paste on. Throws std::system_error when the
  // terminal's mode cannot be read or set.
  RawTerminal(int in_fd, int out_fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

  // Ctrl-Z: puts the terminal back as it was and stops the process group, as
  // the terminal itself would; raw again once the process is continued.
  void suspend_process();

 private:
  void enter();
  void leave();
};

struct TerminalSize {
  size_t columns, rows;
};
// The terminal's size; 80 x 24 when it does not say.
TerminalSize terminal_size(int fd);

// Async-signal-safe: puts the terminal back in the mode it had before a live
// RawTerminal made it raw (nothing when none does).
void restore_terminal_from_signal();
