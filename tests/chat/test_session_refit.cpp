// Restoring a session file into a session with other settings (an app update):
// Recent fitted to a smaller window as turns drop messages, the summary cut to
// a smaller summary_max, every message rendered again for another system
// prompt or template, the saved KV cache used where its cells still serve and
// prefilled where not; only another model or a mode that cannot continue the
// conversation refused, the message naming the setting and both values. And a
// file of format 1, written by the code before format 2 (tests/data), read as
// a session that chatted the same turns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_session.h"
#include "kernels/float16.h"
#include "model/model.h"
#include "fresh_prefill.h"
#include "scripted_qwen3.h"
#include "session_file_edit.h"
#include "session_checks.h"
#include "stories_session.h"
#include "synth_session_model.h"

namespace peak::chat {

using kernels::fp16_to_fp32;
using kernels::GgmlType;

namespace {

const model::Model& stories() { return testing::stories_model(); }

const auto& kLines = testing::kStoryLines;
using testing::expect_compact;
using testing::expect_same_messages;
using testing::max_tokens;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "peak_refit_" + name + ".pkss"; }

// A session of `settings` after `turns` story turns, saved.
std::string saved_session(const SessionSettings& settings, int turns, bool kv, const std::string& name) {
  ChatSession s(stories(), settings);
  testing::chat_story_turns(s, turns);
  const std::string path = temp_path(name);
  s.save(path, kv);
  return path;
}



std::string refusal(ChatSession& s, const std::string& path) {
  try {
    s.restore(path);
  } catch (const SessionMismatch& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a mismatch) ") + e.what();
  }
  return "(restored)";
}

// Rows [first, first + count) of layer `layer`'s K (`v` false) or V in a KV
// snapshot of `n` cells (layer by layer, K then V, cell-major).
std::vector<uint8_t> rows(const std::vector<uint8_t>& snapshot, int64_t n, size_t layer, bool v, int64_t first,
                          int64_t count, const runtime::KvCache& kv) {
  const size_t k_bytes = kv.cell_bytes_k(), v_bytes = kv.cell_bytes_v();
  const size_t layer_at = layer * static_cast<size_t>(n) * (k_bytes + v_bytes);
  const size_t row = v ? v_bytes : k_bytes;
  const size_t at = layer_at + (v ? static_cast<size_t>(n) * k_bytes : 0) + static_cast<size_t>(first) * row;
  return std::vector<uint8_t>(snapshot.begin() + static_cast<std::ptrdiff_t>(at),
                              snapshot.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(count) * row));
}

