// The history: browsing as readline does, and the history file (appends,
// its bound, files that cannot be read or written).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "line_history.h"
#include "scratch_dir.h"

namespace {

using peak::test::file_bytes;
using peak::test::make_scratch_dir;

TEST(History, AddSkipsEmptyAndRepeatsAndKeepsTheNewest) {
  History h(3);
  EXPECT_FALSE(h.add(""));
  EXPECT_TRUE(h.add("a"));
  EXPECT_FALSE(h.add("a"));
  for (const char* e : {"b", "c", "d"}) EXPECT_TRUE(h.add(e));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0], "b");
  EXPECT_EQ(h[2], "d");
  EXPECT_TRUE(h.add("b"));  // not the newest: added again
}

TEST(History, BrowsingKeepsTheDraftAndEditsUntilItStops) {
  History h(10);
  h.add("one");
  h.add("two");
  EXPECT_EQ(h.newer("draft"), nullptr);  // not browsing: nothing below the draft
  ASSERT_NE(h.older("draft"), nullptr);
  const std::string* shown = h.older("two!");  // "two" was edited before going up
  ASSERT_NE(shown, nullptr);
  EXPECT_EQ(*shown, "one");
  EXPECT_EQ(h.older("one"), nullptr);  // the oldest
  EXPECT_EQ(*h.newer("one"), "two!");
  EXPECT_EQ(*h.newer("two!"), "draft");
  EXPECT_EQ(h.newer("draft"), nullptr);
  h.stop_browsing();
  EXPECT_EQ(*h.older(""), "two");  // the edit is gone, the entry never changed
  EXPECT_EQ(h[1], "two");
}

class HistoryFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_scratch_dir(::testing::TempDir(), "line_history_"); }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0700);
    ::nftw(dir_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
  }
  HistoryFile file(const std::string& path) {
    return HistoryFile(path, [this](const std::string& w) { warnings_.push_back(w); });
  }

  std::string dir_;
  std::vector<std::string> warnings_;
};

TEST_F(HistoryFileTest, EscapingRoundTrips) {
  for (const std::string& entry : {std::string("plain"), std::string("two\nlines"), std::string("back\\slash\\n"),
                                   std::string("\\"), std::string("\n\n"), std::string("tab\tand \xff")}) {
    const std::string line = HistoryFile::escape(entry);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(HistoryFile::unescape(line), entry);
  }
  EXPECT_EQ(HistoryFile::escape("a\nb\\c"), "a\\nb\\\\c");
  EXPECT_EQ(HistoryFile::unescape("odd\\x\\"), "odd\\x\\");  // a hand-edited line stays readable
}

TEST_F(HistoryFileTest, AppendsCreateTheDirectoriesPrivatelyAndLoadBack) {
  const std::string path = dir_ + "state/peak/history";
  HistoryFile f = file(path);
  f.append("first");
  f.append("second\nline");
  EXPECT_EQ(file_bytes(path), "first\nsecond\\nline\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ + "state/peak").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  History h(10);
  file(path).load(h, 10);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1], "second\nline");
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(HistoryFileTest, NoFileYetIsNoError) {
  History h(10);
  file(dir_ + "none/history").load(h, 10);
  EXPECT_EQ(h.size(), 0u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(HistoryFileTest, MoreEntriesThanKeptAreCutFromTheFile) {
  const std::string path = dir_ + "history";
  {
    std::ofstream out(path);
    for (int i = 0; i < 150; ++i) out << "entry " << i << "\n";
  }
  History h(100);
  file(path).load(h, 100);
  ASSERT_EQ(h.size(), 100u);
  EXPECT_EQ(h[0], "entry 50");
  EXPECT_EQ(h[99], "entry 149");
  std::string expected;
  for (int i = 50; i < 150; ++i) expected += "entry " + std::to_string(i) + "\n";
  EXPECT_EQ(file_bytes(path), expected);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(HistoryFileTest, AHugeFileIsReadFromItsEnd) {
  const std::string path = dir_ + "history";
  const std::string long_entry(100000, 'x');
  {
    std::ofstream out(path);
    for (int i = 0; i < 60; ++i) out << long_entry << i << "\n";  // 6 MB
  }
  History h(1000);
  file(path).load(h, 1000);
  ASSERT_GT(h.size(), 0u);
  ASSERT_LT(h.size(), 60u);
  EXPECT_EQ(h[h.size() - 1], long_entry + "59");
  // Every entry loaded is whole: the cut one at the start of what was read is dropped.
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(h[i], long_entry + std::to_string(60 - h.size() + i));
  }
  const std::string after = file_bytes(path);
  EXPECT_LE(after.size(), size_t{4} << 20);
  EXPECT_EQ(after.substr(0, long_entry.size()), long_entry);
}

TEST_F(HistoryFileTest, UnreadableAndUnwritableFilesWarnOnce) {
  // The path is a directory: it cannot be read, nor appended to.
  const std::string path = dir_ + "adir";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  HistoryFile f = file(path);
  History h(10);
  f.load(h, 10);
  f.append("one");
  f.append("two");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("cannot read the history file '" + path + "'"), std::string::npos) << warnings_[0];

  // A parent that is a regular file: reading fails, and so do appends, once reported.
  warnings_.clear();
  const std::string blocker = dir_ + "afile";
  std::ofstream(blocker) << "x";
  file(blocker + "/peak/history").load(h, 10);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("cannot read the history file"), std::string::npos) << warnings_[0];
  warnings_.clear();
  HistoryFile g = file(blocker + "/peak/history");
  g.append("one");
  g.append("two");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("cannot write the history file"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("Not a directory"), std::string::npos) << warnings_[0];
}

TEST_F(HistoryFileTest, NoPathWarnsOnceAndKeepsNothing) {
  HistoryFile f = file("");
  History h(10);
  f.load(h, 10);
  f.append("one");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("XDG_STATE_HOME"), std::string::npos);
}

TEST(HistoryFilePath, XdgStateHomeThenHome) {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  ::setenv("XDG_STATE_HOME", "/state", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(HistoryFile::default_path(), "/state/peak/history");
  ::setenv("XDG_STATE_HOME", "relative", 1);  // the XDG spec: a relative path is ignored
  EXPECT_EQ(HistoryFile::default_path(), "/home/u/.local/state/peak/history");
  ::unsetenv("XDG_STATE_HOME");
  EXPECT_EQ(HistoryFile::default_path(), "/home/u/.local/state/peak/history");
  ::unsetenv("HOME");
  EXPECT_EQ(HistoryFile::default_path(), "");
  if (xdg) ::setenv("XDG_STATE_HOME", saved_xdg.c_str(), 1);
  if (home) ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
