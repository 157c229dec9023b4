// Reads `peak chat`'s messages at a terminal: the line editor (line_editor.h)
// on a raw terminal (terminal.h), drawn by line_render.h, with its history
// loaded from and appended to the history file (line_history.h).
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "line_editor.h"
#include "line_history.h"
#include "line_keys.h"
#include "line_render.h"

class RawTerminal;

// Whether both descriptors are terminals that can be edited on (not TERM=dumb).
bool line_editing_possible(int in_fd, int out_fd);

class TerminalLineReader {
 public:
  // The history file is read now.
  TerminalLineReader(int in_fd, int out_fd, Prompt prompt, Prompt continuation, HistoryFile history_file);

  // Shows the prompt and returns the message typed (Enter), or false when the
  // user leaves: Ctrl-D on an empty line, Ctrl-C twice in a row, or the
  // terminal is gone. Ctrl-C once abandons the line for a fresh prompt.
  bool read_line(std::string* message);
  // The prompt of the next lines (peak chat asks a tool's result under its own).
  void set_prompt(Prompt prompt) { prompt_ = std::move(prompt); }

 private:
  enum class Outcome { Editing, Message, Leave };
  Outcome handle(const Key& key, RawTerminal& raw, std::string* message);
  void draw(bool whole = false);
  void write_out(const std::string& bytes) const;

  int in_, out_;
  Prompt prompt_, continuation_;
  History history_;
  HistoryFile history_file_;
  LineEditor editor_;
  KeyDecoder decoder_;
  Renderer renderer_;
  std::deque<Key> pending_;  // keys read past the end of the last message
};
