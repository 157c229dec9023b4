// UTF-8 decoding and the streaming decoder. Expected replacements follow the Unicode
// "maximal subpart" practice (what Python's bytes.decode("utf-8", "replace") gives).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/utf8.h"

namespace peak::tokenizer {
namespace {

using Cpts = std::vector<uint32_t>;

TEST(Utf8Decode, WellFormedText) {
  EXPECT_EQ(decode_utf8("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), (Cpts{0x61, 0xE9, 0x20AC, 0x1F600}));
  EXPECT_TRUE(decode_utf8("").empty());
}

TEST(Utf8Decode, IllFormedSequencesBecomeReplacementCharacters) {
  const uint32_t R = kReplacementCharacter;
  EXPECT_EQ(decode_utf8("\x80"), (Cpts{R}));                          // lone continuation byte
  EXPECT_EQ(decode_utf8("\xC0\x80"), (Cpts{R, R}));                   // overlong NUL
  EXPECT_EQ(decode_utf8("\xE0\x9F\x80"), (Cpts{R, R, R}));            // overlong 3-byte form
  EXPECT_EQ(decode_utf8("\xED\xA0\x80"), (Cpts{R, R, R}));            // surrogate U+D800
  EXPECT_EQ(decode_utf8("\xF4\x90\x80\x80"), (Cpts{R, R, R, R}));     // above U+10FFFF
  EXPECT_EQ(decode_utf8("\xE2\x82" "A"), (Cpts{R, 0x41}));            // cut short, one U+FFFD
  EXPECT_EQ(decode_utf8("\xF0\x9F\x98"), (Cpts{R}));                  // truncated by the end
  EXPECT_EQ(decode_utf8("a\xFF" "b"), (Cpts{0x61, R, 0x62}));
}

TEST(Utf8Encode, RoundTripsEveryScalarValueClass) {
  for (const uint32_t cpt : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFDu, 0x10000u, 0x10FFFFu}) {
    std::string text;
    append_utf8(text, cpt);
    EXPECT_EQ(decode_utf8(text), (Cpts{cpt})) << std::hex << cpt;
  }
}

TEST(Utf8StreamDecoder, HoldsASplitCharacterUntilItCompletes) {
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push("x\xE2"), "x");
  EXPECT_EQ(decoder.pending_bytes(), 1u);
  EXPECT_EQ(decoder.push("\x82"), "");
  EXPECT_EQ(decoder.push("\xAC!"), "\xE2\x82\xAC!");
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_EQ(decoder.push("\xF0\x9F"), "");
  EXPECT_EQ(decoder.push("\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(decoder.finish(), "");
}

TEST(Utf8StreamDecoder, EveryCutOfAValidTextGivesTheTextBack) {
  const std::string text = "h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\xA6\x99!";
  for (size_t cut1 = 0; cut1 <= text.size(); ++cut1) {
    for (size_t cut2 = cut1; cut2 <= text.size(); ++cut2) {
      Utf8StreamDecoder decoder;
      std::string out;
      for (const std::string& part : {text.substr(0, cut1), text.substr(cut1, cut2 - cut1), text.substr(cut2)}) {
        const std::string piece = decoder.push(part);
        for (const uint32_t cpt : decode_utf8(piece)) EXPECT_NE(cpt, kReplacementCharacter) << cut1 << " " << cut2;
        out += piece;
      }
      out += decoder.finish();
      EXPECT_EQ(out, text) << cut1 << " " << cut2;
    }
  }
}

TEST(Utf8StreamDecoder, IllFormedBytesComeOutAsReplacementNotDropped) {
  const std::string R = "\xEF\xBF\xBD";
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push("\x80"), R);
  EXPECT_EQ(decoder.push("\xE2\x82"), "");
  EXPECT_EQ(decoder.push("A"), R + "A");  // the cut-short character, then A
  EXPECT_EQ(decoder.push("\xC3"), "");
  EXPECT_EQ(decoder.finish(), R);         // the stream ended inside a character
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

}  // namespace
}  // namespace peak::tokenizer