TEST(SessionRefit, ASmallerRecentMaxDropsTheOldestMessagesAsATurnWould) {
  SessionSettings settings = testing::small_stories_settings();
  settings.type_k = settings.type_v = GgmlType::F32;
  const std::string path = saved_session(settings, 12, true, "smaller_window");
  const auto file = testing::EditableSessionFile::parse(testing::read_bytes(path));
  SessionSettings smaller = settings;
  smaller.recent_max = 40;
  smaller.trigger_discard = 1000;  // no summary job at the restore: the cells stay as restored
  const int64_t bound = smaller.recent_max + smaller.headroom;
  // From the file: its oldest recent messages leave until the rest fit.
  int64_t cells = 0, dropped_cells = 0;
  for (const auto& m : file.recent) cells += static_cast<int64_t>(m.tokens.size());
  ASSERT_GT(cells, bound);
  size_t drop = 0;
  std::string dropped_lines;
  while (cells > bound) {
    const auto& m = file.recent[drop++];
    cells -= static_cast<int64_t>(m.tokens.size());
    dropped_cells += static_cast<int64_t>(m.tokens.size());
    dropped_lines += (m.role == "user" ? "User: " : "Assistant: ") + m.text + "\n";
  }
  std::vector<int32_t> expected = file.prefix;
  expected.insert(expected.end(), file.summary_tokens.begin(), file.summary_tokens.end());
  for (size_t i = drop; i < file.recent.size(); ++i) {
    expected.insert(expected.end(), file.recent[i].tokens.begin(), file.recent[i].tokens.end());
  }

  ChatSession restored(stories(), smaller);
  restored.restore(path);
  EXPECT_EQ(restored.cached_tokens(), expected);
  expect_compact(restored);
  EXPECT_EQ(restored.stats().recent_messages, static_cast<int64_t>(file.recent.size() - drop));
  EXPECT_EQ(restored.stats().dropped_total, file.dropped_total + dropped_cells);
  EXPECT_EQ(restored.dropped_text(), file.dropped + dropped_lines);
  EXPECT_EQ(restored.summary(), file.summary_text);
  // The cells kept are the file's: the Prefix and Summary whole, Recent's
  // values (V, never rotated) byte for byte after the dropped ones.
  const runtime::KvCache& kv = restored.context().kv();
  const std::vector<uint8_t> now = kv.snapshot();
  const auto segments = static_cast<int64_t>(file.prefix.size() + file.summary_tokens.size());
  const auto saved_n = static_cast<int64_t>(file.positions.size());
  for (size_t layer = 0; layer < kv.layers().size(); ++layer) {
    for (const bool v : {false, true}) {
      EXPECT_EQ(rows(now, kv.used(), layer, v, 0, segments, kv), rows(file.kv, saved_n, layer, v, 0, segments, kv));
    }
    EXPECT_EQ(rows(now, kv.used(), layer, true, segments, kv.used() - segments, kv),
              rows(file.kv, saved_n, layer, true, segments + dropped_cells, kv.used() - segments, kv));
  }
  // The app still sees every message; those dropped now wait for a summary.
  EXPECT_EQ(restored.n_messages(), file.log.size() + 1);
  const size_t first_in_context = restored.n_messages() - file.recent.size() + drop;
  for (size_t i = first_in_context - drop; i < first_in_context; ++i) {
    EXPECT_EQ(restored.message(i).state, MessageState::Dropped) << i;
  }
  EXPECT_EQ(restored.message(first_in_context).state, MessageState::InContext);
  // Without the KV cache the same cells are prefilled.
  ChatSession source(stories(), settings);
  source.restore(path);
  const std::string no_kv = temp_path("smaller_window_no_kv");
  source.save(no_kv, false);
  ChatSession prefilled(stories(), smaller);
  prefilled.restore(no_kv);
  EXPECT_EQ(prefilled.cached_tokens(), expected);
  expect_same_messages(prefilled, restored);
  restored.chat(kLines[0], max_tokens(8));  // and it goes on
  expect_compact(restored);
  // At the trigger, the messages dropped by the restore go to a summary job.
  SessionSettings summarizing = smaller;
  summarizing.trigger_discard = 20;
  ChatSession summarized(stories(), summarizing);
  summarized.restore(path);
  EXPECT_TRUE(summarized.apply_pending_summary(true));
  EXPECT_EQ(summarized.message(first_in_context - 1).state, MessageState::Summarized);
  std::remove(path.c_str());
  std::remove(no_kv.c_str());
}

TEST(SessionRefit, ALargerWindowKeepsEverythingAndItsCells) {
  const SessionSettings settings = testing::small_stories_settings();
  ChatSession source(stories(), settings);
  testing::chat_story_turns(source, 12);
  const std::string path = temp_path("larger_window");
  source.save(path, true);
  SessionSettings larger = settings;
  larger.recent_max = 160;
  larger.headroom = 48;
  larger.summary_max = 64;
  ChatSession restored(stories(), larger);
  restored.restore(path);
  EXPECT_EQ(restored.cached_tokens(), source.cached_tokens());
  EXPECT_EQ(restored.context().kv().snapshot(), source.context().kv().snapshot()) << "the saved cells are used";
  EXPECT_EQ(restored.summary(), source.summary());
  EXPECT_EQ(restored.stats().dropped_total, source.stats().dropped_total);
  expect_same_messages(restored, source);
  EXPECT_GT(restored.stats().n_ctx, source.stats().n_ctx);
  restored.chat(kLines[3], max_tokens(40));
  expect_compact(restored);
  std::remove(path.c_str());
}

