// llama.cpp's tokenizer test vectors (shared/fixtures/vocab, see SOURCE.txt): every
// case of every vocabulary peak supports must give exactly llama.cpp's ids
// (add_special = false, parse_special = false); the vocabularies peak does not
// support must be refused with an error naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "tokenizer/tokenizer.h"
#include "vocab_fixtures.h"

namespace peak::tokenizer {
namespace {

using testing_support::read_vocab_cases;
using testing_support::VocabCase;
using testing_support::vocab_path;
using testing_support::vocab_tokenizer;

std::string ids_to_string(const std::vector<int32_t>& ids) {
  std::string s;
  for (const int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

struct VocabFile {
  const char* name;
  const char* refusal;  // nullptr: supported; else why peak refuses it (a word of the error)
};

const VocabFile kVocabFiles[] = {
    {"llama-spm", nullptr},
    {"phi-3", nullptr},
    {"gpt-2", nullptr},
    {"qwen3", nullptr},
    {"llama-bpe", nullptr},
    {"mpt", nullptr},
    {"starcoder", nullptr},
    {"refact", nullptr},
    {"falcon", nullptr},
    {"deepseek-coder", nullptr},
    {"deepseek-llm", nullptr},
    {"bert-bge", "tokenizer.ggml.model"},  // WordPiece ('bert') tokenizer: not implemented
};

class VocabFixture : public testing::TestWithParam<VocabFile> {};

TEST_P(VocabFixture, MatchesLlamaCppOrIsRefused) {
  const VocabFile file = GetParam();
  if (file.refusal != nullptr) {
    const auto gguf = gguf::GgufFile::open(vocab_path(file.name));
    try {
      Tokenizer::from_gguf(*gguf);
      FAIL() << file.name << " should be refused";
    } catch (const TokenizerError& error) {
      EXPECT_NE(std::string(error.what()).find(file.refusal), std::string::npos) << error.what();
      std::printf("[ skipped  ] ggml-vocab-%s: %s\n", file.name, error.what());
    }
    return;
  }
  const Tokenizer& tokenizer = vocab_tokenizer(file.name);
  const std::vector<VocabCase> cases = read_vocab_cases(file.name);
  ASSERT_FALSE(cases.empty());
  size_t passed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer.encode(cases[i].text, false, false);
    if (ids == cases[i].ids) {
      ++passed;
    } else {
      ADD_FAILURE() << file.name << " case " << i << " '" << cases[i].text << "'\n  expected "
                    << ids_to_string(cases[i].ids) << "\n  got      " << ids_to_string(ids);
    }
  }
  std::printf("[ vocab    ] ggml-vocab-%s: %zu/%zu cases pass\n", file.name, passed, cases.size());
  EXPECT_EQ(passed, cases.size());
}

std::string vocab_name(const testing::TestParamInfo<VocabFile>& info) {
  std::string name = info.param.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(LlamaCppVectors, VocabFixture, testing::ValuesIn(kVocabFiles), vocab_name);

// A test vector added to the folder must be added above, not silently ignored.
TEST(VocabFixtureList, CoversEveryTestVectorInTheFolder) {
  const std::string folder = std::filesystem::path(vocab_path("x")).parent_path().string();
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-", suffix = ".gguf.inp";
    if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    const bool listed = std::any_of(std::begin(kVocabFiles), std::end(kVocabFiles),
                                    [&](const VocabFile& v) { return name == v.name; });
    EXPECT_TRUE(listed) << name << " is not in kVocabFiles";
  }
}

}  // namespace
}  // namespace peak::tokenizer
