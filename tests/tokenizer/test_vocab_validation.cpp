// Vocabularies peak must refuse, each with an error naming the metadata key at fault.
// The files are built in memory with the GGUF writer from a small valid BPE or SPM
// vocabulary, then broken one way each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace peak::tokenizer {
namespace {

// A byte-level BPE vocabulary: "a", "b", "ab" with the merge "a b".
gguf::GgufWriter tiny_bpe() {
  gguf::GgufWriter writer;
  writer.set_string("tokenizer.ggml.model", "gpt2");
  writer.set_string("tokenizer.ggml.pre", "gpt-2");
  writer.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab", "<|endoftext|>"});
  const int32_t types[] = {1, 1, 1, 3};
  writer.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, types, 4);
  writer.set_string_array("tokenizer.ggml.merges", {"a b"});
  writer.set_u32("tokenizer.ggml.eos_token_id", 3);
  return writer;
}

// A SentencePiece vocabulary: <unk>, <s>, </s>, then pieces.
gguf::GgufWriter tiny_spm() {
  gguf::GgufWriter writer;
  writer.set_string("tokenizer.ggml.model", "llama");
  writer.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "a", "b"});
  const float scores[] = {0, 0, 0, -1, -2, -3};
  writer.set_array("tokenizer.ggml.scores", gguf::ValueType::Float32, scores, 6);
  const int32_t types[] = {2, 3, 3, 1, 1, 1};
  writer.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, types, 6);
  return writer;
}

std::unique_ptr<Tokenizer> load(const gguf::GgufWriter& writer, std::vector<uint8_t>& bytes) {
  bytes = writer.write_memory();
  const auto file = gguf::GgufFile::parse(bytes.data(), bytes.size());
  return Tokenizer::from_gguf(*file);
}

// Loading must fail with TokenizerError whose message names `key`.
void expect_refused(const gguf::GgufWriter& writer, const std::string& key) {
  std::vector<uint8_t> bytes;
  try {
    load(writer, bytes);
    ADD_FAILURE() << "accepted a vocabulary that should be refused for " << key;
  } catch (const TokenizerError& error) {
    EXPECT_NE(std::string(error.what()).find("'" + key + "'"), std::string::npos) << error.what();
  }
}

