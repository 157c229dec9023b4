// Interrupts `peak synth` with a signal while it writes a model and checks that
// it dies of that signal leaving nothing behind: no output file and no
// temporary "OUT.partial..." file.
//   interrupted_writer PEAK DIR INT|TERM|HUP|QUIT
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "scratch_dir.h"

namespace {

using peak::test::files_in;

// True once a temporary file has some bytes in it: the writer is mid-write.
bool writing(const std::string& dir) {
  for (const std::string& name : files_in(dir)) {
    struct stat st {};
    if (name.rfind("out.gguf.partial", 0) == 0 && ::stat((dir + name).c_str(), &st) == 0 && st.st_size > 0) {
      return true;
    }
  }
  return false;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "interrupted_writer: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: interrupted_writer PEAK DIR INT|TERM|HUP|QUIT");
  const std::string signal_name = argv[3];
  const int sig = signal_name == "INT"    ? SIGINT
                  : signal_name == "TERM" ? SIGTERM
                  : signal_name == "HUP"  ? SIGHUP
                  : signal_name == "QUIT" ? SIGQUIT
                                          : 0;
  if (sig == 0) return fail("unknown signal " + signal_name);
  const std::string dir = peak::test::make_scratch_dir(std::string(argv[2]) + "/", "interrupted_");
  const std::string out = dir + "out.gguf";

  const pid_t pid = ::fork();
  if (pid < 0) return fail("cannot fork");
  if (pid == 0) {
    // The signals as an interactive shell leaves them, whatever this test inherited.
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, SIG_DFL);
    const rlimit no_core{0, 0};  // SIGQUIT's default action dumps core
    ::setrlimit(RLIMIT_CORE, &no_core);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDERR_FILENO);  // the progress bar
    ::execl(argv[1], argv[1], "synth", "--preset", "qwen3-0.6b", "--type", "Q8_0", "-o", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (at most 30 s) for the write to be under way.
  const timespec pause{0, 2 * 1000 * 1000};
  int status = 0;
  for (int i = 0; i < 15000 && !writing(dir); ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return fail("peak synth ended before it could be interrupted");
    ::nanosleep(&pause, nullptr);
  }
  if (!writing(dir)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return fail("peak synth never started writing");
  }
  ::kill(pid, sig);
  ::waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != sig) {
    return fail("peak synth did not end by the signal (status " + std::to_string(status) + ")");
  }
  const std::vector<std::string> left = files_in(dir);
  for (const std::string& name : left) ::unlink((dir + name).c_str());
  ::rmdir(dir.c_str());
  if (!left.empty()) return fail("left behind after SIG" + std::string(argv[3]) + ": " + left[0]);
  std::printf("peak synth interrupted by SIG%s mid-write: nothing left behind\n", argv[3]);
  return 0;
}
