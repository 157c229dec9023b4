// GgufWriter::write_file (peak quantize, peak synth) on paths that are not a
// plain new name: a link is written through and stays a link, a FIFO, a
// directory or a device is refused and left as it was, and a write that fails
// half-way leaves no temporary file.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "scratch_dir.h"

namespace peak::gguf {

using kernels::GgmlType;

namespace {

std::string fresh_dir() { return test::make_scratch_dir(::testing::TempDir(), "peak_gguf_targets_"); }

using test::files_in;

GgufWriter named(const std::string& name) {
  GgufWriter w;
  w.set_string("general.name", name);
  return w;
}

std::string write_error(const std::string& path) {
  try {
    named("x").write_file(path);
  } catch (const io::IoError& e) {
    return e.what();
  }
  return "";
}

mode_t lmode(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

TEST(GgufWriterTargets, ALinkIsWrittenThroughAndStaysALink) {
  const std::string dir = fresh_dir();
  named("old").write_file(dir + "model.gguf");
  ASSERT_EQ(::symlink("model.gguf", (dir + "latest.gguf").c_str()), 0);
  named("new").write_file(dir + "latest.gguf");
  EXPECT_TRUE(S_ISLNK(lmode(dir + "latest.gguf")));
  EXPECT_EQ(GgufFile::open(dir + "model.gguf")->get("general.name").str(), "new");
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"latest.gguf", "model.gguf"}));
}

TEST(GgufWriterTargets, ADanglingLinkCreatesItsTarget) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::symlink("made.gguf", (dir + "link.gguf").c_str()), 0);
  named("made").write_file(dir + "link.gguf");
  EXPECT_TRUE(S_ISLNK(lmode(dir + "link.gguf")));
  EXPECT_EQ(GgufFile::open(dir + "made.gguf")->get("general.name").str(), "made");
}

TEST(GgufWriterTargets, AFifoOrADirectoryIsRefusedAndLeftAsItWas) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::mkfifo((dir + "fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir((dir + "sub").c_str(), 0755), 0);
  EXPECT_NE(write_error(dir + "fifo").find("it is a FIFO, not a regular file"), std::string::npos);
  EXPECT_NE(write_error(dir + "sub").find("it is a directory, not a regular file"), std::string::npos);
  EXPECT_NE(write_error("/dev/null").find("it is a character device"), std::string::npos);
  EXPECT_TRUE(S_ISFIFO(lmode(dir + "fifo")));
  EXPECT_TRUE(S_ISDIR(lmode(dir + "sub")));
  EXPECT_TRUE(S_ISCHR(lmode("/dev/null")));
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"fifo", "sub"}));
}

TEST(GgufWriterTargets, AWriteThatFailsHalfWayLeavesTheOldFileAndNoTemporaryOne) {
  const std::string dir = fresh_dir();
  named("old").write_file(dir + "m.gguf");
  GgufWriter w = named("new");
  const int64_t ne[1] = {4};
  w.add_tensor("a", GgmlType::F32, 1, ne);
  EXPECT_THROW(w.write_file(dir + "m.gguf", [](size_t, uint8_t*, uint64_t) { throw std::runtime_error("cancelled"); }),
               std::runtime_error);
  EXPECT_EQ(GgufFile::open(dir + "m.gguf")->get("general.name").str(), "old");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"m.gguf"});
}

}  // namespace
}  // namespace peak::gguf
