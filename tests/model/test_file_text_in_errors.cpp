// Error messages that quote text from a model file (its architecture, its
// tokenizer's names) show it escaped: an ESC sequence in the file must not reach
// the terminal, and an embedded NUL must not cut the message short.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "tokenizer/vocab.h"

namespace peak::model {
namespace {

// "ESC [2J" clears a terminal's screen; the NUL ends a C string.
const std::string kHostile("x\x1b[2J\0y\xc2\x9b", 9);
const char kEscaped[] = "x\\x1b[2J\\x00y\\xc2\\x9b";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();  // as a C string, the way a caller prints it
  }
  return "";
}

TEST(FileTextInErrors, AnUnsupportedArchitectureIsQuotedEscaped) {
  const std::string path = ::testing::TempDir() + "peak_hostile_arch.gguf";
  gguf::GgufWriter w;
  w.set_string("general.architecture", kHostile);
  w.write_file(path);
  const std::string message = error_of([&] { Model::load(path); });
  EXPECT_NE(message.find(std::string("unsupported architecture '") + kEscaped + "'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  std::remove(path.c_str());
}

TEST(FileTextInErrors, AnUnsupportedTokenizerIsQuotedEscaped) {
  const std::string path = ::testing::TempDir() + "peak_hostile_tokenizer.gguf";
  gguf::GgufWriter w;
  w.set_string("tokenizer.ggml.model", kHostile);
  w.write_file(path);
  const auto file = gguf::GgufFile::open(path);
  const std::string message = error_of([&] { tokenizer::Vocab::from_gguf(*file); });
  EXPECT_NE(message.find(std::string("tokenizer model '") + kEscaped + "'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peak::model
