// ChatSession::save (`/save` in peak chat, peak_session_save) on a link, a FIFO,
// a directory and the model in use: the link's target is rewritten and the link
// kept, the others are refused and left as they were, and no temporary file
// stays behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_session.h"
#include "model/model.h"
#include "scratch_dir.h"

namespace peak::chat {
namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf");
  return *m;
}

SessionSettings raw_settings() {
  SessionSettings s;
  s.template_name = "raw";
  s.background_summary = false;
  s.sampler.temperature = 0.0f;
  s.n_threads = 1;
  return s;
}

TEST(SessionSaveTargets, ALinkIsWrittenThroughAndOthersAreRefused) {
  const std::string dir = test::make_scratch_dir(::testing::TempDir(), "peak_session_targets_");
  ChatSession session(stories(), raw_settings());
  runtime::GenerateOptions o;
  o.max_tokens = 6;
  session.chat("Once upon a time", o);

  ASSERT_EQ(::symlink("real.pkss", (dir + "link.pkss").c_str()), 0);
  session.save(dir + "link.pkss", true);
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "link.pkss").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ChatSession restored(stories(), raw_settings());
  restored.restore(dir + "real.pkss");
  EXPECT_EQ(restored.cached_tokens(), session.cached_tokens());

  ASSERT_EQ(::mkfifo((dir + "fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir((dir + "sub").c_str(), 0755), 0);
  for (const char* name : {"fifo", "sub"}) {
    try {
      session.save(dir + name, true);
      ADD_FAILURE() << name << " was written";
    } catch (const io::IoError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file; refusing to replace it"), std::string::npos) << e.what();
    }
  }
  ASSERT_EQ(::lstat((dir + "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(::lstat((dir + "sub").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(test::files_in(dir), (std::vector<std::string>{"fifo", "link.pkss", "real.pkss", "sub"}));
}

// `/save m.gguf` in `peak chat -m m.gguf`: the model in use is never replaced
// by a session file, named by its path or through a link.
TEST(SessionSaveTargets, TheModelInUseIsRefused) {
  const std::string dir = test::make_scratch_dir(::testing::TempDir(), "peak_session_model_target_");
  const std::string model_bytes = test::file_bytes(std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf");
  {
    FILE* f = std::fopen((dir + "m.gguf").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(model_bytes.data(), 1, model_bytes.size(), f), model_bytes.size());
    ASSERT_EQ(std::fclose(f), 0);
  }
  ASSERT_EQ(::symlink("m.gguf", (dir + "link.gguf").c_str()), 0);
  const auto model = model::Model::load(dir + "m.gguf");
  ChatSession session(*model, raw_settings());
  runtime::GenerateOptions o;
  o.max_tokens = 4;
  session.chat("Once upon a time", o);
  for (const char* name : {"m.gguf", "link.gguf"}) {
    try {
      session.save(dir + name, true);
      ADD_FAILURE() << name << " was written";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("over the model in use"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(test::file_bytes(dir + "m.gguf"), model_bytes);
  EXPECT_EQ(test::files_in(dir), (std::vector<std::string>{"link.gguf", "m.gguf"}));
}

}  // namespace
}  // namespace peak::chat
