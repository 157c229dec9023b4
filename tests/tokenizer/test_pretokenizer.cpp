// Pre-tokenizers without llama.cpp test vectors of their own, and cases the vectors of
// gpt-4o miss. Expected words come from Python's re module running the same regexes
// (re has the classes these use).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {
namespace {

std::vector<std::string> words_of(PreTokenizer kind, const std::string& text) {
  const std::vector<uint32_t> cpts = decode_utf8(text);
  std::vector<std::string> words;
  size_t begin = 0;
  for (const size_t length : pre_tokenize(kind, cpts)) {
    std::string word;
    for (size_t i = begin; i < begin + length; ++i) append_utf8(word, cpts[i]);
    words.push_back(word);
    begin += length;
  }
  EXPECT_EQ(begin, cpts.size());
  return words;
}

using Words = std::vector<std::string>;

TEST(PreTokenizer, NamesSelectTheirRegexLists) {
  PreTokenizerInfo info{};
  ASSERT_TRUE(pre_tokenizer_from_name("llama-bpe", info));
  EXPECT_EQ(info.kind, PreTokenizer::Llama3);
  EXPECT_TRUE(info.ignore_merges);
  EXPECT_TRUE(info.add_bos);
  for (const char* name : {"gpt-4o", "llama4", "minimax-m2"}) {
    ASSERT_TRUE(pre_tokenizer_from_name(name, info)) << name;
    EXPECT_EQ(info.kind, PreTokenizer::Gpt4o);
    EXPECT_FALSE(info.ignore_merges);
    EXPECT_FALSE(info.add_bos);
  }
  ASSERT_TRUE(pre_tokenizer_from_name("", info));  // llama.cpp's fallback
  EXPECT_EQ(info.kind, PreTokenizer::Default);
  EXPECT_FALSE(pre_tokenizer_from_name("tekken", info));
}

// re: " ?[^(\s|.,!?…。，、।۔،)]+"
TEST(PreTokenizer, Bloom) {
  EXPECT_EQ(words_of(PreTokenizer::Bloom, "Hello, world! (ok) done\xE2\x80\xA6yes\xE3\x80\x82 x  y"),
            (Words{"Hello", ",", " world", "! (", "ok", ")", " done", "\xE2\x80\xA6", "yes", "\xE3\x80\x82", " x", " ",
                   " y"}));
  EXPECT_EQ(words_of(PreTokenizer::Bloom, "P\xC3\xA4iv\xC3\xA4\xC3\xA4 2024 kello 12:30, n\xC3\xA4kemiin!"),
            (Words{"P\xC3\xA4iv\xC3\xA4\xC3\xA4", " 2024", " kello", " 12:30", ",", " n\xC3\xA4kemiin", "!"}));
}

// re: " ?[^(\s|.,!?…。，、।۔،)]+", then "\d"
TEST(PreTokenizer, Viking) {
  EXPECT_EQ(words_of(PreTokenizer::Viking, "P\xC3\xA4iv\xC3\xA4\xC3\xA4 2024 kello 12:30, n\xC3\xA4kemiin!"),
            (Words{"P\xC3\xA4iv\xC3\xA4\xC3\xA4", " ", "2", "0", "2", "4", " kello", " ", "1", "2", ":", "3", "0", ",",
                   " n\xC3\xA4kemiin", "!"}));
}

// gpt-4o as llama.cpp splits it, beyond its test vectors (mostly lower-case ASCII).
// Expected words: Python's re on bytes, running the regex llama.cpp hands std::regex
// (\p{L} -> [\xD2A-Za-z], \p{N} -> [\xD10-9]) on the text with every non-ASCII letter
// written \xD2, number \xD1, mark \xD4, ... and non-ASCII whitespace \x0B. Where the
// o200k regex proper (with \p{Lu}, \p{Ll}, \p{M}) differs: "ÄBC", " ÖSTERREICH'S",
// " ÉCOLE", " a" "ÄBc" and "cafés" would each be one word less.
TEST(PreTokenizer, Gpt4oCaseClassesAreAsciiOnly) {
  EXPECT_EQ(words_of(PreTokenizer::Gpt4o, "\xC3\x84" "BC \xC3\x96STERREICH'S \xC3\x84pfel na\xC3\xAFve \xC3\x89"
                                          "COLE XMLHttpRequest a\xC3\x84" "Bc HELLO'S they'RE"),
            (Words{"\xC3\x84", "BC", " \xC3\x96", "STERREICH'S", " \xC3\x84pfel", " na\xC3\xAFve", " \xC3\x89", "COLE",
                   " XMLHttp", "Request", " a\xC3\x84", "Bc", " HELLO'S", " they'RE"}));
  EXPECT_EQ(words_of(PreTokenizer::Gpt4o, "cafe\xCC\x81s 12345 \xCE\xA3\xCE\xAF\xCF\x83\xCF\x85\xCF\x86\xCE\xBF\xCF\x82"),
            (Words{"cafe", "\xCC\x81s", " ", "123", "45", " \xCE\xA3\xCE\xAF\xCF\x83\xCF\x85\xCF\x86\xCE\xBF\xCF\x82"}));
}

// Same source: slashes and line breaks after punctuation, whitespace before a word.
TEST(PreTokenizer, Gpt4oPunctuationAndSpaces) {
  EXPECT_EQ(words_of(PreTokenizer::Gpt4o, "path/to/file: a.b/\n/c ../\r\n\tTabbed\xC2\xA0Nbsp"),
            (Words{"path", "/to", "/file", ":", " a", ".b", "/\n/", "c", " ../\r\n", "\tTabbed", "\xC2\xA0Nbsp"}));
}

TEST(PreTokenizer, EmptyText) {
  for (const PreTokenizer kind : {PreTokenizer::Default, PreTokenizer::Llama3, PreTokenizer::Bloom,
                                  PreTokenizer::Gpt4o}) {
    EXPECT_TRUE(pre_tokenize(kind, {}).empty());
  }
}

}  // namespace
}  // namespace peak::tokenizer
