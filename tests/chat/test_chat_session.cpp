// SSSKV-lite sessions on the real stories260K model (and a one-layer synthetic
// model where a shift rebuild is exact): summary triggering, bounded context
// over long conversations, rebuild equivalence, modes, save and restore, failed
// turns and restores that change nothing, files refused behind a right checksum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "model/model.h"
#include "chat/chat_session.h"
#include "fresh_prefill.h"
#include "session_file_edit.h"
#include "stories_session.h"
#include "synth_session_model.h"

namespace peak::chat {

using kernels::GgmlType;

namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(testing::kStoriesPath);
  return *m;
}

SessionSettings small_settings(MemoryMode mode) { return testing::small_stories_settings(mode); }

runtime::GenerateOptions max_tokens(int n) {
  runtime::GenerateOptions o;
  o.max_tokens = n;
  return o;
}

const auto& kLines = testing::kStoryLines;

TEST(ChatSession, SummariesStartExactlyWhenDroppedTokensReachTheTrigger) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  ChatSession session(stories(), settings);
  SessionStats before = session.stats();
  int summaries_started = 0;
  for (int turn = 0; turn < 40; ++turn) {
    const TurnResult r = session.chat(kLines[turn % 5], max_tokens(12));
    const SessionStats after = session.stats();
    const int64_t accumulated = before.dropped_since_summary + (after.dropped_total - before.dropped_total);
    EXPECT_EQ(r.summary_started, accumulated >= settings.trigger_discard) << "turn " << turn;
    if (r.summary_started) {
      ++summaries_started;
      EXPECT_EQ(after.dropped_since_summary, 0);
    } else {
      EXPECT_EQ(after.dropped_since_summary, accumulated);
    }
    // A job started in a turn is put in place at the start of the next one.
    if (turn > 0 && r.rebuilt) {
      EXPECT_GE(after.summaries, 1);
    }
    before = after;
  }
  EXPECT_GE(summaries_started, 3);
  EXPECT_GE(session.stats().summaries, 2);
  EXPECT_FALSE(session.summary().empty());
}

TEST(ChatSession, TheMainContextNeverExceedsItsSizeTurnAfterTurn) {
  SessionSettings settings = small_settings(MemoryMode::Ssskv);
  settings.trigger_discard = 120;           // fewer summaries keep the test quick
  settings.summarizer.max_new_tokens = 16;
  ChatSession session(stories(), settings);
  const size_t kv_bytes = session.stats().kv_bytes;
  // A sanitizer build runs a turn several times slower: 250 turns there (a dozen
  // summaries), the whole 1000 in Release.
  constexpr int kTurns = PEAK_TEST_SANITIZED ? 250 : 1000;
  for (int turn = 0; turn < kTurns; ++turn) {
    session.chat(kLines[turn % 5], max_tokens(turn % 7 == 0 ? 40 : 6));
    const SessionStats s = session.stats();
    const int64_t used = session.context().kv().used();
    ASSERT_LE(used, s.n_ctx) << "turn " << turn;
    ASSERT_EQ(used, s.prefix_tokens + s.summary_tokens + s.recent_tokens) << "turn " << turn;
    ASSERT_LE(s.summary_tokens, settings.summary_max);
    ASSERT_LE(s.recent_tokens, settings.recent_max + settings.headroom);
    ASSERT_EQ(s.kv_bytes, kv_bytes);
    ASSERT_EQ(static_cast<int64_t>(session.context().kv().positions().back()), used - 1) << "positions stay compact";
  }
  EXPECT_GT(session.stats().summaries, kTurns / 50);
  EXPECT_FALSE(session.summary().empty());
  std::printf("%d turns: %lld summaries, %lld tokens dropped, %.2f s summarizing, %.2f s rebuilding\n",
              kTurns, static_cast<long long>(session.stats().summaries),
              static_cast<long long>(session.stats().dropped_total), session.stats().summary_seconds,
              session.stats().rebuild_seconds);
}

