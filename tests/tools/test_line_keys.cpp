// Key decoding: the bytes xterm, VT100 application mode, rxvt and the Linux
// console send (xterm's ctlseqs, the Linux console_codes(4) page) decoded
// into the editor's keys, whole or cut anywhere between two reads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "line_keys.h"

namespace {

std::vector<Key> decode(const std::string& bytes) {
  KeyDecoder d;
  std::vector<Key> keys;
  d.feed(bytes, keys);
  return keys;
}

// The same bytes fed one at a time.
std::vector<Key> decode_bytewise(const std::string& bytes) {
  KeyDecoder d;
  std::vector<Key> keys;
  for (const char c : bytes) d.feed(std::string(1, c), keys);
  return keys;
}

KeyCode only_key(const std::string& bytes) {
  const std::vector<Key> keys = decode(bytes);
  EXPECT_EQ(keys.size(), 1u) << "for bytes of length " << bytes.size();
  return keys.empty() ? KeyCode::Ignored : keys[0].code;
}

TEST(KeyDecoder, ControlCharacters) {
  const std::pair<char, KeyCode> cases[] = {
      {'\x01', KeyCode::Home},           {'\x02', KeyCode::Left},           {'\x03', KeyCode::Interrupt},
      {'\x04', KeyCode::EndOfFile},      {'\x05', KeyCode::End},            {'\x06', KeyCode::Right},
      {'\x08', KeyCode::Backspace},      {'\x7f', KeyCode::Backspace},      {'\r', KeyCode::Enter},
      {'\n', KeyCode::Enter},            {'\x0b', KeyCode::KillToLineEnd},  {'\x0c', KeyCode::ClearScreen},
      {'\x0e', KeyCode::Down},           {'\x10', KeyCode::Up},             {'\x15', KeyCode::KillToLineStart},
      {'\x17', KeyCode::KillWordBefore}, {'\x19', KeyCode::Yank},           {'\x1a', KeyCode::Suspend},
      {'\x07', KeyCode::Ignored},
  };
  for (const auto& [byte, code] : cases) EXPECT_EQ(only_key(std::string(1, byte)), code) << int(byte);
}

TEST(KeyDecoder, EscapeSequencesOfCommonTerminals) {
  const std::pair<const char*, KeyCode> cases[] = {
      {"\033[A", KeyCode::Up},        {"\033[B", KeyCode::Down},       {"\033[C", KeyCode::Right},
      {"\033[D", KeyCode::Left},      {"\033OA", KeyCode::Up},         {"\033OB", KeyCode::Down},
      {"\033OC", KeyCode::Right},     {"\033OD", KeyCode::Left},       {"\033[H", KeyCode::Home},
      {"\033[F", KeyCode::End},       {"\033OH", KeyCode::Home},       {"\033OF", KeyCode::End},
      {"\033[1~", KeyCode::Home},     {"\033[4~", KeyCode::End},       {"\033[7~", KeyCode::Home},
      {"\033[8~", KeyCode::End},      {"\033[3~", KeyCode::Delete},    {"\033[1;5C", KeyCode::WordRight},
      {"\033[1;5D", KeyCode::WordLeft}, {"\033[1;3C", KeyCode::WordRight}, {"\033[1;3D", KeyCode::WordLeft},
      {"\033[1;2C", KeyCode::Right},  {"\033[1;5H", KeyCode::Home},    {"\033b", KeyCode::WordLeft},
      {"\033f", KeyCode::WordRight},  {"\033d", KeyCode::KillWordAfter}, {"\033\x7f", KeyCode::KillAlnumWordBefore},
      {"\033\x08", KeyCode::KillAlnumWordBefore}, {"\033\r", KeyCode::InsertNewline},
      {"\033[15~", KeyCode::Ignored}, {"\033[2~", KeyCode::Ignored},   {"\033[Z", KeyCode::Ignored},
      {"\033x", KeyCode::Ignored},    {"\033OP", KeyCode::Ignored},
  };
  for (const auto& [bytes, code] : cases) {
    EXPECT_EQ(only_key(bytes), code) << bytes + 1;
    const std::vector<Key> split = decode_bytewise(bytes);
    ASSERT_EQ(split.size(), 1u) << bytes + 1;
    EXPECT_EQ(split[0].code, code) << bytes + 1;
  }
}

TEST(KeyDecoder, TextRunsAreOneKeyAndUtf8SurvivesAnySplit) {
  const std::string text = "na\xc3\xafve caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80!";
  const std::vector<Key> whole = decode(text);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].code, KeyCode::Text);
  EXPECT_EQ(whole[0].text, text);
  const std::vector<Key> split = decode_bytewise(text);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].text, text);

  // A character cut between reads completes on the next one, not before.
  KeyDecoder d;
  std::vector<Key> keys;
  d.feed("\xe4\xb8", keys);
  EXPECT_TRUE(keys.empty());
  d.feed("\xad", keys);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].text, "\xe4\xb8\xad");
}

