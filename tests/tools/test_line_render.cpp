// Drawing the line: the renderer's output is played on a terminal emulator
// (vt_screen.h) and what the screen shows is compared with what a line of
// that text should look like, wrapped at the width, worked out here on its own.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "line_render.h"
#include "vt_screen.h"

namespace {

const Prompt kPrompt("\033[32m> \033[0m");
const Prompt kMore("\033[2m. \033[0m");

struct Drawn {
  std::vector<std::string> rows;
  size_t cursor_row, cursor_column;
};

// Draws `text` on `screen` over what `renderer` drew before.
void draw(VtScreen& screen, Renderer& renderer, const std::string& text, size_t cursor, size_t width, size_t height,
          bool whole = false) {
  screen.feed(renderer.redraw(lay_out(kPrompt, kMore, text, cursor, width), height, whole));
}

// What ASCII text looks like on a screen `width` wide: "> " then the text, each
// newline starting a row with ". ", rows cut every `width` columns; the cursor
// on the next row when it would be past the last column.
Drawn expected(const std::string& text, size_t cursor, size_t width) {
  Drawn d{{""}, 0, 0};
  std::string row = "> ";
  auto place = [&] {
    if (row.size() == width) {
      d.rows.back() = row;
      d.rows.push_back("");
      row.clear();
    }
    d.cursor_row = d.rows.size() - 1;
    d.cursor_column = row.size();
  };
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == cursor) place();
    if (i == text.size()) break;
    if (text[i] == '\n') {
      d.rows.back() = row;
      d.rows.push_back("");
      row = ". ";
      continue;
    }
    if (row.size() == width) {
      d.rows.back() = row;
      d.rows.push_back("");
      row.clear();
    }
    row += text[i];
  }
  d.rows.back() = row;
  for (std::string& r : d.rows) r.erase(r.find_last_not_of(' ') + 1);  // as VtScreen shows rows
  while (!d.rows.empty() && d.rows.back().empty()) d.rows.pop_back();
  return d;
}

TEST(LineRender, PromptWidthLeavesOutColours) {
  EXPECT_EQ(kPrompt.width, 2u);
  EXPECT_EQ(Prompt("\033[1;38;5;208m\xe4\xb8\xad> \033[0m").width, 4u);
}

TEST(LineRender, ShortLine) {
  VtScreen screen(40, 10);
  Renderer r;
  draw(screen, r, "hello", 3, 40, 10);
  EXPECT_EQ(screen.rows(), std::vector<std::string>{"> hello"});
  EXPECT_EQ(screen.cursor_row(), 0u);
  EXPECT_EQ(screen.cursor_column(), 5u);
}

TEST(LineRender, RowThatFillsTheWidthPutsTheCursorOnTheNextRow) {
  VtScreen screen(10, 10);
  Renderer r;
  draw(screen, r, "abcdefgh", 8, 10, 10);
  EXPECT_EQ(screen.rows(), std::vector<std::string>{"> abcdefgh"});
  EXPECT_EQ(screen.cursor_row(), 1u);
  EXPECT_EQ(screen.cursor_column(), 0u);
  // Typing on: the next character goes where the cursor is.
  draw(screen, r, "abcdefghi", 9, 10, 10);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{"> abcdefgh", "i"}));
  EXPECT_EQ(screen.cursor_column(), 1u);
  // Deleting back shrinks the drawing again, leaving nothing behind.
  draw(screen, r, "ab", 2, 10, 10);
  EXPECT_EQ(screen.rows(), std::vector<std::string>{"> ab"});
  EXPECT_EQ(screen.cursor_row(), 0u);
}

