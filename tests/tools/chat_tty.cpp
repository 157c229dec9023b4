// `peak chat` at a terminal, driven through a pseudo-terminal as a user would
// drive it: keys typed with cursor edits, a bracketed paste of several lines,
// history recalled (also by a second chat, from the history file), Ctrl-C at
// the prompt, a line longer than a terminal's 4095-byte canonical limit, a
// message continued with '\', and the ways out (Ctrl-D, Ctrl-C twice,
// SIGTERM), after which the terminal must be in the mode it started in. The
// screen is followed with a small terminal emulator (vt_screen.h); the
// messages the model received are read from `--dump-prompt` on stderr.
//   chat_tty PEAK DIR
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "vt_screen.h"

extern char** environ;

namespace {

using peak::test::file_bytes;

constexpr size_t kColumns = 80, kRows = 24;
constexpr double kWaitSeconds = 120;  // per step: a loaded 2-core machine, a sanitizer build

double now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string printable(const std::string& bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '\n') out += "\\n\n";
    else if (b < 0x20 || b == 0x7f) out += "^" + std::string(1, static_cast<char>(b ^ 0x40));
    else out += c;
  }
  return out;
}

// `peak chat` on the slave side of a new pseudo-terminal; stderr to a file.
class PtyChat {
 public:
  // `options` follow "peak chat" (default: the demo model's, as the first chats use it).
  PtyChat(const std::string& peak, const std::string& stderr_path, const std::vector<std::string>& env,
          const std::vector<std::string>& options = {"--chat-template", "chatml", "--temp", "0", "-n", "4", "-t", "1",
                                                     "--dump-prompt"})
      : screen_(kColumns, kRows) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) throw std::runtime_error("no pty");
    const std::string slave_name = ::ptsname(master_);
    struct winsize ws {};
    ws.ws_col = kColumns;
    ws.ws_row = kRows;
    ::ioctl(master_, TIOCSWINSZ, &ws);
    // Held open here so that the terminal's mode can be read after the chat ends.
    slave_ = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    if (slave_ < 0 || ::tcgetattr(slave_, &initial_mode_) != 0) throw std::runtime_error("cannot open " + slave_name);

    std::vector<std::string> vars = env;
    for (char** e = environ; *e; ++e) {
      const std::string var = *e;
      const std::string name = var.substr(0, var.find('='));
      if (name != "TERM" && name != "HOME" && name != "XDG_STATE_HOME") vars.push_back(var);
    }
    std::vector<std::string> args = {peak, "chat"};
    args.insert(args.end(), options.begin(), options.end());
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("cannot fork");
    if (pid_ == 0) {
      ::setsid();  // a session of its own, the pty its controlling terminal
      const int tty = ::open(slave_name.c_str(), O_RDWR);
      const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (tty < 0 || err < 0) ::_exit(126);
      ::dup2(tty, STDIN_FILENO);
      ::dup2(tty, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      ::close(tty);
      ::close(err);
      ::close(slave_);
      ::close(master_);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      std::vector<char*> argv, envp;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      for (const std::string& v : vars) envp.push_back(const_cast<char*>(v.c_str()));
      envp.push_back(nullptr);
      ::execve(peak.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
  }

  ~PtyChat() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(master_);
    ::close(slave_);
  }

  pid_t pid() const { return pid_; }
  const VtScreen& screen() const { return screen_; }
  const std::string& output() const { return output_; }
  std::string cursor_row() const { return screen_.row(screen_.cursor_row()); }

  // Types `bytes`, reading the chat's output meanwhile (the chat may write
  // while a large paste is still going in).
  void type(const std::string& bytes) {
    size_t done = 0;
    const double deadline = now() + kWaitSeconds;
    while (done < bytes.size()) {
      const ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        throw std::runtime_error(std::string("cannot write to the pty: ") + std::strerror(errno));
      } else {
        if (now() > deadline) fail("the chat stopped reading its input");
        pump(10);
      }
    }
  }

  // Reads the output until `done()`; fails after kWaitSeconds or when the chat ends first.
  void wait_until(const std::string& what, const std::function<bool()>& done) {
    const double deadline = now() + kWaitSeconds;
    while (!done()) {
      if (!exited_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) {
        exited_ = true;
        pump(0);
        if (done()) return;
        fail("the chat ended while waiting for " + what);
      }
      if (now() > deadline) fail("timed out waiting for " + what);
      pump(50);
    }
  }

  // Waits until the last rows on the screen, down to the cursor's, are `rows`
  // (and the cursor in `column`, if given).
  void wait_for_rows(const std::string& what, const std::vector<std::string>& rows,
                     size_t column = std::string::npos) {
    wait_until(what, [this, &rows, column] {
      const size_t r = screen_.cursor_row();
      if (r + 1 < rows.size() || screen_.rows().size() > r + 1) return false;
      if (column != std::string::npos && screen_.cursor_column() != column) return false;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (screen_.row(r + 1 - rows.size() + i) != rows[i]) return false;
      }
      return true;
    });
  }

  // Waits for an empty prompt: the editor is reading a line (raw mode, bracketed paste on).
  void wait_for_prompt(const std::string& what) {
    wait_until(what, [this] {
      return screen_.bracketed_paste() && cursor_row() == ">" && screen_.cursor_column() == 2;
    });
  }

  // Waits until `answers` answers have ended (each ends with its statistics line) and the next prompt is up.
  void wait_for_answers(size_t answers) {
    wait_until(std::to_string(answers) + " answers", [this, answers] {
      size_t count = 0;
      for (size_t at = output_.find("| context "); at != std::string::npos; at = output_.find("| context ", at + 1)) {
        ++count;
      }
      return count >= answers;
    });
    wait_for_prompt("the prompt after answer " + std::to_string(answers));
  }

  int wait_exit() {
    wait_until("the chat to end", [this] { return exited_; });
    return status_;
  }

  // Waits for the chat to leave with status 0 after `how`, the terminal as it was.
  void expect_clean_exit(const std::string& how) {
    const int status = wait_exit();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail(how + ": status " + std::to_string(status));
    check_mode_restored();
  }

  // The terminal's mode now against the one it started in.
  void check_mode_restored() const {
    termios mode{};
    if (::tcgetattr(slave_, &mode) != 0) fail("cannot read the terminal's mode");
    if (mode.c_lflag != initial_mode_.c_lflag || mode.c_iflag != initial_mode_.c_iflag ||
        mode.c_oflag != initial_mode_.c_oflag || mode.c_cc[VMIN] != initial_mode_.c_cc[VMIN] ||
        mode.c_cc[VTIME] != initial_mode_.c_cc[VTIME]) {
      fail("the terminal was left in another mode (lflag " + std::to_string(mode.c_lflag) + ", was " +
           std::to_string(initial_mode_.c_lflag) + ")");
    }
    if (screen_.bracketed_paste()) fail("bracketed paste was left on");
  }

  [[noreturn]] void fail(const std::string& why) const {
    std::string message = why + "\nscreen:\n";
    for (const std::string& row : screen_.rows()) message += "  |" + row + "\n";
    const std::string tail = output_.size() > 3000 ? output_.substr(output_.size() - 3000) : output_;
    message += "last output:\n" + printable(tail);
    throw std::runtime_error(message);
  }

 private:
  void pump(int timeout_ms) {
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(master_, buf, sizeof buf)) > 0) {
      output_.append(buf, static_cast<size_t>(n));
      screen_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }

  int master_ = -1, slave_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  termios initial_mode_{};
  VtScreen screen_;
  std::string output_;
};

