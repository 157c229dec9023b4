// AtomicFile: what each kind of path becomes after a write (a new file, a
// replaced regular file with its permission bits, the target of a link, a
// refused directory / FIFO / device), and that no temporary file outlives a
// write: abandoned, committed, or removed from a signal handler.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "scratch_dir.h"

namespace peak::io {
namespace {

std::string fresh_dir() { return test::make_scratch_dir(::testing::TempDir(), "peak_atomic_"); }

using test::files_in;

std::string content(const std::string& path) { return test::file_bytes(path); }

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void write_all(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text.data(), text.size());
  f.commit();
}

std::string refusal(const std::string& path) {
  try {
    AtomicFile f(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(AtomicFile, CreatesANewFileWithTheUsualPermissions) {
  const std::string dir = fresh_dir();
  const mode_t mask = ::umask(022);
  write_all(dir + "new.bin", "hello");
  ::umask(mask);
  EXPECT_EQ(content(dir + "new.bin"), "hello");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "new.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // 0666 less the umask, as open(2) or a shell's `>` gives
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"new.bin"});
}

TEST(AtomicFile, ReplacesARegularFileKeepingItsPermissionBits) {
  const std::string dir = fresh_dir();
  put(dir + "f.bin", "old content, longer than the new one");
  ASSERT_EQ(::chmod((dir + "f.bin").c_str(), 0640), 0);
  write_all(dir + "f.bin", "new");
  EXPECT_EQ(content(dir + "f.bin"), "new");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "f.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"f.bin"});
}

TEST(AtomicFile, WritesThroughAChainOfRelativeLinksToTheirTarget) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::mkdir((dir + "real").c_str(), 0755), 0);
  put(dir + "real/target.bin", "old");
  ASSERT_EQ(::symlink("real/target.bin", (dir + "hop").c_str()), 0);  // relative to the link's directory
  ASSERT_EQ(::symlink(dir.c_str(), (dir + "dirlink").c_str()), 0);
  ASSERT_EQ(::symlink("../hop", (dir + "real/link.bin").c_str()), 0);
  AtomicFile f(dir + "dirlink/real/link.bin");
  EXPECT_EQ(f.target(), dir + "dirlink/real/../real/target.bin");
  f.write("new", 3);
  f.commit();
  EXPECT_EQ(content(dir + "real/target.bin"), "new");
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "hop").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::lstat((dir + "real/link.bin").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(files_in(dir + "real"), (std::vector<std::string>{"link.bin", "target.bin"}));
}

TEST(AtomicFile, ADanglingLinkCreatesItsTarget) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::symlink("made.bin", (dir + "link.bin").c_str()), 0);
  write_all(dir + "link.bin", "made");
  EXPECT_EQ(content(dir + "made.bin"), "made");
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "link.bin").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(AtomicFile, RefusesWhatIsNotARegularFileBeforeWriting) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::mkdir((dir + "sub").c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo((dir + "fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("fifo", (dir + "to_fifo").c_str()), 0);
  EXPECT_NE(refusal(dir + "sub").find("it is a directory, not a regular file; refusing to replace it"),
            std::string::npos);
  EXPECT_NE(refusal(dir + "fifo").find("it is a FIFO"), std::string::npos);
  EXPECT_NE(refusal(dir + "to_fifo").find("to_fifo' (through its link to '" + dir + "fifo'): it is a FIFO"),
            std::string::npos);
  // /dev/null is only looked at: the refusal comes before anything is created.
  EXPECT_NE(refusal("/dev/null").find("'/dev/null': it is a character device"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::lstat((dir + "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"fifo", "sub", "to_fifo"}));
}

TEST(AtomicFile, RefusesALinkLoop) {
  const std::string dir = fresh_dir();
  ASSERT_EQ(::symlink("b", (dir + "a").c_str()), 0);
  ASSERT_EQ(::symlink("a", (dir + "b").c_str()), 0);
  EXPECT_NE(refusal(dir + "a").find("Too many levels of symbolic links"), std::string::npos);
}

TEST(AtomicFile, AnAbandonedWriteLeavesTheTargetAsItWasAndNoTemporaryFile) {
  const std::string dir = fresh_dir();
  put(dir + "keep.bin", "kept");
  {
    AtomicFile f(dir + "keep.bin");
    f.write("half", 4);
    EXPECT_EQ(files_in(dir).size(), 2u);  // the target and the temporary file
  }
  EXPECT_EQ(content(dir + "keep.bin"), "kept");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"keep.bin"});
  AtomicFile done(dir + "keep.bin");
  done.commit();
  EXPECT_THROW(done.write("x", 1), IoError);
  EXPECT_THROW(done.commit(), IoError);
}

// Messages name the path given, never "X.partial-PID-N".
TEST(AtomicFile, ErrorsNameThePathNotTheTemporaryFile) {
  const std::string dir = fresh_dir();
  const std::string missing = refusal(dir + "no-such-dir/out.bin");
  EXPECT_NE(missing.find("'" + dir + "no-such-dir/out.bin' (creating its temporary file beside it): No such file"),
            std::string::npos)
      << missing;
  EXPECT_EQ(missing.find(".partial"), std::string::npos) << missing;

  // A write past the file size limit fails as a full disk does (EFBIG instead of ENOSPC).
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  std::string message;
  {
    AtomicFile f(dir + "big.bin");
    rlimit small = saved;
    small.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const std::string block(8192, 'x');
    try {
      f.write(block.data(), block.size());
      f.write(block.data(), block.size());
    } catch (const IoError& e) {
      message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
  }
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(message.find("cannot write '" + dir + "big.bin': File too large"), std::string::npos) << message;
  EXPECT_TRUE(files_in(dir).empty());
}

TEST(AtomicFile, TheSignalHandlerCleanupRemovesOnlyTemporaryFilesInProgress) {
  const std::string dir = fresh_dir();
  write_all(dir + "committed.bin", "safe");
  AtomicFile a(dir + "a.bin");
  AtomicFile b(dir + "b.bin");
  a.write("aaaa", 4);
  EXPECT_EQ(files_in(dir).size(), 3u);
  remove_temporary_files_from_signal_handler();
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"committed.bin"});
  EXPECT_EQ(content(dir + "committed.bin"), "safe");
}

}  // namespace
}  // namespace peak::io
