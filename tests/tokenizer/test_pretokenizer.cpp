// Pre-tokenizers without llama.cpp test vectors of their own. Expected words come from
// Python's re module running the same regexes (re has the classes these use).
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

TEST(PreTokenizer, EmptyText) {
  for (const PreTokenizer kind : {PreTokenizer::Default, PreTokenizer::Llama3, PreTokenizer::Bloom}) {
    EXPECT_TRUE(pre_tokenize(kind, {}).empty());
  }
}

}  // namespace
}  // namespace peak::tokenizer