TEST(VocabValidation, TheTinyVocabulariesLoadAndWork) {
  std::vector<uint8_t> bytes;
  const auto bpe = load(tiny_bpe(), bytes);
  EXPECT_EQ(bpe->encode("abab", false, false), (std::vector<int32_t>{2, 2}));
  EXPECT_TRUE(bpe->is_eog(3));
  std::vector<uint8_t> spm_bytes;
  const auto spm = load(tiny_spm(), spm_bytes);
  EXPECT_EQ(spm->encode("ab", true, false), (std::vector<int32_t>{1, 3, 5}));  // <s> ▁a b
  // "▁c" is no piece and the vocabulary has no byte tokens: each of its 4 bytes is <unk>.
  EXPECT_EQ(spm->encode("c", false, false), (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(VocabValidation, RefusesWhatItDoesNotSupport) {
  gguf::GgufWriter t5 = tiny_bpe();
  t5.set_string("tokenizer.ggml.model", "t5");
  expect_refused(t5, "tokenizer.ggml.model");
  gguf::GgufWriter bert_without_unknown = tiny_bpe();  // ids 100 (the default) and up do not exist
  bert_without_unknown.set_string("tokenizer.ggml.model", "bert");
  expect_refused(bert_without_unknown, "tokenizer.ggml.unknown_token_id");
  gguf::GgufWriter unknown_pre = tiny_bpe();
  unknown_pre.set_string("tokenizer.ggml.pre", "no-such-pre-tokenizer");
  expect_refused(unknown_pre, "tokenizer.ggml.pre");
  gguf::GgufWriter no_tokenizer = tiny_bpe();
  no_tokenizer.remove("tokenizer.ggml.model");
  expect_refused(no_tokenizer, "tokenizer.ggml.model");
}

TEST(VocabValidation, RefusesInconsistentArrays) {
  gguf::GgufWriter scores = tiny_spm();
  const float five_scores[] = {0, 0, 0, 0, 0};
  scores.set_array("tokenizer.ggml.scores", gguf::ValueType::Float32, five_scores, 5);
  expect_refused(scores, "tokenizer.ggml.scores");
  gguf::GgufWriter types = tiny_spm();
  const int32_t bad_types[] = {2, 3, 3, 1, 1, 9};
  types.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, bad_types, 6);
  expect_refused(types, "tokenizer.ggml.token_type");
  gguf::GgufWriter byte_type = tiny_spm();
  const int32_t byte_types[] = {2, 3, 3, 1, 6, 1};  // "a" typed as a byte token
  byte_type.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, byte_types, 6);
  expect_refused(byte_type, "tokenizer.ggml.token_type");
  gguf::GgufWriter duplicate = tiny_bpe();
  duplicate.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab", "a"});
  expect_refused(duplicate, "tokenizer.ggml.tokens");
  gguf::GgufWriter no_tokens = tiny_spm();
  no_tokens.remove("tokenizer.ggml.tokens");
  expect_refused(no_tokens, "tokenizer.ggml.tokens");
  gguf::GgufWriter empty = tiny_bpe();
  empty.set_string_array("tokenizer.ggml.tokens", {});
  expect_refused(empty, "tokenizer.ggml.tokens");
}

TEST(VocabValidation, RefusesMergesOfUnknownTokens) {
  for (const char* merge : {"a c", "ab", "b b"}) {  // c is no token; no space; "bb" is no token
    gguf::GgufWriter writer = tiny_bpe();
    writer.set_string_array("tokenizer.ggml.merges", {merge});
    expect_refused(writer, "tokenizer.ggml.merges");
  }
  gguf::GgufWriter no_merges = tiny_bpe();
  no_merges.remove("tokenizer.ggml.merges");
  expect_refused(no_merges, "tokenizer.ggml.merges");
}

// A refusal quoting the file's text escapes its control characters: an ESC
// sequence in a token or merge never reaches the terminal.
TEST(VocabValidation, QuotesTokensAndMergesEscaped) {
  const std::string clear = "\x1b[2J";
  std::vector<std::string> messages;
  gguf::GgufWriter duplicate = tiny_bpe();
  duplicate.set_string_array("tokenizer.ggml.tokens", {"a", "b", clear, clear});
  gguf::GgufWriter merge = tiny_bpe();
  merge.set_string_array("tokenizer.ggml.merges", {"a" + clear});
  gguf::GgufWriter unknown = tiny_bpe();
  unknown.set_string_array("tokenizer.ggml.merges", {"a " + clear});
  for (const gguf::GgufWriter* writer : {&duplicate, &merge, &unknown}) {
    std::vector<uint8_t> bytes;
    try {
      load(*writer, bytes);
      ADD_FAILURE() << "accepted";
    } catch (const TokenizerError& error) {
      const std::string what = error.what();
      EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
      EXPECT_NE(what.find("\\x1b[2J"), std::string::npos) << what;
    }
  }
}

// The tiny vocabularies have no byte tokens. BPE drops what it cannot spell and SPM
// makes it <unk>, as llama.cpp does (the ids are the same with the report and
// without), and encode says which characters those were.
TEST(VocabValidation, ReportsWhatAVocabularyWithoutByteTokensCannotSpell) {
  std::vector<uint8_t> bytes;
  const auto bpe = load(tiny_bpe(), bytes);
  Unspelled unspelled;
  EXPECT_EQ(bpe->encode("abc", false, false, &unspelled), (std::vector<int32_t>{2}));
  EXPECT_EQ(unspelled.characters, "c");
  EXPECT_FALSE(unspelled.nothing_left);
  EXPECT_EQ(bpe->encode("abc", false, false), (std::vector<int32_t>{2}));
  // Each character once, in order; é is two bytes, neither a token.
  EXPECT_EQ(bpe->encode("c \xC3\xA9 c\x1b", true, false, &unspelled), (std::vector<int32_t>{}));
  EXPECT_EQ(unspelled.characters, "c \xC3\xA9\x1b");
  EXPECT_TRUE(unspelled.nothing_left);
  EXPECT_EQ(quote_characters(unspelled.characters), "'c', ' ', '\xC3\xA9', '\\x1b'");
  // A special token is something left.
  EXPECT_EQ(bpe->encode("c<|endoftext|>", false, true, &unspelled), (std::vector<int32_t>{3}));
  EXPECT_EQ(unspelled.characters, "c");
  EXPECT_FALSE(unspelled.nothing_left);
  bpe->encode("ab", false, false, &unspelled);  // a report starts empty
  EXPECT_EQ(unspelled.characters, "");

  std::vector<uint8_t> spm_bytes;
  const auto spm = load(tiny_spm(), spm_bytes);
  EXPECT_EQ(spm->encode("c", false, false, &unspelled), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(unspelled.characters, " c");  // the space SPM puts before the text, and c
  EXPECT_FALSE(unspelled.nothing_left);   // <unk> is a token
}

TEST(VocabValidation, QuotesAtMostSixteenCharacters) {
  EXPECT_EQ(quote_characters("abcdefghijklmnopqrst"),
            "'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p' and 4 more");
  EXPECT_EQ(quote_characters(""), "");
}

TEST(VocabValidation, RefusesSpecialIdsOutsideTheVocabulary) {
  gguf::GgufWriter eos = tiny_bpe();
  eos.set_u32("tokenizer.ggml.eos_token_id", 4);
  expect_refused(eos, "tokenizer.ggml.eos_token_id");
  gguf::GgufWriter bos = tiny_spm();
  bos.set_i32("tokenizer.ggml.bos_token_id", -7);
  expect_refused(bos, "tokenizer.ggml.bos_token_id");
  // "none" spelled as the converters do is not an error.
  gguf::GgufWriter none = tiny_spm();
  none.set_u32("tokenizer.ggml.padding_token_id", 0xFFFFFFFFu);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(load(none, bytes)->pad(), kNoToken);
  gguf::GgufWriter add_bos = tiny_bpe();
  add_bos.set_bool("tokenizer.ggml.add_bos_token", true);  // and no BOS token
  expect_refused(add_bos, "tokenizer.ggml.add_bos_token");
}

}  // namespace
}  // namespace peak::tokenizer
