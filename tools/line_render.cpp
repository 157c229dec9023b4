#include "line_render.h"

#include <algorithm>

#include "line_buffer.h"

namespace {

constexpr size_t kTabStop = 8;

// Columns of `text` on screen, CSI sequences (ESC [ ... final byte) taking none.
size_t visible_width(std::string_view text) {
  size_t width = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
      ++i;
      continue;
    }
    size_t n = 0;
    width += static_cast<size_t>(column_width(decode_char(text, i, &n)));
    i += n;
  }
  return width;
}

std::string csi(size_t n, char command) { return "\033[" + std::to_string(n) + command; }

class RowBuilder {
 public:
  RowBuilder(Layout& layout, size_t width) : layout_(layout), width_(width) {}

  size_t column() const { return column_; }
  void start(const Prompt& prompt) {
    row_ = prompt.text;
    column_ = prompt.width;
  }
  void end_row() {
    layout_.rows.push_back(std::move(row_));
    row_.clear();
    column_ = 0;
  }
  // Puts the cursor here, on the next row when this one is full.
  void place_cursor() {
    if (column_ >= width_) end_row();
    layout_.cursor_row = layout_.rows.size();
    layout_.cursor_column = column_;
  }
  // Draws a glyph `columns` wide, on the next row when it does not fit here.
  void put(std::string_view glyph, size_t columns, bool cursor_here) {
    if (column_ + columns > width_ && column_ > 0) end_row();
    if (cursor_here) place_cursor();
    row_.append(glyph);
    column_ += columns;
  }

 private:
  Layout& layout_;
  size_t width_;
  std::string row_;
  size_t column_ = 0;
};

}  // namespace

Prompt::Prompt(std::string t) : text(std::move(t)), width(visible_width(text)) {}

Layout lay_out(const Prompt& prompt, const Prompt& continuation, std::string_view text, size_t cursor, size_t width) {
  // A prompt must leave room for a wide character; narrower terminals wrap as they will.
  width = std::max({width, prompt.width + 2, continuation.width + 2});
  Layout layout;
  RowBuilder row(layout, width);
  row.start(prompt);
  size_t i = 0;
  while (i < text.size()) {
    const bool cursor_here = i == cursor;
    const auto c = static_cast<unsigned char>(text[i]);
    size_t n = 1;
    if (c == '\n') {
      if (cursor_here) row.place_cursor();
      row.end_row();
      row.start(continuation);
    } else if (c == '\t') {
      if (row.column() >= width) row.end_row();
      const size_t spaces = std::min(kTabStop - row.column() % kTabStop, width - row.column());
      row.put(std::string(spaces, ' '), spaces, cursor_here);
    } else if (c < 0x20 || c == 0x7f) {
      const char glyph[2] = {'^', static_cast<char>(c ^ 0x40)};
      row.put(std::string_view(glyph, 2), 2, cursor_here);
    } else {
      const uint32_t cp = decode_char(text, i, &n);
      const bool invalid = (cp == 0xfffd && n == 1) || (cp >= 0x80 && cp <= 0x9f);  // C1 controls act on terminals
      if (invalid) {
        row.put("\xef\xbf\xbd", 1, cursor_here);
      } else {
        row.put(text.substr(i, n), static_cast<size_t>(column_width(cp)), cursor_here);
      }
    }
    i += n;
  }
  if (cursor >= text.size()) row.place_cursor();
  row.end_row();
  return layout;
}

std::string Renderer::redraw(const Layout& layout, size_t height, bool whole) {
  std::string out;
  if (drawn_ && cursor_row_ > 0) out += csi(cursor_row_, 'A');
  out += "\r\033[J";
  const size_t rows = layout.rows.size();
  const size_t shown = whole ? rows : std::min(rows, std::max<size_t>(height, 1));
  // Keep the window where it was unless the cursor left it.
  top_ = std::min(top_, rows - shown);
  if (layout.cursor_row < top_) top_ = layout.cursor_row;
  if (layout.cursor_row >= top_ + shown) top_ = layout.cursor_row + 1 - shown;
  for (size_t r = top_; r < top_ + shown; ++r) {
    if (r > top_) out += "\r\n";
    out += layout.rows[r];
  }
  const size_t last = top_ + shown - 1;
  if (last > layout.cursor_row) out += csi(last - layout.cursor_row, 'A');
  out += '\r';
  if (layout.cursor_column > 0) out += csi(layout.cursor_column, 'C');
  drawn_ = true;
  cursor_row_ = layout.cursor_row - top_;
  return out;
}