// The user messages in `--dump-prompt` output, one a prompt: in each, the
// text of the last chatml user turn. The demo model's SentencePiece
// vocabulary shows the start of a message's first word and of the "<|im_end|>"
// after it as spaces.
std::vector<std::string> messages_in(const std::string& dump) {
  const std::string open = "[prompt]\n", close = "\n[/prompt]\n";
  const std::string user = "<|im_start|>user\n ", end = " <|im_end|>\n<|im_start|>assistant\n";
  std::vector<std::string> messages;
  for (size_t at = dump.find(open); at != std::string::npos; at = dump.find(open, at + 1)) {
    const size_t stop = dump.find(close, at);
    if (stop == std::string::npos) break;
    const std::string prompt = dump.substr(at + open.size(), stop - at - open.size());
    const size_t from = prompt.rfind(user);
    if (from == std::string::npos || prompt.size() < end.size() ||
        prompt.compare(prompt.size() - end.size(), end.size(), end) != 0) {
      throw std::runtime_error("a prompt without a user turn at its end:\n" + prompt);
    }
    messages.push_back(prompt.substr(from + user.size(), prompt.size() - end.size() - from - user.size()));
  }
  return messages;
}

void expect_messages(const std::string& stderr_path, const std::vector<std::string>& expected) {
  const std::vector<std::string> got = messages_in(file_bytes(stderr_path));
  for (size_t i = 0; i < expected.size() || i < got.size(); ++i) {
    const std::string want = i < expected.size() ? expected[i] : "(none)";
    const std::string have = i < got.size() ? got[i] : "(none)";
    if (want != have) {
      throw std::runtime_error("message " + std::to_string(i + 1) + " the model received:\n" + printable(have) +
                               "\nexpected:\n" + printable(want));
    }
  }
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// The rows "> " + text takes on the screen, cut every kColumns columns (ASCII),
// trailing blanks cut as VtScreen shows rows.
std::vector<std::string> wrapped(const std::string& text) {
  const std::string all = "> " + text;
  std::vector<std::string> rows;
  for (size_t i = 0; i < all.size(); i += kColumns) {
    rows.push_back(all.substr(i, kColumns));
    rows.back().erase(rows.back().find_last_not_of(' ') + 1);
  }
  return rows;
}

// The first chat: every kind of input, then Ctrl-D.
void first_chat(const std::string& peak, const std::string& dir, const std::vector<std::string>& env) {
  const std::string err = dir + "first.stderr";
  PtyChat chat(peak, err, env);
  chat.wait_for_prompt("the first prompt");

  // Cursor edits: "Hello wrld", Left x3, "o".
  chat.type("Hello wrld");
  chat.type("\033[D\033[D\033[D");
  chat.type("o");
  chat.wait_for_rows("the edited line", {"> Hello world"}, 10);  // after "> Hello wo"
  chat.type("\r");
  chat.wait_for_answers(1);

  // A bracketed paste of three lines (line ends as CR, and CR LF) is one message.
  chat.type("\033[200~line one\rline two\r\nline three\033[201~");
  chat.wait_for_rows("the pasted lines", {"> line one", ". line two", ". line three"});
  chat.type("\r");
  chat.wait_for_answers(2);

  // UTF-8 and word edits: Ctrl-W, Alt-Backspace, Ctrl-A, Right over "café".
  chat.type("caf\xc3\xa9 au lait");
  chat.type("\x17");
  chat.type("\033\x7f");
  chat.type("noir\x01\033[C\033[C\033[C\033[C!");
  chat.wait_for_rows("the UTF-8 edit", {"> caf\xc3\xa9! noir"}, 7);  // after "> café!"
  chat.type("\r");
  chat.wait_for_answers(3);

  // History: Up (both cursor key modes, and Ctrl-P) back to the first message, Down, Up.
  chat.type("\033[A");
  chat.wait_for_rows("the last message recalled", {"> caf\xc3\xa9! noir"});
  chat.type("\033OA");
  chat.wait_for_rows("the paste recalled", {"> line one", ". line two", ". line three"});
  chat.type("\x10");
  chat.wait_for_rows("the first message recalled", {"> Hello world"});
  chat.type("\033[B");
  chat.wait_for_rows("Down to the paste", {"> line one", ". line two", ". line three"});
  chat.type("\033[A\r");
  chat.wait_for_answers(4);

  // Ctrl-C at the prompt abandons the line; the chat goes on.
  chat.type("discard me");
  chat.wait_for_rows("the line to abandon", {"> discard me"});
  chat.type("\x03");
  chat.wait_for_rows("^C and a fresh prompt", {"> discard me^C (Ctrl-C again or Ctrl-D to leave)", ">"});
  chat.type("kept\r");
  chat.wait_for_answers(5);

  // A line of 6000 bytes, typed at once: past the terminal's 4095-byte
  // canonical limit; taller than the screen, so the editor shows its end.
  std::string long_line;
  while (long_line.size() < 6000) long_line += "the cat sat on the mat and ";
  long_line += "slept";
  chat.type(long_line);
  const std::vector<std::string> rows = wrapped(long_line);
  chat.wait_until("the long line's last screenful", [&] {
    return chat.screen().rows() == std::vector<std::string>(rows.end() - kRows, rows.end());
  });
  chat.type("\r");
  chat.wait_for_answers(6);

  // A line ending in '\' goes on on the next.
  chat.type("first line\\\r");
  chat.wait_for_rows("the continuation line", {"> first line", "."});
  chat.type("second line\r");
  chat.wait_for_answers(7);

  chat.type("\x04");
  chat.expect_clean_exit("Ctrl-D");

  const std::vector<std::string> sent = {"Hello world", "line one\nline two\nline three", "caf\xc3\xa9! noir",
                                         "Hello world", "kept", long_line, "first line\nsecond line"};
  expect_messages(err, sent);
  const std::string history = file_bytes(dir + "state/peak/history");
  std::string expected;
  for (const std::string& m : sent) {
    for (const char c : m) expected += c == '\n' ? std::string("\\n") : std::string(1, c);
    expected += "\n";
  }
  expect(history == expected, "the history file holds:\n" + printable(history) + "\nexpected:\n" + printable(expected));
  struct stat st {};
  expect(::stat((dir + "state/peak/history").c_str(), &st) == 0 && (st.st_mode & 0777) == 0600,
         "the history file is not private (0600)");
}

// A second chat has the first one's history; Ctrl-C twice leaves.
void second_chat(const std::string& peak, const std::string& dir, const std::vector<std::string>& env) {
  const std::string err = dir + "second.stderr";
  PtyChat chat(peak, err, env);
  chat.wait_for_prompt("the first prompt");
  chat.type("\033[A");
  chat.wait_for_rows("the first chat's last message", {"> first line", ". second line"});
  chat.type("\r");
  chat.wait_for_answers(1);
  chat.type("\x03");
  chat.wait_until("the first Ctrl-C", [&] { return chat.output().find("^C") != std::string::npos; });
  chat.type("\x03");
  chat.expect_clean_exit("Ctrl-C twice");
  expect_messages(err, {"first line\nsecond line"});
}

// SIGTERM at the prompt ends the chat as SIGTERM does, the terminal restored.
void terminated_chat(const std::string& peak, const std::string& dir, const std::vector<std::string>& env) {
  PtyChat chat(peak, dir + "third.stderr", env);
  chat.wait_for_prompt("the first prompt");
  chat.type("half typed");
  chat.wait_for_rows("the typing", {"> half typed"});
  ::kill(chat.pid(), SIGTERM);
  const int status = chat.wait_exit();
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) chat.fail("SIGTERM: status " + std::to_string(status));
  chat.check_mode_restored();
}

