#include "terminal_line_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <unistd.h>

#include "terminal.h"

namespace {

constexpr size_t kHistoryEntries = 1000;

}  // namespace

bool line_editing_possible(int in_fd, int out_fd) {
  const char* term = std::getenv("TERM");
  return ::isatty(in_fd) && ::isatty(out_fd) && !(term && std::strcmp(term, "dumb") == 0);
}

TerminalLineReader::TerminalLineReader(int in_fd, int out_fd, Prompt prompt, Prompt continuation,
                                       HistoryFile history_file)
    : in_(in_fd),
      out_(out_fd),
      prompt_(std::move(prompt)),
      continuation_(std::move(continuation)),
      history_(kHistoryEntries),
      history_file_(std::move(history_file)),
      editor_(history_) {
  history_file_.load(history_, kHistoryEntries);
}

void TerminalLineReader::write_out(const std::string& bytes) const {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(out_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal is gone: the next read says so
    done += static_cast<size_t>(n);
  }
}

void TerminalLineReader::draw(bool whole) {
  const TerminalSize size = terminal_size(out_);
  const LineBuffer& line = editor_.line();
  write_out(renderer_.redraw(lay_out(prompt_, continuation_, line.text(), line.cursor(), size.columns), size.rows,
                             whole));
}

bool TerminalLineReader::read_line(std::string* message) {
  // What the chat printed through stdio goes before the prompt.
  std::fflush(stdout);
  std::fflush(stderr);
  RawTerminal raw(in_, out_);
  editor_.start_new_line();
  renderer_.forget();
  std::vector<Key> keys;
  char buf[4096];
  while (true) {
    while (!pending_.empty()) {
      const Key key = std::move(pending_.front());
      pending_.pop_front();
      const Outcome outcome = handle(key, raw, message);
      if (outcome != Outcome::Editing) return outcome == Outcome::Message;
    }
    draw();  // once for all the keys one read brought
    const ssize_t n = ::read(in_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // a hangup, or the terminal closed
      write_out("\r\n");
      return false;
    }
    keys.clear();
    decoder_.feed(std::string_view(buf, static_cast<size_t>(n)), keys);
    for (Key& k : keys) pending_.push_back(std::move(k));
  }
}

TerminalLineReader::Outcome TerminalLineReader::handle(const Key& key, RawTerminal& raw, std::string* message) {
  switch (editor_.apply(key)) {
    case EditResult::Editing: break;
    case EditResult::Submitted:
      draw(/*whole=*/true);
      write_out("\r\n");
      *message = editor_.start_new_line();
      if (history_.add(*message)) history_file_.append(*message);
      return Outcome::Message;
    case EditResult::Interrupted:
      draw();
      write_out("^C\033[2m (Ctrl-C again or Ctrl-D to leave)\033[0m\r\n");
      editor_.start_new_line();
      renderer_.forget();
      break;
    case EditResult::Exit:
      write_out(key.code == KeyCode::Interrupt ? "^C\r\n" : "\r\n");
      return Outcome::Leave;
    case EditResult::ClearScreen:
      write_out("\033[H\033[2J");
      renderer_.forget();
      break;
    case EditResult::Suspend:
      draw();
      write_out("\r\n");
      raw.suspend_process();
      renderer_.forget();
      break;
  }
  return Outcome::Editing;
}
