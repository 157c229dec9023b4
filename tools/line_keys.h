// Keys from a terminal in raw mode: the bytes it sends decoded into the keys
// the `peak chat` line editor acts on. Control characters, the escape
// sequences of xterm, VT100 (application mode), rxvt and the Linux console for
// the cursor and editing keys, Alt-<key> as ESC <key>, UTF-8 text, and
// bracketed paste (ESC[200~ ... ESC[201~) as one Paste key with its text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

enum class KeyCode {
  Text,              // printable text (`text`); a run of it arrives as one key
  Paste,             // bracketed paste (`text`, line ends as '\n')
  Enter,             // CR or LF
  InsertNewline,     // Alt-Enter
  Backspace,         // DEL, Ctrl-H
  Delete,            // ESC[3~
  Left, Right,       // arrows, Ctrl-B / Ctrl-F
  WordLeft, WordRight,  // Alt-B / Alt-F, Ctrl- or Alt-arrows
  Home, End,         // Ctrl-A / Ctrl-E and the Home/End sequences
  Up, Down,          // arrows, Ctrl-P / Ctrl-N
  KillWordBefore,    // Ctrl-W
  KillAlnumWordBefore,  // Alt-Backspace
  KillWordAfter,     // Alt-D
  KillToLineStart,   // Ctrl-U
  KillToLineEnd,     // Ctrl-K
  Yank,              // Ctrl-Y
  ClearScreen,       // Ctrl-L
  Interrupt,         // Ctrl-C
  EndOfFile,         // Ctrl-D
  Suspend,           // Ctrl-Z
  Ignored,           // a key or sequence the editor has no use for
};

struct Key {
  KeyCode code;
  std::string text;  // Text and Paste only
};

class KeyDecoder {
 public:
  // Decodes `bytes` and appends the keys they complete to `keys`. A sequence
  // cut between two reads (an escape sequence, a UTF-8 character, a paste)
  // completes in a later call.
  void feed(std::string_view bytes, std::vector<Key>& keys);

 private:
  enum class State { Ground, Escape, Csi, Ss3, Utf8, Paste };

  void ground(unsigned char c, std::vector<Key>& keys);
  void escape(unsigned char c, std::vector<Key>& keys);
  void csi(unsigned char c, std::vector<Key>& keys);
  void paste(char c, std::vector<Key>& keys);
  static void emit(std::vector<Key>& keys, KeyCode code);
  static void emit_text(std::vector<Key>& keys, std::string_view text);

  State state_ = State::Ground;
  std::string seq_;    // an escape sequence's parameters, or a UTF-8 character's bytes so far
  size_t utf8_need_ = 0;
  std::string paste_;  // the paste so far
};