// Runs turns until a summary is ready, puts it in place and returns the
// deviation right then (a turn would go on to drop and shift Recent).
double deviation_after_rebuild(const model::Model& m, SessionSettings settings) {
  ChatSession session(m, settings);
  for (int turn = 0; turn < 60; ++turn) {
    session.chat(kLines[turn % 5], max_tokens(12));
    if (session.apply_pending_summary(true)) {
      return testing::deviation_from_fresh_prefill(m, session, {5}, session.context().kv().type_k());
    }
  }
  ADD_FAILURE() << "no rebuild happened";
  return 1e9;
}

// With an F32 cache: the rebuilt cells must hold what a fresh prefill writes, up
// to the order of float sums (the rebuild prefills in other batches). An F16
// cache rounds each K and V value, and a value one float ulp apart in another
// batch can round to the neighbouring half: on the SIMD paths logits then move
// by up to about 2e-3 between batch sizes, with or without a rebuild.
TEST(ChatSession, ReprefillRebuildEqualsAFreshContext) {
  SessionSettings settings = small_settings(MemoryMode::Ssskv);
  settings.rebuild = RebuildStrategy::Reprefill;
  settings.type_k = GgmlType::F32;
  settings.type_v = GgmlType::F32;
  const double d = deviation_after_rebuild(stories(), settings);
  std::printf("reprefill rebuild, stories260K, F32 KV: max |logit diff| %.3g\n", d);
  EXPECT_LT(d, 1e-4);
}

TEST(ChatSession, ShiftRebuildIsExactOnOneLayerAndBoundedOnFive) {
  // One layer: Recent's keys and values depend only on its tokens and positions,
  // so re-rotating them is exact.
  const auto one_layer = testing::synth_session_model(1, ::testing::TempDir() + "peak_session_one_layer.gguf");
  SessionSettings settings = small_settings(MemoryMode::Ssskv);
  settings.rebuild = RebuildStrategy::Shift;
  settings.type_k = settings.type_v = GgmlType::F16;
  const double exact = deviation_after_rebuild(*one_layer, settings);
  std::printf("shift rebuild, one layer, F16 KV: max |logit diff| %.3g\n", exact);
  EXPECT_LT(exact, 1e-2);
  settings.type_k = settings.type_v = GgmlType::Q8_0;  // head size 32 takes Q8_0 blocks
  const double q8 = deviation_after_rebuild(*one_layer, settings);
  std::printf("shift rebuild, one layer, Q8_0 KV: max |logit diff| %.3g\n", q8);
  EXPECT_LT(q8, 5e-2);

  // Five layers: deeper keys and values of Recent were computed attending to the
  // old summary and dropped text, so shift approximates reprefill.
  settings = small_settings(MemoryMode::Ssskv);
  settings.rebuild = RebuildStrategy::Shift;
  const double approx = deviation_after_rebuild(stories(), settings);
  std::printf("shift rebuild, stories260K (5 layers), F16 KV: max |logit diff| %.3g\n", approx);
  EXPECT_LT(approx, 5.0);
}

TEST(ChatSession, WindowModeDropsWithoutSummaries) {
  ChatSession session(stories(), small_settings(MemoryMode::Window));
  for (int turn = 0; turn < 50; ++turn) session.chat(kLines[turn % 5], max_tokens(10));
  const SessionStats s = session.stats();
  EXPECT_EQ(s.summaries, 0);
  EXPECT_EQ(s.summary_tokens, 0);
  EXPECT_GT(s.dropped_total, 0);
  EXPECT_LE(session.context().kv().used(), s.n_ctx);
}

