// Edits of the line being typed: UTF-8 boundaries (checked against the
// sequence lengths of RFC 3629, computed here), combining marks, words, and
// the kills of readline (Ctrl-W, Alt-Backspace, Ctrl-U, Ctrl-K, Alt-D).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "line_buffer.h"

namespace {

LineBuffer with(const std::string& text, size_t cursor) {
  LineBuffer b;
  b.assign(text.substr(0, cursor));
  b.insert(text.substr(cursor));
  // insert() leaves the cursor after what it inserted: walk back to `cursor`.
  while (b.cursor() > cursor) b.move_left();
  EXPECT_EQ(b.cursor(), cursor);
  return b;
}

// Start offsets of the characters of valid UTF-8 text, from the lead bytes.
std::vector<size_t> starts(const std::string& s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) out.push_back(i);
  }
  return out;
}

TEST(LineBuffer, CursorStopsOnlyAtCharacterStarts) {
  const std::string text = "a\xc3\xaf\xe4\xb8\xad\xf0\x9f\x98\x80z";  // a ï 中 😀 z: 1, 2, 3, 4, 1 bytes
  std::vector<size_t> expected = starts(text);
  expected.push_back(text.size());
  LineBuffer b;
  b.assign(text);
  std::vector<size_t> seen{b.cursor()};
  while (b.cursor() > 0) {
    b.move_left();
    seen.insert(seen.begin(), b.cursor());
  }
  EXPECT_EQ(seen, expected);
  std::vector<size_t> forward{b.cursor()};
  while (b.cursor() < text.size()) {
    b.move_right();
    forward.push_back(b.cursor());
  }
  EXPECT_EQ(forward, expected);
  b.move_right();  // at the end: stays
  EXPECT_EQ(b.cursor(), text.size());
}

TEST(LineBuffer, BackspaceAndDeleteRemoveWholeCharacters) {
  LineBuffer b = with("caf\xc3\xa9", 5);
  b.erase_before();
  EXPECT_EQ(b.text(), "caf");
  b = with("\xe4\xb8\xad\xe6\x96\x87", 0);
  b.erase_at();
  EXPECT_EQ(b.text(), "\xe6\x96\x87");
  EXPECT_EQ(b.cursor(), 0u);
  b = with("x", 0);
  b.erase_before();  // at the start: nothing
  EXPECT_EQ(b.text(), "x");
  b.move_to_end();
  b.erase_at();  // at the end: nothing
  EXPECT_EQ(b.text(), "x");
}

TEST(LineBuffer, CombiningMarksGoWithTheirBaseCharacter) {
  const std::string e_acute = "e\xcc\x81";  // e + U+0301
  LineBuffer b;
  b.assign("x" + e_acute + "y");
  b.move_left();
  EXPECT_EQ(b.cursor(), 4u);
  b.move_left();
  EXPECT_EQ(b.cursor(), 1u);
  b.move_right();
  EXPECT_EQ(b.cursor(), 4u);
  b.erase_before();
  EXPECT_EQ(b.text(), "xy");
}

TEST(LineBuffer, InvalidAndCutSequencesMoveByteByByte) {
  const std::string text = "a\xff\xe4\xb8" "b";  // a lone 0xff, and 中 without its last byte
  LineBuffer b;
  b.assign(text);
  std::vector<size_t> seen;
  while (b.cursor() > 0) {
    b.move_left();
    seen.push_back(b.cursor());
  }
  EXPECT_EQ(seen, (std::vector<size_t>{4, 3, 2, 1, 0}));
  // A continuation byte alone, and an overlong encoding of '/', are single bytes too.
  b.assign("\x80\xc0\xaf");
  b.move_left();
  EXPECT_EQ(b.cursor(), 2u);
  b.move_left();
  EXPECT_EQ(b.cursor(), 1u);
}

TEST(LineBuffer, WordMovement) {
  LineBuffer b;
  b.assign("hello, big  world");
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 12u);
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 7u);
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 0u);
  b.move_word_right();
  EXPECT_EQ(b.cursor(), 5u);
  b.move_word_right();
  EXPECT_EQ(b.cursor(), 10u);
  // Non-ASCII letters are part of words.
  b.assign("na\xc3\xafve caf\xc3\xa9");
  b.move_word_left();
  EXPECT_EQ(b.cursor(), 7u);
}

TEST(LineBuffer, KillsOfReadline) {
  LineBuffer b;
  b.assign("git commit -m");
  EXPECT_EQ(b.kill_word_before(), "-m");  // Ctrl-W: back to whitespace
  EXPECT_EQ(b.text(), "git commit ");
  EXPECT_EQ(b.kill_word_before(), "commit ");
  b.assign("path/to/file.txt");
  EXPECT_EQ(b.kill_alnum_word_before(), "txt");  // Alt-Backspace: back to a non-letter
  EXPECT_EQ(b.kill_alnum_word_before(), "file.");
  EXPECT_EQ(b.text(), "path/to/");
  b = with("one two three", 4);
  EXPECT_EQ(b.kill_word_after(), "two");  // Alt-D
  EXPECT_EQ(b.text(), "one  three");
  b = with("one two three", 4);
  EXPECT_EQ(b.kill_to_line_end(), "two three");  // Ctrl-K
  EXPECT_EQ(b.text(), "one ");
  b = with("one two three", 8);
  EXPECT_EQ(b.kill_to_line_start(), "one two ");  // Ctrl-U
  EXPECT_EQ(b.text(), "three");
  EXPECT_EQ(b.cursor(), 0u);
  EXPECT_EQ(b.kill_to_line_start(), "");
}

TEST(LineBuffer, MultiLineTextEditsLineByLine) {
  // "first\nsecond\nthird", cursor in "second" after "sec".
  LineBuffer b = with("first\nsecond\nthird", 9);
  b.move_line_start();
  EXPECT_EQ(b.cursor(), 6u);
  b.move_line_end();
  EXPECT_EQ(b.cursor(), 12u);
  // Ctrl-K at a line's end joins the next line; Ctrl-U at a line's start the previous.
  EXPECT_EQ(b.kill_to_line_end(), "\n");
  EXPECT_EQ(b.text(), "first\nsecondthird");
  b = with("first\nsecond", 6);
  EXPECT_EQ(b.kill_to_line_start(), "\n");
  EXPECT_EQ(b.text(), "firstsecond");
  EXPECT_EQ(b.cursor(), 5u);
  b = with("first\nsecond", 9);
  EXPECT_EQ(b.kill_to_line_start(), "sec");
  EXPECT_EQ(b.text(), "first\nond");
}

TEST(ColumnWidth, WideCombiningAndPlain) {
  EXPECT_EQ(column_width('a'), 1);
  EXPECT_EQ(column_width(0xe9), 1);     // é
  EXPECT_EQ(column_width(0x301), 0);    // combining acute
  EXPECT_EQ(column_width(0x200d), 0);   // zero width joiner
  EXPECT_EQ(column_width(0x4e2d), 2);   // 中
  EXPECT_EQ(column_width(0xac00), 2);   // 가
  EXPECT_EQ(column_width(0xff21), 2);   // fullwidth A
  EXPECT_EQ(column_width(0x1f600), 2);  // 😀
  EXPECT_EQ(column_width(0x3b1), 1);    // α
}

}  // namespace