TEST(KeyDecoder, InvalidBytesPassAsText) {
  EXPECT_EQ(decode("a\xff" "b")[0].text, "a\xff" "b");
  EXPECT_EQ(decode("\x80")[0].text, "\x80");
  // A lead byte whose sequence is cut by an ASCII byte: both stay, in order.
  const std::vector<Key> keys = decode("\xc3(x");
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].text, "\xc3(x");
  // ... or by a control key, which still acts.
  const std::vector<Key> cut = decode("\xe4\xb8\x03");
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].text, "\xe4\xb8");
  EXPECT_EQ(cut[1].code, KeyCode::Interrupt);
}

TEST(KeyDecoder, KeysBetweenTextSplitTheRuns) {
  const std::vector<Key> keys = decode("ab\033[Dc\x7f" "d");
  ASSERT_EQ(keys.size(), 5u);
  EXPECT_EQ(keys[0].text, "ab");
  EXPECT_EQ(keys[1].code, KeyCode::Left);
  EXPECT_EQ(keys[2].text, "c");
  EXPECT_EQ(keys[3].code, KeyCode::Backspace);
  EXPECT_EQ(keys[4].text, "d");
}

TEST(KeyDecoder, CutEscapeSequenceLetsTheNextKeyAct) {
  const std::vector<Key> keys = decode("\033[1\x03");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].code, KeyCode::Ignored);
  EXPECT_EQ(keys[1].code, KeyCode::Interrupt);
  // ESC ESC [A: the first ESC alone is nothing.
  EXPECT_EQ(only_key("\033\033[A"), KeyCode::Up);
  // An absurdly long parameter list is read to its end and ignored.
  const std::vector<Key> long_seq = decode("\033[" + std::string(100, '1') + "~x");
  ASSERT_EQ(long_seq.size(), 2u);
  EXPECT_EQ(long_seq[0].code, KeyCode::Ignored);
  EXPECT_EQ(long_seq[1].text, "x");
}

TEST(KeyDecoder, BracketedPasteIsOneKeyWithItsTextLiterally) {
  // Terminals send line ends in a paste as CR; CR LF and LF occur too.
  const std::string bytes = "x\033[200~line one\rline two\r\nline three\n\tend \x03\033[A\033[201~y";
  for (const std::vector<Key>& keys : {decode(bytes), decode_bytewise(bytes)}) {
    ASSERT_EQ(keys.size(), 3u);
    EXPECT_EQ(keys[0].text, "x");
    EXPECT_EQ(keys[1].code, KeyCode::Paste);
    // Control characters and escape sequences inside a paste are text, not keys.
    EXPECT_EQ(keys[1].text, "line one\nline two\nline three\n\tend \x03\033[A");
    EXPECT_EQ(keys[2].text, "y");
  }
}

TEST(KeyDecoder, PasteEndMarkerCutBetweenReads) {
  KeyDecoder d;
  std::vector<Key> keys;
  d.feed("\033[200~abc\033[20", keys);
  EXPECT_TRUE(keys.empty());
  d.feed("1~", keys);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].code, KeyCode::Paste);
  EXPECT_EQ(keys[0].text, "abc");
  // A long paste, far beyond a terminal's 4095-byte line.
  std::string big(100000, 'q');
  keys.clear();
  d.feed("\033[200~" + big + "\033[201~", keys);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].text, big);
  // An empty paste is an empty Paste key.
  EXPECT_EQ(decode("\033[200~\033[201~")[0].text, "");
}

}  // namespace
