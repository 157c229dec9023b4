// The text being edited at the `peak chat` prompt and its cursor, with the
// edits a readline user knows. The text is UTF-8 (pasted text may hold invalid
// bytes: each counts as one character); the cursor is a byte offset that only
// ever rests on a character boundary, and a base character with the combining
// marks after it moves and deletes as one. '\n' separates the lines of a
// multi-line message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// The code point at s[i] and its length in bytes (1 for a byte that does not
// start a valid UTF-8 sequence; it decodes as U+FFFD).
uint32_t decode_char(std::string_view s, size_t i, size_t* length);
// Terminal columns a code point takes: 0 for combining marks and zero-width
// characters, 2 for East Asian wide characters and emoji, else 1 (control
// characters are the caller's business).
int column_width(uint32_t cp);

// Where the character (with its combining marks) at or before offset `i` begins
// and where the one at `i` ends.
size_t previous_boundary(std::string_view s, size_t i);
size_t next_boundary(std::string_view s, size_t i);

class LineBuffer {
 public:
  const std::string& text() const { return text_; }
  size_t cursor() const { return cursor_; }
  bool empty() const { return text_.empty(); }

  // Replaces the text; the cursor goes to its end.
  void assign(std::string text);
  void clear() { assign(std::string()); }
  void insert(std::string_view s);

  void move_left();
  void move_right();
  void move_line_start();  // of the line the cursor is on
  void move_line_end();
  void move_to_end() { cursor_ = text_.size(); }
  void move_word_left();   // to the start of this or the previous word (letters, digits)
  void move_word_right();  // to the end of this or the next word

  void erase_before();  // Backspace
  void erase_at();      // Delete
  // The kills return the text they remove (for Ctrl-Y).
  std::string kill_to_line_start();  // Ctrl-U; at a line's start, the newline before it
  std::string kill_to_line_end();    // Ctrl-K; at a line's end, the newline after it
  std::string kill_word_before();    // Ctrl-W: back to the previous whitespace
  std::string kill_alnum_word_before();  // Alt-Backspace: back to the previous non-letter
  std::string kill_word_after();     // Alt-D

 private:
  std::string erase_range(size_t from, size_t to);
  size_t word_start_before(size_t i) const;
  size_t word_end_after(size_t i) const;

  std::string text_;
  size_t cursor_ = 0;
};
