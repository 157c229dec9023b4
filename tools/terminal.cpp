#include "terminal.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <system_error>

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace {

constexpr char kPasteOn[] = "\033[?2004h";
constexpr char kPasteOff[] = "\033[?2004l";

// One terminal is raw at a time; the signal handlers read this state, on
// whichever thread the signal lands on: g_raw is set after the rest.
struct termios g_saved;
int g_in = -1, g_out = -1;
std::atomic<bool> g_raw{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used in signal handlers");

constexpr int kEndingSignals[] = {SIGTERM, SIGHUP, SIGQUIT};
struct sigaction g_previous[sizeof kEndingSignals / sizeof kEndingSignals[0]];
bool g_handlers_installed = false;

void write_fully(int fd, const char* text, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, text, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    text += k;
    n -= static_cast<size_t>(k);
  }
}

// Restores the terminal, then does what was done before for this signal:
// the previous handler (main.cpp's removes temporary files and re-raises), or
// the default action.
void on_ending_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  restore_terminal_from_signal();
  for (size_t i = 0; i < sizeof kEndingSignals / sizeof kEndingSignals[0]; ++i) {
    if (kEndingSignals[i] != sig) continue;
    const struct sigaction& old = g_previous[i];
    if (old.sa_flags & SA_SIGINFO) {
      old.sa_sigaction(sig, info, context);
    } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      old.sa_handler(sig);
    } else {
      ::signal(sig, SIG_DFL);
      ::raise(sig);
    }
  }
  errno = saved_errno;
}

void install_handlers() {
  if (g_handlers_installed) return;
  g_handlers_installed = true;
  for (size_t i = 0; i < sizeof kEndingSignals / sizeof kEndingSignals[0]; ++i) {
    if (::sigaction(kEndingSignals[i], nullptr, &g_previous[i]) != 0) continue;
    if (!(g_previous[i].sa_flags & SA_SIGINFO) && g_previous[i].sa_handler == SIG_IGN) continue;  // nohup
    struct sigaction sa {};
    sa.sa_sigaction = on_ending_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kEndingSignals[i], &sa, nullptr);
  }
}

}  // namespace

void restore_terminal_from_signal() {
  if (!g_raw.exchange(false)) return;
  write_fully(g_out, kPasteOff, sizeof kPasteOff - 1);
  write_fully(g_out, "\r\n", 2);
  ::tcsetattr(g_in, TCSANOW, &g_saved);
}

RawTerminal::RawTerminal(int in_fd, int out_fd) {
  struct termios saved {};
  if (::tcgetattr(in_fd, &saved) != 0) throw std::system_error(errno, std::generic_category(), "tcgetattr");
  install_handlers();
  g_saved = saved;
  g_in = in_fd;
  g_out = out_fd;
  enter();
}

RawTerminal::~RawTerminal() { leave(); }

void RawTerminal::enter() {
  struct termios raw = g_saved;
  raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INLCR | IGNCR | INPCK | ISTRIP | IXON);
  raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN | ISIG);
  raw.c_cflag |= CS8;
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  g_raw.store(true);
  // TCSADRAIN, not TCSAFLUSH: what was typed ahead during an answer is kept.
  if (::tcsetattr(g_in, TCSADRAIN, &raw) != 0) {
    const int err = errno;
    g_raw.store(false);
    throw std::system_error(err, std::generic_category(), "tcsetattr");
  }
  write_fully(g_out, kPasteOn, sizeof kPasteOn - 1);
}

void RawTerminal::leave() {
  write_fully(g_out, kPasteOff, sizeof kPasteOff - 1);
  ::tcsetattr(g_in, TCSADRAIN, &g_saved);
  g_raw.store(false);
}

void RawTerminal::suspend_process() {
  leave();
  ::kill(0, SIGTSTP);  // returns once the process group is continued
  enter();
}

TerminalSize terminal_size(int fd) {
  struct winsize ws {};
  TerminalSize size{80, 24};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0) {
    if (ws.ws_col > 0) size.columns = ws.ws_col;
    if (ws.ws_row > 0) size.rows = ws.ws_row;
  }
  return size;
}