TEST(ChatSession, NoneModeGrowsThenStopsWithAClearError) {
  ChatSession session(stories(), small_settings(MemoryMode::None));
  int64_t last_used = 0;
  std::string error;
  for (int turn = 0; turn < 50 && error.empty(); ++turn) {
    try {
      session.chat(kLines[turn % 5], max_tokens(10));
      EXPECT_GT(session.context().kv().used(), last_used);
      last_used = session.context().kv().used();
    } catch (const runtime::ContextFull& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("mode none never drops history"), std::string::npos) << error;
  EXPECT_EQ(session.stats().dropped_total, 0);
}

TEST(ChatSession, SaveAndRestoreContinueWithIdenticalGreedyOutput) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  const std::string path = ::testing::TempDir() + "peak_session.pkss";
  ChatSession original(stories(), settings);
  for (int turn = 0; turn < 12; ++turn) original.chat(kLines[turn % 5], max_tokens(12));
  original.save(path, /*include_kv=*/true);
  std::string continued, restored_text;
  runtime::GenerateOptions o = max_tokens(24);
  o.on_text = [&continued](std::string_view t) { continued.append(t); return true; };
  original.chat("Then the sun came out.", o);

  ChatSession restored(stories(), settings);
  restored.restore(path);
  EXPECT_EQ(restored.stats().turns, 12);
  EXPECT_EQ(restored.log().size(), 24u);
  o.on_text = [&restored_text](std::string_view t) { restored_text.append(t); return true; };
  restored.chat("Then the sun came out.", o);
  EXPECT_FALSE(continued.empty());
  EXPECT_EQ(restored_text, continued);

  // Without the KV cache, restoring prefills the segments again.
  const std::string no_kv = path + ".nokv";
  ChatSession second(stories(), settings);
  for (int turn = 0; turn < 6; ++turn) second.chat(kLines[turn % 5], max_tokens(8));
  second.save(no_kv, false);
  ChatSession third(stories(), settings);
  third.restore(no_kv);
  EXPECT_EQ(third.cached_tokens(), second.cached_tokens());
  std::remove(path.c_str());
  std::remove(no_kv.c_str());
}

