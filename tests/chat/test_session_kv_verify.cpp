// SessionSettings::verify_kv_cells: a restored file's first KV cells computed
// again and compared (runtime/kv_verify.h). Cells that differ (a file whose
// every value is 1.0: finite, so the reader takes it) are not used: the
// conversation is prefilled, as from a file without cells. Right cells pass
// for every KV type, after turns evaluated a token at a time and after drops.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_session.h"
#include "log/log.h"
#include "model/model.h"
#include "session_file_edit.h"
#include "stories_session.h"
#include "synth_session_model.h"

namespace peak::chat {
namespace {

using kernels::GgmlType;
using testing::EditableSessionFile;

const auto& kLines = testing::kStoryLines;

// The warnings written while it lives (log::set_sink takes a plain function).
class Warnings {
 public:
  Warnings() { log::set_sink(&Warnings::collect); }
  ~Warnings() { log::set_sink(nullptr); }
  static std::vector<std::string> taken() {
    const std::lock_guard<std::mutex> lock(mutex());
    return std::move(messages());
  }

 private:
  static void collect(log::Level level, const char* message) {
    if (level != log::Level::Warn) return;
    const std::lock_guard<std::mutex> lock(mutex());
    messages().emplace_back(message);
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<std::string>& messages() {
    static std::vector<std::string> m;
    return m;
  }
};

size_t n_layer() { return static_cast<size_t>(testing::stories_model().hparams().n_layer); }

SessionSettings f32_settings(int64_t verify_kv_cells) {
  SessionSettings s = testing::small_stories_settings();
  s.type_k = s.type_v = GgmlType::F32;
  s.verify_kv_cells = verify_kv_cells;
  return s;
}

// Three turns of `m` saved with their cells to `path`, none dropped (so that
// a check may compute every cell again); returns the file.
EditableSessionFile save_three_turns(const model::Model& m, const SessionSettings& settings, const std::string& path) {
  ChatSession source(m, settings);
  testing::chat_story_turns(source, 3);
  EXPECT_EQ(source.stats().dropped_total, 0);
  source.save(path, true);
  return EditableSessionFile::parse(testing::read_bytes(path));
}

// `file` (F32 cells of `n_layer` layers) with every value of the cells from
// `first` on set to 1.0. Its cells are layer by layer, K then V, each
// [cells][n_head_kv][head_dim]: 2 * n_layer blocks of the same size here.
EditableSessionFile ones_from(EditableSessionFile file, size_t first, size_t n_layer) {
  const size_t block = file.kv.size() / (2 * n_layer);
  const size_t cell = block / file.positions.size();
  const float one = 1.0f;
  for (size_t start = 0; start < file.kv.size(); start += block) {
    for (size_t at = start + first * cell; at < start + block; at += 4) std::memcpy(&file.kv[at], &one, 4);
  }
  return file;
}

// The same conversation without cells: restoring it prefills.
std::string without_cells(EditableSessionFile file, const std::string& path) {
  file.has_kv = 0;
  file.positions.clear();
  file.kv.clear();
  testing::write_bytes(path, file.bytes());
  return path;
}

TEST(SessionKvVerify, CellsOfOnesAreNotUsedAndTheConversationIsPrefilled) {
  const std::string path = ::testing::TempDir() + "peak_kv_verify_ones.pkss";
  const std::string plain = ::testing::TempDir() + "peak_kv_verify_plain.pkss";
  const EditableSessionFile good = save_three_turns(testing::stories_model(), f32_settings(0), path);
  const EditableSessionFile ones = ones_from(good, 0, n_layer());
  testing::write_bytes(path, ones.bytes());

  ChatSession prefilled(testing::stories_model(), f32_settings(0));
  prefilled.restore(without_cells(good, plain));

  const Warnings warnings;
  ChatSession checked(testing::stories_model(), f32_settings(64));
  checked.restore(path);
  const std::vector<std::string> seen = Warnings::taken();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find(path + ": its KV cache differs from the cells computed again (layer 0 K, cell 0, head 0"),
            std::string::npos)
      << seen[0];
  EXPECT_EQ(checked.context().kv().snapshot(), prefilled.context().kv().snapshot());
  EXPECT_EQ(checked.log().size(), prefilled.log().size());
  EXPECT_EQ(testing::answer(checked, kLines[3], 16), testing::answer(prefilled, kLines[3], 16));