TEST(SessionRefit, ASmallerSummaryMaxCutsTheSummaryAtASentenceEnd) {
  const SessionSettings settings = testing::small_stories_settings();
  ChatSession source(stories(), settings);
  testing::chat_story_turns(source, 15);
  const std::string path = temp_path("smaller_summary");
  source.save(path, true);
  SessionSettings smaller = settings;
  smaller.summary_max = 34;  // the raw framing takes 23 tokens of stories260K's vocabulary
  ASSERT_GT(source.stats().summary_tokens, smaller.summary_max);
  ChatSession restored(stories(), smaller);
  restored.restore(path);
  EXPECT_LE(restored.stats().summary_tokens, smaller.summary_max);
  EXPECT_LT(restored.summary().size(), source.summary().size());
  EXPECT_FALSE(restored.summary().empty());
  EXPECT_EQ(source.summary().rfind(restored.summary(), 0), 0u) << restored.summary();
  expect_compact(restored);
  EXPECT_EQ(restored.stats().recent_tokens, source.stats().recent_tokens);
  expect_same_messages(restored, source);
  restored.chat(kLines[0], max_tokens(8));
  std::remove(path.c_str());
}

// Another system prompt renders the Prefix again; another template every
// message: as a session with those settings fed the same messages holds them.
TEST(SessionRefit, AnotherSystemPromptOrTemplateRendersEveryMessageAgain) {
  const SessionSettings settings = testing::small_stories_settings();
  const std::string path = saved_session(settings, 12, true, "system_prompt");
  ChatSession source(stories(), settings);
  source.restore(path);
  SessionSettings other = settings;
  other.system_prompt = "Max and Sue run to the sea.";
  ChatSession restored(stories(), other);
  restored.restore(path);
  EXPECT_EQ(restored.message(0).text, other.system_prompt);
  for (size_t i = 1; i < restored.n_messages(); ++i) EXPECT_EQ(restored.message(i).text, source.message(i).text);
  const std::string text = stories().tokenizer().detokenize(restored.cached_tokens(), true, false);
  EXPECT_LT(text.find("Max and Sue run to the sea.\n"), 2u) << text;
  EXPECT_EQ(text.find("Lily and Tom"), std::string::npos) << text;
  expect_compact(restored);
  restored.chat(kLines[0], max_tokens(8));

  const std::string model_path = ::testing::TempDir() + "peak_refit_qwen3_scripted.gguf";
  test::write_scripted_qwen3(model_path);
  const auto qwen3 = model::Model::load(model_path);
  const SessionSettings own = testing::scripted_qwen3_settings();
  ChatSession qwen(*qwen3, own);
  for (const char* q : {"What colour is the sky?", "And the sea?"}) qwen.chat(q, max_tokens(16));
  const std::string qwen_path = temp_path("template");
  qwen.save(qwen_path, true);
  SessionSettings zephyr = own;
  zephyr.template_name = "zephyr";
  ChatSession rendered(*qwen3, zephyr), fed(*qwen3, zephyr);
  rendered.restore(qwen_path);
  for (const auto& m : qwen.log()) fed.append(m.role, m.content);
  EXPECT_EQ(rendered.cached_tokens(), fed.cached_tokens());
  EXPECT_NE(rendered.cached_tokens(), qwen.cached_tokens());
  expect_same_messages(rendered, qwen);
  std::remove(path.c_str());
  std::remove(qwen_path.c_str());
}

