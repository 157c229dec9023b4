// A small terminal emulator for the line editor's tests: what a user would see
// after a program's output, written from xterm's documented behaviour
// (ctlseqs), not from the editor's code. It knows printable UTF-8 (CJK
// ideographs and kana two columns wide, combining marks none), CR, LF, BS,
// TAB, automatic wrap with xterm's pending-wrap state at the last column,
// scrolling into a scrollback, the cursor motions CSI n A/B/C/D and CSI r;c H,
// erasing (CSI J, CSI 2J, CSI K), and the bracketed-paste mode CSI ?2004 h/l.
// SGR (colours) and other sequences are read and ignored.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

class VtScreen {
 public:
  VtScreen(size_t columns, size_t rows);

  void feed(std::string_view bytes);

  // A row as text, trailing blanks cut.
  std::string row(size_t r) const;
  // Rows 0..n-1 of the screen, with trailing blank rows cut.
  std::vector<std::string> rows() const;
  // Rows that scrolled off the top, oldest first.
  const std::vector<std::string>& scrollback() const { return scrollback_; }
  size_t cursor_row() const { return row_; }
  size_t cursor_column() const { return column_; }
  bool bracketed_paste() const { return bracketed_paste_; }

 private:
  void print(std::string_view glyph, size_t width);
  void line_feed();
  void csi(char final);
  void erase(size_t row, size_t from_column, size_t to_column);

  size_t columns_, height_;
  std::vector<std::vector<std::string>> cells_;  // "" is a blank, or the right half of a wide character
  std::vector<std::string> scrollback_;
  size_t row_ = 0, column_ = 0;
  bool pending_wrap_ = false;
  bool bracketed_paste_ = false;

  enum class State { Ground, Escape, Csi, Utf8 } state_ = State::Ground;
  std::string sequence_;
  size_t utf8_need_ = 0;
};