TEST(ChatSession, ACorruptedOrTruncatedFileIsRefusedAndTheSessionKeptAsItWas) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  const std::string path = ::testing::TempDir() + "peak_session_bad.pkss";
  ChatSession source(stories(), settings);
  for (int turn = 0; turn < 5; ++turn) source.chat(kLines[turn], max_tokens(8));
  source.save(path, true);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  ChatSession live(stories(), settings);
  live.chat("Hello there.", max_tokens(8));
  const std::vector<int32_t> tokens_before = live.cached_tokens();
  const int64_t turns_before = live.stats().turns;
  auto try_restore = [&](const std::vector<char>& content) -> std::string {
    const std::string bad = path + ".bad";
    std::ofstream(bad, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    try {
      live.restore(bad);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  std::vector<char> flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_NE(try_restore(flipped).find("checksum mismatch"), std::string::npos);
  std::vector<char> truncated(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 3));
  EXPECT_NE(try_restore(truncated).find("truncated"), std::string::npos);
  // A payload cut short under a valid checksum: the message names the file.
  const std::vector<uint8_t> payload(bytes.begin() + 16,
                                     bytes.begin() + 16 + static_cast<long>((bytes.size() - 24) / 2));
  const std::vector<uint8_t> short_payload = testing::frame_session_payload(payload, 2);
  EXPECT_NE(try_restore(std::vector<char>(short_payload.begin(), short_payload.end()))
                .find("session file '" + path + ".bad': payload ends early"),
            std::string::npos);
  EXPECT_NE(try_restore({'n', 'o', 'p', 'e'}).find("not a peak session file"), std::string::npos);
  EXPECT_NE(try_restore({'P', 'K', 'S', 'S', 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
                .find("format version 7 is not supported (1 to 6)"),
            std::string::npos);
  EXPECT_EQ(live.cached_tokens(), tokens_before);
  EXPECT_EQ(live.stats().turns, turns_before);
  live.chat("Still here.", max_tokens(4));  // and it still works
  std::remove(path.c_str());
}

// The restore fails only at the last check (the KV bytes do not match the cells):
// the summary the live session has ready must still be put in place.
TEST(ChatSession, ARestoreRefusedAtItsLastCheckKeepsTheFinishedSummary) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  const std::string path = ::testing::TempDir() + "peak_session_short_kv.pkss";
  ChatSession source(stories(), settings);
  for (int turn = 0; turn < 4; ++turn) source.chat(kLines[turn], max_tokens(8));
  source.save(path, true);
  auto file = testing::EditableSessionFile::parse(testing::read_bytes(path));
  file.kv.resize(file.kv.size() - 1);
  testing::write_bytes(path, file.bytes());

  ChatSession live(stories(), settings), control(stories(), settings);
  int turn = testing::run_twins_until_summary(live, control);
  ASSERT_GT(turn, 0) << "no summary started";
  std::string error;
  try {
    live.restore(path);
  } catch (const std::runtime_error& e) {  // what the C API reports as PEAK_ERR_FORMAT
    error = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a format error: " << e.what();
  }
  EXPECT_NE(error.find("its KV cache holds"), std::string::npos) << error;
  EXPECT_TRUE(live.apply_pending_summary(true)) << "the refused file dropped the summary job";
  control.apply_pending_summary(true);
  EXPECT_EQ(live.summary(), control.summary());
  EXPECT_FALSE(live.summary().empty());
  EXPECT_EQ(live.cached_tokens(), control.cached_tokens());
  EXPECT_EQ(testing::answer(live, kLines[turn % 5], 16), testing::answer(control, kLines[turn % 5], 16));
  std::remove(path.c_str());
}

// A turn whose text callback throws: the session must be as before the turn, so
// a save of it loads, and the conversation continues as in a session that never
// had the failed turn. Turn 2 fails before anything was dropped, turn 9 after
// making room dropped messages (their cells, and Recent moved down).
TEST(ChatSession, AFailedTurnLeavesTheSessionAsItWas) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  const std::string path = ::testing::TempDir() + "peak_session_failed_turn.pkss";
  ChatSession live(stories(), settings), control(stories(), settings);
  runtime::GenerateOptions failing = max_tokens(12);
  failing.on_text = [](std::string_view) -> bool { throw std::runtime_error("the reader went away"); };
  for (int turn = 0; turn < 14; ++turn) {
    if (turn == 2 || turn == 9) {
      // Turn 9's message cannot fit without dropping; turn 2's fits as it is.
      EXPECT_EQ(control.stats().recent_tokens + 20 > settings.recent_max, turn == 9);
      const int64_t dropped_before = live.stats().dropped_total;
      EXPECT_THROW(live.chat("A very long story about a cat, a dog, a bird and the big blue sea.", failing),
                   std::runtime_error);
      EXPECT_EQ(live.cached_tokens(), control.cached_tokens()) << "turn " << turn;
      EXPECT_EQ(live.context().kv().positions(), control.context().kv().positions()) << "turn " << turn;
      EXPECT_EQ(live.context().kv().snapshot(), control.context().kv().snapshot()) << "turn " << turn;
      EXPECT_EQ(live.stats().turns, control.stats().turns);
      EXPECT_EQ(live.stats().dropped_total, dropped_before);
      EXPECT_EQ(live.log().size(), control.log().size());
      EXPECT_EQ(live.dropped_text(), control.dropped_text());
      live.save(path, true);
      ChatSession restored(stories(), settings);
      restored.restore(path);
      ChatSession restored_control(stories(), settings);
      control.save(path, true);
      restored_control.restore(path);
      EXPECT_EQ(testing::answer(restored, kLines[turn % 5], 16), testing::answer(restored_control, kLines[turn % 5], 16));
    }
    EXPECT_EQ(testing::answer(live, kLines[turn % 5], 12), testing::answer(control, kLines[turn % 5], 12)) << "turn " << turn;
  }
  EXPECT_GT(live.stats().dropped_total, 0);
  std::remove(path.c_str());
}

// A message longer than recent_max after others: every earlier message leaves,
// the message keeps its end, and the turn's tokens, which then follow the
// Summary directly, stay where they are (no shift over a gap that is not there).
TEST(ChatSession, AMessageLongerThanTheWindowAfterOthersKeepsItsEnd) {
  const SessionSettings settings = small_settings(MemoryMode::Window);
  ChatSession session(stories(), settings);
  for (int turn = 0; turn < 3; ++turn) session.chat(kLines[turn], max_tokens(8));
  std::string long_text;
  for (int i = 0; i < 12; ++i) long_text += std::string(kLines[i % 5]) + " ";
  ASSERT_GT(static_cast<int64_t>(stories().tokenizer().encode(long_text, false, false).size()), settings.recent_max);
  const TurnResult r = session.chat(long_text, max_tokens(8));
  EXPECT_EQ(r.dropped_messages, 6);
  EXPECT_EQ(session.stats().recent_messages, 2);
  EXPECT_NE(session.dropped_text().find("User (start of a long message): Once upon a time"), std::string::npos);
  const runtime::KvCache& kv = session.context().kv();
  ASSERT_EQ(kv.used(), static_cast<int64_t>(session.cached_tokens().size()));
  for (size_t i = 0; i < kv.positions().size(); ++i) ASSERT_EQ(kv.positions()[i], static_cast<int32_t>(i));
  session.chat(kLines[0], max_tokens(8));
}

// Recent's tokens are checked against their text on restore: what the session
// itself cuts of a message stays acceptable (a long message's start, the
// oldest message's start after a refit to a smaller Recent).
TEST(ChatSession, MessagesCutAsASessionCutsThemAreRestored) {
  const std::string path = ::testing::TempDir() + "peak_session_cut.pkss";
  auto restores_as_saved = [&](ChatSession& saved, const SessionSettings& settings) {
    saved.save(path, /*include_kv=*/false);
    ChatSession restored(stories(), settings);
    restored.restore(path);
    EXPECT_EQ(restored.cached_tokens(), saved.cached_tokens());
  };
  const SessionSettings window = small_settings(MemoryMode::Window);
  ChatSession session(stories(), window);
  for (int turn = 0; turn < 2; ++turn) session.chat(kLines[turn], max_tokens(8));
  std::string long_text;
  for (int i = 0; i < 12; ++i) long_text += std::string(kLines[i % 5]) + " ";
  session.chat(long_text, max_tokens(8));
  ASSERT_NE(session.dropped_text().find("(start of a long message)"), std::string::npos);
  restores_as_saved(session, window);

  // Restored into a smaller Recent, the oldest message loses its start; saved
  // again, it is restored as it is.
  SessionSettings smaller = window;
  smaller.recent_max = 32;
  smaller.headroom = 24;
  ChatSession refitted(stories(), smaller);
  session.chat(kLines[3], max_tokens(12));
  session.chat(std::string(kLines[0]) + " " + kLines[1] + " " + kLines[2] + " " + kLines[4], max_tokens(12));
  session.save(path, false);
  refitted.restore(path);
  ASSERT_NE(refitted.dropped_text().find("(start of a long message)"), std::string::npos);
  ASSERT_EQ(refitted.stats().recent_messages, 1);
  restores_as_saved(refitted, smaller);
  std::remove(path.c_str());
}

// Files whose bytes match their checksum but say what a session never writes.
TEST(ChatSession, AFileWithARightChecksumIsStillCheckedForWhatItSays) {
  const SessionSettings settings = small_settings(MemoryMode::Ssskv);
  const std::string path = ::testing::TempDir() + "peak_session_semantic.pkss";
  ChatSession source(stories(), settings);
  for (int turn = 0; turn < 14; ++turn) source.chat(kLines[turn % 5], max_tokens(12));
  source.save(path, true);
  const auto good = testing::EditableSessionFile::parse(testing::read_bytes(path));
  ASSERT_FALSE(good.summary_text.empty());
  ASSERT_GE(good.recent.size(), 2u);
  ASSERT_EQ(good.type_k, static_cast<uint32_t>(GgmlType::F16)) << "head size 8 takes no Q8_0 blocks";

  ChatSession live(stories(), settings);
  live.chat("Hello there.", max_tokens(8));
  const std::vector<int32_t> tokens_before = live.cached_tokens();
  const std::vector<uint8_t> kv_before = live.context().kv().snapshot();
  const std::string bad_path = path + ".bad";
  auto refusal = [&](const testing::EditableSessionFile& f) -> std::string {
    testing::write_bytes(bad_path, f.bytes());
    try {
      live.restore(bad_path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(loaded)";
  };
  auto set_half = [](testing::EditableSessionFile& f, size_t value_index, uint16_t bits) {
    std::memcpy(f.kv.data() + 2 * value_index, &bits, 2);
  };
  struct Case {
    const char* what;
    std::function<void(testing::EditableSessionFile&)> mutate;
    const char* message;
  };
  const Case cases[] = {
      {"position INT32_MAX", [](auto& f) { f.positions.back() = INT32_MAX; }, "is at position 2147483647"},
      {"negative position", [](auto& f) { f.positions[3] = -1; }, "is at position -1"},
      {"descending positions", [](auto& f) { std::swap(f.positions[4], f.positions[5]); }, "is at position 5"},
      {"NaN key", [&](auto& f) { set_half(f, 1, 0x7e00); }, "NaN or infinite values (layer 0)"},
      {"infinite value", [&](auto& f) { set_half(f, f.kv.size() / 2 - 1, 0xfc00); }, "NaN or infinite values"},
      {"negative dropped_total", [](auto& f) { f.dropped_total = -5; }, "statistics are negative"},
      {"negative dropped_since_summary", [](auto& f) { f.dropped_since_summary = -1; }, "statistics are negative"},
      {"negative summaries", [](auto& f) { f.summaries = -3; }, "statistics are negative"},
      {"negative turns", [](auto& f) { f.turns = -1; }, "statistics are negative"},
      {"turns not matching the log", [](auto& f) { f.turns += 1; }, "disagree with its messages"},
      {"negative seconds", [](auto& f) { f.rebuild_seconds = -1.0; }, "timings are negative"},
      {"NaN seconds", [](auto& f) { f.summary_seconds = std::nan(""); }, "timings are negative"},
      {"over-long summary",
       [](auto& f) {
         for (int i = 0; i < 60; ++i) f.summary_text += " and then the dog ran home.";
       },
       "longer than summary_max"},
      {"summary tokens not its text", [](auto& f) { f.summary_text = "Nothing happened."; }, "not its summary text"},
      {"recent role outside the enum", [](auto& f) { f.recent[0].role = "system"; }, "role 'system'"},
      {"logged role outside the enum", [](auto& f) { f.log[1].role = std::string("\x1b[2J", 4); }, "a logged message"},
      {"KV flag 2", [](auto& f) { f.has_kv = 2; }, "KV flag is 2"},
      {"token id outside the vocabulary", [](auto& f) { f.recent[1].tokens[0] = 1 << 20; }, "outside the vocabulary"},
      {"prefix id outside the vocabulary", [](auto& f) { f.prefix[0] = -7; }, "its prefix holds token ids outside"},
      {"memory mode outside the enum", [](auto& f) { f.mode = 7; },
       "its memory mode is 7 (0 ssskv, 1 window or 2 none)"},
      {"negative recent_max", [](auto& f) { f.recent_max = -1; }, "sizes (recent_max, summary_max, headroom) are out"},
      {"roles not alternating", [](auto& f) { f.log[2].role = "assistant"; },
       "do not alternate from a user's (message 2"},
      {"recent not the end of the log", [](auto& f) { f.recent.back().text += " (edited)"; },
       "its recent messages are not the last of its messages"},
      // Tokens and text that disagree: the model would read what the log does not say.
      {"recent tokens of another message",
       [](auto& f) { std::swap(f.recent[f.recent.size() - 2].tokens, f.recent[f.recent.size() - 4].tokens); },
       "are not their text as the chat template renders it"},
      {"one recent token replaced",
       [](auto& f) {
         std::vector<int32_t>& t = f.recent[f.recent.size() - 2].tokens;
         t[t.size() / 2] = t[t.size() / 2] == 300 ? 301 : 300;
       },
       "are not their text as the chat template renders it"},
      {"recent text replaced",
       [](auto& f) {
         const std::string other = "The cat slept all day.";
         f.recent[f.recent.size() - 2].text = other;
         f.log[f.log.size() - 2].content = other;
       },
       "are not their text as the chat template renders it"},
      {"more recent messages than messages",
       [](auto& f) {
         f.log.resize(2);
         f.turns = 1;
       },
       "more recent messages than messages"},
      {"more summarized messages than dropped", [](auto& f) { f.summarized_messages = f.log.size(); },
       "messages are summarized, of"},
      {"an unanswered user message outside Recent",
       [](auto& f) {
         f.log.push_back({"user", "Hello?"});
         f.recent.clear();
       },
       "its last message, a user's still without an answer, is not among its recent messages"},
      {"turns not counting the answers", [](auto& f) { f.turns -= 1; }, "disagree with its messages"},
  };
  int refused = 0;
  for (const Case& c : cases) {
    testing::EditableSessionFile f = good;
    c.mutate(f);
    const std::string error = refusal(f);
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
    refused += error != "(loaded)";
    EXPECT_EQ(live.cached_tokens(), tokens_before) << c.what;
    EXPECT_EQ(live.context().kv().snapshot(), kv_before) << c.what;
  }
  // The helper itself writes files the session accepts: rewritten unchanged, the
  // file loads and continues as the original.
  EXPECT_EQ(refusal(good), "(loaded)");
  EXPECT_EQ(live.cached_tokens(), source.cached_tokens());
  std::printf("session files with a recomputed checksum: %zu tried, %d refused, 1 unchanged accepted\n",
              std::size(cases) + 1, refused);
  std::remove(path.c_str());
  std::remove(bad_path.c_str());
}

// reset() while a background summary is being written: the caller's thread asks
// the worker to stop (a data race under ThreadSanitizer while the flag was a
// volatile int).
TEST(ChatSession, ResetCancelsARunningBackgroundSummary) {
  SessionSettings settings = small_settings(MemoryMode::Ssskv);
  settings.background_summary = true;
  settings.summarizer.max_new_tokens = 64;
  ChatSession session(stories(), settings);
  int cancelled = 0;
  for (int turn = 0; turn < 60 && cancelled < 3; ++turn) {
    if (session.chat(kLines[turn % 5], max_tokens(12)).summary_started) {
      session.reset();
      ++cancelled;
      EXPECT_FALSE(session.stats().summary_running);
      EXPECT_EQ(session.stats().turns, 0);
    }
  }
  EXPECT_EQ(cancelled, 3);
  EXPECT_FALSE(session.apply_pending_summary(true));
}

// A summary job that fails (here every one: the summary context is too small
// for the summary request itself) fails no turn and loses no text: the old
// summary stays, the dropped text waits for the next job, and the error is told.
TEST(ChatSession, AFailedSummaryFailsNoTurnAndLosesNoText) {
  for (const bool background : {false, true}) {
    SCOPED_TRACE(background ? "on the worker" : "before the turn returns");
    SessionSettings settings = small_settings(MemoryMode::Ssskv);
    settings.background_summary = background;
    settings.wait_for_summary = true;
    settings.summarizer.n_ctx = 64;
    settings.summarizer.max_new_tokens = 16;
    ChatSession session(stories(), settings);
    for (int turn = 0; turn < 30; ++turn) {
      ASSERT_NO_THROW(session.chat(kLines[turn % 5], max_tokens(12))) << "turn " << turn;
    }
    session.wait_for_summary();
    const SessionStats s = session.stats();
    EXPECT_GE(s.summary_failures, 2);
    EXPECT_EQ(s.summaries, 0);
    EXPECT_TRUE(session.summary().empty());
    EXPECT_NE(session.last_summary_error().find("summary_n_ctx is "), std::string::npos)
        << session.last_summary_error();
    EXPECT_GT(s.dropped_total, settings.trigger_discard);
    EXPECT_EQ(s.dropped_since_summary, s.dropped_total);
    EXPECT_EQ(session.dropped_text().rfind(std::string("User: ") + kLines[0], 0), 0u) << session.dropped_text();
  }
}

}  // namespace
}  // namespace peak::chat