TEST(SessionRefit, OtherKvTypesArePrefilled) {
  SessionSettings settings = testing::small_stories_settings();
  settings.type_k = settings.type_v = GgmlType::F32;
  const std::string path = saved_session(settings, 10, true, "kv_types");
  SessionSettings f16 = settings;
  f16.type_k = f16.type_v = GgmlType::F16;
  ChatSession restored(stories(), f16), source(stories(), settings);
  restored.restore(path);
  source.restore(path);
  EXPECT_EQ(restored.cached_tokens(), source.cached_tokens());
  EXPECT_EQ(restored.context().kv().type_k(), GgmlType::F16);
  const std::vector<int32_t> probe = stories().tokenizer().encode("The end.", false, false);
  EXPECT_LT(testing::deviation_from_fresh_prefill(stories(), restored, probe, GgmlType::F16), 5e-3);
  std::remove(path.c_str());
}

TEST(SessionRefit, AnotherModelIsRefusedNamingWhatDiffers) {
  const std::string path = saved_session(testing::small_stories_settings(), 3, true, "other_model");
  const auto synth = testing::synth_session_model(1, ::testing::TempDir() + "peak_refit_one_layer.gguf");
  ChatSession other(*synth, testing::small_stories_settings());
  other.chat(kLines[0], max_tokens(4));
  const std::vector<int32_t> before = other.cached_tokens();
  const std::string error = refusal(other, path);
  const std::string expected = "it was saved with another model: parameters " + std::to_string(stories().n_params()) +
                               ", this session's model's " + std::to_string(synth->n_params());
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  EXPECT_EQ(other.cached_tokens(), before);
  std::remove(path.c_str());
}

TEST(SessionRefit, AModeThatCannotContinueTheConversationIsRefused) {
  const std::string ssskv = saved_session(testing::small_stories_settings(MemoryMode::Ssskv), 12, true, "ssskv");
  const std::string window = saved_session(testing::small_stories_settings(MemoryMode::Window), 12, true, "window");
  const std::string none = saved_session(testing::small_stories_settings(MemoryMode::None), 3, true, "none");
  ChatSession as_window(stories(), testing::small_stories_settings(MemoryMode::Window));
  ChatSession as_none(stories(), testing::small_stories_settings(MemoryMode::None));
  ChatSession as_ssskv(stories(), testing::small_stories_settings(MemoryMode::Ssskv));
  EXPECT_NE(refusal(as_window, ssskv)
                .find("memory mode: it was saved in mode ssskv, this session's is window (a session of mode window "
                      "keeps no summary)"),
            std::string::npos);
  EXPECT_NE(refusal(as_none, ssskv).find("memory mode: it was saved in mode ssskv, this session's is none"),
            std::string::npos);
  EXPECT_NE(refusal(as_none, window)
                .find("memory mode: it was saved in mode window, this session's is none (mode none keeps every "
                      "message in context, and a window session has dropped some)"),
            std::string::npos);
  // A window session continues in ssskv: what it dropped goes to a summary.
  EXPECT_EQ(refusal(as_ssskv, window), "(restored)");
  EXPECT_TRUE(as_ssskv.apply_pending_summary(true));
  EXPECT_FALSE(as_ssskv.summary().empty());
  EXPECT_EQ(as_ssskv.message(1).state, MessageState::Summarized);
  // A none session continues in window or ssskv.
  EXPECT_EQ(refusal(as_window, none), "(restored)");
  EXPECT_EQ(refusal(as_ssskv, none), "(restored)");
  as_window.chat(kLines[1], max_tokens(4));
  for (const std::string& p : {ssskv, window, none}) std::remove(p.c_str());
}

TEST(SessionRefit, ModeNoneRefusesAConversationLargerThanItsWindow) {
  SessionSettings large = testing::small_stories_settings(MemoryMode::None);
  large.recent_max = 200;
  const std::string path = saved_session(large, 6, true, "none_large");
  SessionSettings small = large;
  small.recent_max = 40;
  ChatSession session(stories(), small);
  const std::string error = refusal(session, path);
  EXPECT_NE(error.find("recent_max: its conversation holds"), std::string::npos) << error;
  EXPECT_NE(error.find("more than this session's recent_max + headroom (40 + 32) hold, and mode none never drops a "
                       "message (it was saved with recent_max 200)"),
            std::string::npos)
      << error;
  EXPECT_EQ(session.n_messages(), 1u);
  std::remove(path.c_str());
}