TEST(LineRender, RandomEditsOfWrappedMultiLineText) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    const size_t width = 4 + rng() % 20;
    VtScreen screen(width, 400);
    Renderer r;
    std::string text;
    for (int step = 0; step < 60; ++step) {
      const size_t what = rng() % 10;
      if (what < 6) {
        const size_t at = rng() % (text.size() + 1);
        text.insert(at, std::string(1 + rng() % 12, static_cast<char>('a' + rng() % 26)));
      } else if (what < 7) {
        text.insert(rng() % (text.size() + 1), "\n");
      } else if (!text.empty()) {
        const size_t at = rng() % text.size();
        text.erase(at, 1 + rng() % (text.size() - at));
      }
      const size_t cursor = rng() % (text.size() + 1);
      draw(screen, r, text, cursor, width, 400);
      const Drawn want = expected(text, cursor, width);
      ASSERT_EQ(screen.rows(), want.rows) << "width " << width << " round " << round << " step " << step;
      ASSERT_EQ(screen.cursor_row(), want.cursor_row) << "width " << width << " step " << step;
      ASSERT_EQ(screen.cursor_column(), want.cursor_column) << "width " << width << " step " << step;
    }
  }
}

TEST(LineRender, WideCharactersWrapWhole) {
  VtScreen screen(10, 10);
  Renderer r;
  // "> " + 7 columns leaves one: 中 (two columns) goes to the next row.
  const std::string text = "abcdefg\xe4\xb8\xad\xe6\x96\x87";
  draw(screen, r, text, text.size(), 10, 10);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{"> abcdefg", "\xe4\xb8\xad\xe6\x96\x87"}));
  EXPECT_EQ(screen.cursor_row(), 1u);
  EXPECT_EQ(screen.cursor_column(), 4u);
  // The cursor before 文 stands on its first column.
  draw(screen, r, text, text.size() - 3, 10, 10);
  EXPECT_EQ(screen.cursor_column(), 2u);
}

TEST(LineRender, ControlCharactersTabsAndInvalidBytesAreVisible) {
  VtScreen screen(40, 10);
  Renderer r;
  draw(screen, r, "a\tb\x01" "c\xff" "d", 0, 40, 10);
  // The tab runs from column 3 to the stop at column 8.
  EXPECT_EQ(screen.rows(), std::vector<std::string>{"> a     b^Ac\xef\xbf\xbd" "d"});
  draw(screen, r, "a\tb", 2, 40, 10);
  EXPECT_EQ(screen.cursor_column(), 8u);
}

TEST(LineRender, TallTextShowsAWindowThatFollowsTheCursor) {
  const size_t width = 10, height = 5;
  VtScreen screen(width, height);
  Renderer r;
  std::string text;
  for (int i = 0; i < 12; ++i) text += "line " + std::to_string(i) + (i < 11 ? "\n" : "");
  // Cursor at the end: the last five rows.
  draw(screen, r, text, text.size(), width, height);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{". line 7", ". line 8", ". line 9", ". line 10", ". line 11"}));
  EXPECT_EQ(screen.cursor_row(), 4u);
  // Cursor at the start: the window moves up to it ...
  draw(screen, r, text, 0, width, height);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{"> line 0", ". line 1", ". line 2", ". line 3", ". line 4"}));
  EXPECT_EQ(screen.cursor_row(), 0u);
  EXPECT_EQ(screen.cursor_column(), 2u);
  // ... and stays while the cursor is inside it.
  draw(screen, r, text, text.find("line 3"), width, height);
  EXPECT_EQ(screen.row(0), "> line 0");
  EXPECT_EQ(screen.cursor_row(), 3u);
  // Sent: every row is written, the first ones into the scrollback.
  draw(screen, r, text, text.size(), width, height, /*whole=*/true);
  std::vector<std::string> all = screen.scrollback();
  for (const std::string& row : screen.rows()) all.push_back(row);
  ASSERT_GE(all.size(), 12u);
  EXPECT_EQ(std::vector<std::string>(all.end() - 12, all.end())[0], "> line 0");
  EXPECT_EQ(all.back(), ". line 11");
}

TEST(LineRender, DrawsBelowWhatIsAlreadyOnScreen) {
  VtScreen screen(20, 6);
  screen.feed("answer\r\n");
  Renderer r;
  draw(screen, r, "one\ntwo\nthree", 13, 20, 6);
  draw(screen, r, "x", 1, 20, 6);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{"answer", "> x"}));
  r.forget();  // a fresh prompt after "^C"
  screen.feed("^C\r\n");
  draw(screen, r, "", 0, 20, 6);
  EXPECT_EQ(screen.rows(), (std::vector<std::string>{"answer", "> x^C", ">"}));
}

}  // namespace
