// The messages typed at the `peak chat` prompt, for Up and Down, and the file
// that keeps them for the next chat.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>

class History {
 public:
  explicit History(size_t max_entries) : max_entries_(max_entries) {}

  // Adds a message as the newest entry, unless it is empty or repeats the
  // newest; the oldest entries beyond max_entries go. Browsing starts over.
  // Returns whether it was added.
  bool add(std::string entry);
  size_t size() const { return entries_.size(); }
  const std::string& operator[](size_t i) const { return entries_[i]; }

  // Browsing, as readline does: Up shows the entry before the one shown, Down
  // the one after, and below the newest is the line being written. Each takes
  // the text shown now (kept, edits and all, until browsing stops) and returns
  // the text to show, or nullptr at either end.
  const std::string* older(const std::string& shown);
  const std::string* newer(const std::string& shown);
  void stop_browsing();

 private:
  const std::string& text_at(size_t i) const;

  size_t max_entries_;
  std::deque<std::string> entries_;
  size_t position_ = 0;                  // the entry shown; entries_.size(): the line being written
  bool browsing_ = false;
  std::map<size_t, std::string> edited_;  // position -> the text left there while browsing
};

// The history file: one entry a line, oldest first, '\n' and '\' inside an
// entry written as \n and \\. Entries are appended as they are sent, so
// several chats at once all keep theirs. A file that cannot be read or
// written never stops the chat: the first failure is reported through `warn`
// and the chat goes on with the history it has.
class HistoryFile {
 public:
  // $XDG_STATE_HOME/peak/history, else $HOME/.local/state/peak/history; empty
  // when neither variable holds an absolute path.
  static std::string default_path();

  HistoryFile(std::string path, std::function<void(const std::string&)> warn)
      : path_(std::move(path)), warn_(std::move(warn)) {}
  const std::string& path() const { return path_; }

  // Adds the file's newest entries to `history` (no file yet is no error). A
  // file holding more entries than `history` keeps, or more bytes than are
  // read, is rewritten with only what was loaded.
  void load(History& history, size_t max_entries);
  void append(const std::string& entry);

  // The escaping of one entry, for tests.
  static std::string escape(const std::string& entry);
  static std::string unescape(const std::string& line);

 private:
  void warn(const std::string& what);
  void rewrite(const History& history);

  std::string path_;
  std::function<void(const std::string&)> warn_;
  bool warned_ = false;
  bool write_failed_ = false;  // stop trying after the first failed write
};
