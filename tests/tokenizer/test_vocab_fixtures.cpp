// llama.cpp's tokenizer test vectors (shared/fixtures/vocab, see SOURCE.txt): every
// case of every vocabulary must give exactly llama.cpp's ids (add_special = false,
// parse_special = false).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

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

// Every vocabulary with test vectors in the folder (baichuan and gpt-neox have none).
const char* const kVocabFiles[] = {"llama-spm",    "phi-3",     "gpt-2",  "qwen3",  "llama-bpe",
                                   "mpt",          "starcoder", "refact", "falcon", "deepseek-coder",
                                   "deepseek-llm", "bert-bge",  "gpt-4o"};

class VocabFixture : public testing::TestWithParam<const char*> {};

TEST_P(VocabFixture, MatchesLlamaCpp) {
  const std::string name = GetParam();
  const Tokenizer& tokenizer = vocab_tokenizer(name);
  const std::vector<VocabCase> cases = read_vocab_cases(name);
  ASSERT_FALSE(cases.empty());
  size_t passed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer.encode(cases[i].text, false, false);
    if (ids == cases[i].ids) {
      ++passed;
    } else {
      ADD_FAILURE() << name << " case " << i << " '" << cases[i].text << "'\n  expected "
                    << ids_to_string(cases[i].ids) << "\n  got      " << ids_to_string(ids);
    }
  }
  std::printf("[ vocab    ] ggml-vocab-%s: %zu/%zu cases pass\n", name.c_str(), passed, cases.size());
  EXPECT_EQ(passed, cases.size());
}

std::string vocab_name(const testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
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
    const auto is_name = [&](const char* listed_name) { return name == listed_name; };
    EXPECT_TRUE(std::any_of(std::begin(kVocabFiles), std::end(kVocabFiles), is_name))
        << name << " is not in kVocabFiles";
  }
}

}  // namespace
}  // namespace peak::tokenizer