// Tools at the line editor: the model's call shown, its result asked for under
// a prompt naming the tool, then the answer to it and the message prompt again.
void tools_chat(const std::string& peak, const std::string& dir, const std::vector<std::string>& env,
                const std::string& qwen3) {
  const std::string tools = dir + "tools.json";
  std::FILE* f = std::fopen(tools.c_str(), "wb");
  expect(f != nullptr, "cannot write " + tools);
  std::fputs(
      "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": "
      "\"object\", \"properties\": {\"city\": {\"enum\": [\"Paris\", \"Oslo\"]}}, \"required\": [\"city\"]}}}]",
      f);
  expect(std::fclose(f) == 0, "cannot write " + tools);
  PtyChat chat(peak, dir + "tools.stderr", env,
               {"-m", qwen3, "--temp", "0", "-t", "1", "--tools", tools, "--tool-choice", "required"});
  chat.wait_for_prompt("the first prompt");
  chat.type("Name a colour.\r");
  chat.wait_until("the call and the result's prompt", [&] {
    bool call_shown = false;
    for (const std::string& row : chat.screen().rows()) {
      call_shown = call_shown || row.rfind("[tool call] get_weather {\"city\":\"", 0) == 0;
    }
    return call_shown && chat.cursor_row() == "result of get_weather>" && chat.screen().cursor_column() == 23;
  });
  chat.type("Sunny, 21 C\r");
  chat.wait_for_answers(2);
  expect(chat.output().find("Blue.") != std::string::npos, "no answer to the result in:\n" + printable(chat.output()));
  chat.type("\x04");
  chat.expect_clean_exit("Ctrl-D after the tools");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: chat_tty PEAK DIR [SCRIPTED_QWEN3]\n");
    return 2;
  }
  const std::string dir = peak::test::make_scratch_dir(std::string(argv[2]) + "/", "chat_tty_");
  const std::vector<std::string> env = {"TERM=xterm-256color", "HOME=" + dir + "home",
                                        "XDG_STATE_HOME=" + dir + "state"};
  try {
    first_chat(argv[1], dir, env);
    std::printf("first chat: cursor edits, paste, history, Ctrl-C, a 6000-byte line, '\\', Ctrl-D: ok\n");
    second_chat(argv[1], dir, env);
    std::printf("second chat: history from the file, Ctrl-C twice: ok\n");
    terminated_chat(argv[1], dir, env);
    std::printf("SIGTERM at the prompt: terminal restored\n");
    if (argc == 4) {
      tools_chat(argv[1], dir, env, argv[3]);
      std::printf("tools: the call shown, its result typed at its own prompt, the answer: ok\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chat_tty: %s\n(files in %s)\n", e.what(), dir.c_str());
    return 1;
  }
  ::nftw(dir.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
         FTW_DEPTH | FTW_PHYS);
  return 0;
}