  // Unchecked (the default), the cells are used as read, and the answer is another.
  ChatSession trusting(testing::stories_model(), f32_settings(0));
  trusting.restore(path);
  EXPECT_TRUE(Warnings::taken().empty());
  EXPECT_EQ(trusting.context().kv().snapshot(), ones.kv);
  EXPECT_NE(testing::answer(trusting, kLines[3], 16), testing::answer(checked, kLines[3], 16));
  std::remove(path.c_str());
  std::remove(plain.c_str());
}

// Only the first verify_kv_cells cells are computed again: wrong cells after
// them are used (the cost the setting bounds), cells among them are not.
TEST(SessionKvVerify, OnlyTheFirstCellsAreChecked) {
  const std::string path = ::testing::TempDir() + "peak_kv_verify_tail.pkss";
  const EditableSessionFile good = save_three_turns(testing::stories_model(), f32_settings(0), path);
  const int64_t cells = static_cast<int64_t>(good.positions.size());
  const EditableSessionFile tail = ones_from(good, static_cast<size_t>(cells - 1), n_layer());
  testing::write_bytes(path, tail.bytes());

  const Warnings warnings;
  ChatSession short_check(testing::stories_model(), f32_settings(cells - 1));
  short_check.restore(path);
  EXPECT_TRUE(Warnings::taken().empty());
  EXPECT_EQ(short_check.context().kv().snapshot(), tail.kv);

  ChatSession whole_check(testing::stories_model(), f32_settings(cells));
  whole_check.restore(path);
  const std::vector<std::string> seen = Warnings::taken();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("(layer 0 K, cell " + std::to_string(cells - 1) + ", head 0"), std::string::npos) << seen[0];
  EXPECT_NE(whole_check.context().kv().snapshot(), tail.kv);
  std::remove(path.c_str());
}

// A file's own cells pass: computed by turns (answers a token at a time), in
// another batch size, for every KV type.
TEST(SessionKvVerify, RightCellsPassForEveryKvType) {
  const std::string path = ::testing::TempDir() + "peak_kv_verify_types.pkss";
  const auto synth = testing::synth_session_model(2, ::testing::TempDir() + "peak_kv_verify_synth.gguf");
  struct Case {
    const model::Model* model;
    GgmlType type;
  };
  // stories260K's heads of 8 take F32 and F16; the synthetic model's of 32 the blocks.
  for (const Case& c : {Case{&testing::stories_model(), GgmlType::F32}, Case{&testing::stories_model(), GgmlType::F16},
                        Case{synth.get(), GgmlType::Q8_0}, Case{synth.get(), GgmlType::Q4_0}}) {
    SCOPED_TRACE(kernels::ggml_type_name(static_cast<uint32_t>(c.type)));
    SessionSettings settings = testing::small_stories_settings();
    settings.type_k = settings.type_v = c.type;
    settings.recent_max = 1024;  // the synthetic model's raw vocabulary spends a token a letter
    const EditableSessionFile file = save_three_turns(*c.model, settings, path);
    settings.verify_kv_cells = 100000;
    settings.n_batch = 7;  // the check prefills in other batches than the turns' evaluations
    settings.n_threads = 2;
    const Warnings warnings;
    ChatSession restored(*c.model, settings);
    restored.restore(path);
    EXPECT_TRUE(Warnings::taken().empty());
    EXPECT_EQ(restored.context().kv().snapshot(), file.kv);
  }
  std::remove(path.c_str());
}

// After messages left Recent (moved down over them, values computed with them
// in view) only the Prefix's and the Summary's cells are computed again: the
// file's right cells pass.
TEST(SessionKvVerify, RightCellsPassAfterDrops) {
  const std::string path = ::testing::TempDir() + "peak_kv_verify_drops.pkss";
  for (const MemoryMode mode : {MemoryMode::Window, MemoryMode::Ssskv}) {
    SessionSettings settings = testing::small_stories_settings(mode);
    settings.rebuild = RebuildStrategy::Shift;
    ChatSession source(testing::stories_model(), settings);
    testing::chat_story_turns(source, 12);
    ASSERT_GT(source.stats().dropped_total, 0);
    source.save(path, true);
    const EditableSessionFile file = EditableSessionFile::parse(testing::read_bytes(path));
    settings.verify_kv_cells = 100000;
    const Warnings warnings;
    ChatSession restored(testing::stories_model(), settings);
    restored.restore(path);
    EXPECT_TRUE(Warnings::taken().empty());
    EXPECT_EQ(restored.context().kv().snapshot(), file.kv);
  }
  std::remove(path.c_str());
}

TEST(SessionKvVerify, ANegativeCountIsRefused) {
  SessionSettings settings = testing::small_stories_settings();
  settings.verify_kv_cells = -1;
  try {
    ChatSession session(testing::stories_model(), settings);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "verify_kv_cells is -1; it must be at least 0");
  }
}

}  // namespace
}  // namespace peak::chat
