// The line editor key by key, from the bytes a terminal sends: what readline
// users expect of each key, multi-line messages, Ctrl-C and Ctrl-D.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "line_editor.h"

namespace {

class Editor {
 public:
  Editor() : history_(100), editor_(history_) {}

  // Types `bytes`; returns the result of the last key.
  EditResult type(const std::string& bytes) {
    std::vector<Key> keys;
    decoder_.feed(bytes, keys);
    EditResult last = EditResult::Editing;
    for (const Key& k : keys) last = editor_.apply(k);
    return last;
  }
  // Types `bytes`, which must end with the message being sent, and returns it.
  std::string send(const std::string& bytes) {
    EXPECT_EQ(type(bytes), EditResult::Submitted);
    const std::string message = editor_.start_new_line();
    history_.add(message);
    return message;
  }
  const LineBuffer& line() const { return editor_.line(); }
  LineEditor& editor() { return editor_; }

 private:
  History history_;
  LineEditor editor_;
  KeyDecoder decoder_;
};

TEST(LineEditor, CursorEditsMakeTheMessage) {
  Editor e;
  EXPECT_EQ(e.send("Hello wrld\033[D\033[D\033[Do\r"), "Hello world");
  // Ctrl-A, Ctrl-E, Home/End sequences, Ctrl-B/F, Delete.
  EXPECT_EQ(e.send("quick fox\x01the \x05 jumps\033[1~T\033[3~\033[F!\x02\x02\x06?\r"), "The quick fox jumps?!");
  // Word kills and yank: Ctrl-W, Alt-Backspace, Ctrl-Y; kills in a row add up.
  EXPECT_EQ(e.send("one two three\x17\x17\x19\x19\r"), "one two threetwo three");
  // ... but another key between two kills starts afresh.
  EXPECT_EQ(e.send("one two\x17\033[D\x17\x05\x19\r"), " one");
  EXPECT_EQ(e.send("a/b/c\033\x7f\033\x7fX\r"), "a/X");
  // Ctrl-U and Ctrl-K.
  EXPECT_EQ(e.send("drop this\x15keep\033[D\033[D\x0b\r"), "ke");
}

TEST(LineEditor, Utf8EditsNeverSplitACharacter) {
  Editor e;
  // café, Left (over é), Backspace (f): caé.
  EXPECT_EQ(e.send("caf\xc3\xa9\033[D\x7f\r"), "ca\xc3\xa9");
  // 中文, Home, Delete: 文.
  EXPECT_EQ(e.send("\xe4\xb8\xad\xe6\x96\x87\x01\033[3~\r"), "\xe6\x96\x87");
}

TEST(LineEditor, BackslashAtTheEndContinuesTheMessage) {
  Editor e;
  EXPECT_EQ(e.type("first line\\\r"), EditResult::Editing);
  EXPECT_EQ(e.line().text(), "first line\n");
  EXPECT_EQ(e.send("second line\\\rthird\r"), "first line\nsecond line\nthird");
  // A backslash elsewhere is text.
  EXPECT_EQ(e.send("a\\b\r"), "a\\b");
  // Alt-Enter starts a new line anywhere.
  EXPECT_EQ(e.send("ab\033[D\033\rc\r"), "a\ncb");
}

TEST(LineEditor, PasteIsInsertedAsItIsAndSentByEnter) {
  Editor e;
  EXPECT_EQ(e.type("Q: \033[200~line one\rline two\r\n\033[201~"), EditResult::Editing);
  EXPECT_EQ(e.line().text(), "Q: line one\nline two\n");
  EXPECT_EQ(e.send("\r"), "Q: line one\nline two\n");
  // A line far longer than a terminal's canonical 4095 bytes.
  const std::string long_line(20000, 'z');
  EXPECT_EQ(e.send(long_line + "\r"), long_line);
}

TEST(LineEditor, HistoryWithUpAndDown) {
  Editor e;
  e.send("first\r");
  e.send("second\r");
  e.send("third\r");
  e.type("draft");
  e.type("\033[A");
  EXPECT_EQ(e.line().text(), "third");
  e.type("\033OA\x10");  // Up in application mode, Ctrl-P
  EXPECT_EQ(e.line().text(), "first");
  e.type("\033[A");  // the oldest: stays
  EXPECT_EQ(e.line().text(), "first");
  e.type("\033[B\x0e\033[B");  // Down, Ctrl-N, Down: back to the draft
  EXPECT_EQ(e.line().text(), "draft");
  // A recalled message is sent like a typed one, and becomes the newest.
  EXPECT_EQ(e.send("\x15\033[A\033[A!\r"), "second!");
  e.type("\033[A");
  EXPECT_EQ(e.line().text(), "second!");
  e.type("\033[A");
  EXPECT_EQ(e.line().text(), "third");
}

TEST(LineEditor, CtrlCClearsTheLineAndTwiceInARowLeaves) {
  Editor e;
  EXPECT_EQ(e.type("abc"), EditResult::Editing);
  EXPECT_EQ(e.type("\x03"), EditResult::Interrupted);
  EXPECT_EQ(e.line().text(), "abc");  // the reader shows it with ^C, then starts a new line
  e.editor().start_new_line();
  EXPECT_EQ(e.type("x\x03"), EditResult::Interrupted);
  e.editor().start_new_line();
  // Something typed between two Ctrl-C: not in a row.
  EXPECT_EQ(e.type("\033[D"), EditResult::Editing);
  EXPECT_EQ(e.type("\x03"), EditResult::Interrupted);
  e.editor().start_new_line();
  EXPECT_EQ(e.type("\x03"), EditResult::Exit);
}

TEST(LineEditor, CtrlDLeavesOnlyOnAnEmptyLine) {
  Editor e;
  EXPECT_EQ(e.type("ab\x01\x04"), EditResult::Editing);  // deletes the character under the cursor
  EXPECT_EQ(e.line().text(), "b");
  EXPECT_EQ(e.type("\x04"), EditResult::Editing);
  EXPECT_EQ(e.line().text(), "");
  EXPECT_EQ(e.type("\x04"), EditResult::Exit);
}

TEST(LineEditor, ScreenAndSuspendKeysGoToTheReader) {
  Editor e;
  EXPECT_EQ(e.type("ab\x0c"), EditResult::ClearScreen);
  EXPECT_EQ(e.type("\x1a"), EditResult::Suspend);
  EXPECT_EQ(e.line().text(), "ab");
  EXPECT_EQ(e.type("\033[15~\x07"), EditResult::Editing);  // F5, Ctrl-G: nothing
  EXPECT_EQ(e.line().text(), "ab");
}

}  // namespace
