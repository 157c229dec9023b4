// The `peak chat` line editor, key by key: what each key does to the line and
// the history, apart from any terminal (terminal_line_reader.h connects it to
// one). Multi-line messages: Enter on a line that ends with '\' continues the
// message on a new line (the '\' is dropped), as in llama.cpp; Alt-Enter
// starts a new line anywhere; a bracketed paste is inserted as it is, its
// newlines included.
#pragma once

#include <string>

#include "line_buffer.h"
#include "line_history.h"
#include "line_keys.h"

enum class EditResult {
  Editing,      // the key changed the line (or nothing): redraw it
  Submitted,    // Enter: the line is the message (the cursor is at its end)
  Interrupted,  // Ctrl-C: the line is to be abandoned (the cursor is at its end)
  Exit,         // Ctrl-D on an empty line, or a second Ctrl-C in a row
  ClearScreen,  // Ctrl-L
  Suspend,      // Ctrl-Z
};

class LineEditor {
 public:
  explicit LineEditor(History& history) : history_(history) {}

  EditResult apply(const Key& key);
  const LineBuffer& line() const { return line_; }

  // Starts an empty line (after a message is sent, or Ctrl-C), and returns the old one.
  std::string start_new_line();

 private:
  // Keeps killed text for Ctrl-Y; kills in a row add up, as in readline.
  void kill(std::string killed, bool backward);

  History& history_;
  LineBuffer line_;
  std::string killed_;        // what Ctrl-Y puts back
  bool killing_ = false;      // the last key was a kill
  bool after_kill_ = false;   // the key before this one was a kill
  bool interrupted_ = false;  // the last key was Ctrl-C
};
