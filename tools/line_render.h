// Drawing the line being edited: the prompt and the text laid out in screen
// rows (wrapped at the terminal's width, a continuation prompt after each
// newline of a multi-line message), and the escape sequences that draw a new
// layout over the last one. Rows are ended explicitly ("\r\n"), never by the
// terminal's own wrap, so a row that fills the width exactly draws the same
// on every terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

struct Prompt {
  explicit Prompt(std::string text);  // may hold SGR sequences (colours); they take no columns
  std::string text;
  size_t width;  // columns it takes on screen
};

struct Layout {
  std::vector<std::string> rows;  // the bytes that draw each screen row
  size_t cursor_row = 0;
  size_t cursor_column = 0;
};

// `text` with the cursor at byte `cursor`, after `prompt`, on a screen `width`
// columns wide. Tabs are drawn as spaces to the next multiple of 8 columns,
// other control characters as ^X, invalid UTF-8 as U+FFFD. A cursor at the end
// of a full row sits at the start of the next one.
Layout lay_out(const Prompt& prompt, const Prompt& continuation, std::string_view text, size_t cursor, size_t width);

// Redraws layouts in place. A layout taller than the screen is shown through
// a window of screen rows that follows the cursor.
class Renderer {
 public:
  // The bytes that replace the last drawing with `layout` on a screen `height`
  // rows tall. With `whole`, every row is written (the window left behind)
  // so the scrollback keeps all of a message once it is sent.
  std::string redraw(const Layout& layout, size_t height, bool whole = false);
  // Nothing is drawn (a new prompt line, a cleared screen): the next drawing
  // starts on the cursor's row.
  void forget() { drawn_ = false; top_ = 0; cursor_row_ = 0; }

 private:
  bool drawn_ = false;
  size_t top_ = 0;         // the first layout row on screen
  size_t cursor_row_ = 0;  // the cursor's screen row, counted from the first row drawn
};