// Two snapshots of F16 caches (stories260K's heads of 8 values take one) hold
// the same cells: every value equal or apart by at most one F16 step at the
// cache's largest magnitude, and no more than one in ten apart. The file's
// cells were computed by an earlier build, whose attention summed the softmax
// in other blocks of keys; that moved 2 % of the values by about the rounding
// of the largest ones. A cell out of place would move most values, and by far
// more.
void expect_same_f16_cache(const std::vector<uint8_t>& restored, const std::vector<uint8_t>& live) {
  ASSERT_EQ(restored.size(), live.size());
  const auto value = [](const std::vector<uint8_t>& bytes, size_t i) {
    return fp16_to_fp32(static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8));
  };
  const size_t n = live.size() / 2;
  float largest = 0.0f;
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(value(live, i)));
  const float step = largest / 1024.0f;  // at most one step of an F16 of that magnitude
  size_t apart = 0;
  for (size_t i = 0; i < n; ++i) {
    const float x = value(restored, i), y = value(live, i);
    if (x == y) continue;
    ++apart;
    ASSERT_LE(std::fabs(x - y), step) << "value " << i << ": " << x << " against " << y;
  }
  EXPECT_LE(apart * 10, n) << apart << " of " << n << " values differ";
}

// tests/data/session_v1_stories260K.pkss: format 1, written by peak before
// format 2 with the small stories settings after 15 turns of the story lines
// (answers of 12 tokens), its summary in place and 39 dropped tokens waiting
// for the next one.
TEST(SessionRefit, AFormat1FileReadsAsTheSessionThatWroteIt) {
  const std::string v1 = std::string(PEAK_TEST_DATA_DIR) + "/session_v1_stories260K.pkss";
  ASSERT_EQ(testing::EditableSessionFile::parse(testing::read_bytes(v1)).version, 1u);
  const SessionSettings settings = testing::small_stories_settings();
  ChatSession restored(stories(), settings), live(stories(), settings);
  restored.restore(v1);
  for (int turn = 0; turn < 15; ++turn) live.chat(kLines[turn % 5], max_tokens(12));
  live.wait_for_summary();
  EXPECT_EQ(restored.stats().dropped_since_summary, 39);
  EXPECT_EQ(restored.cached_tokens(), live.cached_tokens());
  expect_same_f16_cache(restored.context().kv().snapshot(), live.context().kv().snapshot());
  EXPECT_EQ(restored.summary(), live.summary());
  EXPECT_EQ(restored.dropped_text(), live.dropped_text());
  // The message states format 1 did not save, worked out from its dropped text.
  expect_same_messages(restored, live);
  size_t summarized = 0, dropped = 0;
  for (size_t i = 0; i < restored.n_messages(); ++i) {
    summarized += restored.message(i).state == MessageState::Summarized ? 1 : 0;
    dropped += restored.message(i).state == MessageState::Dropped ? 1 : 0;
  }
  EXPECT_GT(summarized, 0u);
  EXPECT_GT(dropped, 0u);
  // Saved again, it is a format 2 file of the same session.
  const std::string v2 = temp_path("from_v1");
  restored.save(v2, true);
  EXPECT_EQ(testing::EditableSessionFile::parse(testing::read_bytes(v2)).version, 2u);
  ChatSession again(stories(), settings);
  again.restore(v2);
  expect_same_messages(again, live);
  EXPECT_EQ(testing::answer(again, kLines[0], 12), testing::answer(live, kLines[0], 12));
  std::remove(v2.c_str());
}

}  // namespace
}  // namespace peak::chat
