#include "vocab_fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "gguf/gguf_reader.h"

namespace peak::tokenizer::testing_support {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string vocab_path(const std::string& name) {
  return std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-" + name + ".gguf";
}

std::vector<VocabCase> read_vocab_cases(const std::string& name) {
  const std::string inp = read_file(vocab_path(name) + ".inp");
  const std::string out = read_file(vocab_path(name) + ".out");
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < inp.size();) {  // the file ends with a separator
    size_t next = inp.find(separator, pos);
    if (next == std::string::npos) next = inp.size();
    texts.push_back(inp.substr(pos, next - pos));
    pos = next + separator.size();
  }
  std::vector<VocabCase> cases;
  std::istringstream lines(out);
  std::string line;
  for (const std::string& text : texts) {
    EXPECT_TRUE(std::getline(lines, line)) << name << ": fewer lines in .out than strings in .inp";
    std::istringstream numbers(line);
    VocabCase test_case{text, {}};
    for (int32_t id = 0; numbers >> id;) test_case.ids.push_back(id);
    cases.push_back(test_case);
  }
  EXPECT_FALSE(std::getline(lines, line) && !line.empty()) << name << ": more lines in .out than strings in .inp";
  return cases;
}

std::vector<int32_t> llama_cpp_ids(const std::string& name, const std::string& text) {
  for (const VocabCase& test_case : read_vocab_cases(name)) {
    if (test_case.text == text) return test_case.ids;
  }
  ADD_FAILURE() << "'" << text << "' is not a test string of " << name;
  return {};
}

const Tokenizer& vocab_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Tokenizer>& tokenizer = loaded[name];
  if (!tokenizer) tokenizer = Tokenizer::from_gguf(*gguf::GgufFile::open(vocab_path(name)));
  return *tokenizer;
}

}  // namespace peak::tokenizer::testing_support
