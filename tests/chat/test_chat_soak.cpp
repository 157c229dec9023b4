// Soak: one session on stories260K through thousands of random actions (turns,
// turns answered again or edited, appended messages, cancelled and failed
// turns, saves, restores of good and of bad files, resets) with 2 compute
// threads and background summaries, from a fixed seed. After every action the
// cells match the segments and the messages read back; at the end it is saved,
// and the session itself, the session restored from that file and a fresh
// session restored from it all continue with the same greedy text.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model.h"
#include "chat/chat_session.h"
#include "session_file_edit.h"
#include "stories_session.h"

namespace peak::chat {
namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(testing::kStoriesPath);
  return *m;
}

SessionSettings soak_settings() {
  SessionSettings s = testing::small_stories_settings();
  s.trigger_discard = 60;
  s.headroom = 40;
  s.background_summary = true;
  s.wait_for_summary = true;  // the summaries land at the same turns on every run
  s.summarizer.max_new_tokens = 24;
  s.n_threads = 2;
  return s;
}

const char* kLines[] = {"Once upon a time there was a dog named Max.", "Max liked to run in the sun.",
                        "One day Max found a big red ball.", "He took the ball to his friend Sue.",
                        "Sue and Max played until the sky was dark.", "The end."};

std::string greedy_answer(ChatSession& session, const std::string& text) {
  std::string out;
  runtime::GenerateOptions o;
  o.max_tokens = 24;
  o.on_text = [&out](const std::string& t) { out += t; return true; };
  session.chat(text, o);
  return out;
}

// The cells match the segments at positions 0, 1, ... (all but the last
// unsettled tokens, which the next operation evaluates); the conversation
// reads back whole, Recent's messages (its last ones) in context.
void expect_cells_match_segments(const ChatSession& session, int step) {
  const runtime::KvCache& kv = session.context().kv();
  ASSERT_EQ(kv.used() + session.unsettled_tokens(), static_cast<int64_t>(session.cached_tokens().size()))
      << "step " << step;
  for (size_t i = 0; i < kv.positions().size(); ++i) ASSERT_EQ(kv.positions()[i], static_cast<int32_t>(i));
  ASSERT_EQ(session.n_messages(), session.log().size() + 1) << "step " << step;
  const auto recent = static_cast<size_t>(session.stats().recent_messages);
  for (size_t i = 1; i < session.n_messages(); ++i) {
    ASSERT_EQ(session.message(i).state == MessageState::InContext, i + recent >= session.n_messages())
        << "step " << step << ", message " << i;
  }
}

TEST(ChatSessionSoak, ThousandsOfRandomActionsThenSaveRestoreAndContinueIdentically) {
  const SessionSettings settings = soak_settings();
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "peak_soak_good.pkss", bad = dir + "peak_soak_bad.pkss";
  ChatSession session(stories(), settings);
  std::mt19937 rng(18);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  // The last user message is in Recent: it can be answered again.
  auto can_answer_again = [&session] {
    return !session.log().empty() && session.stats().recent_messages >= (session.awaiting_answer() ? 1 : 2);
  };
  bool have_good = false;
  int turns = 0, cancelled = 0, failed = 0, saves = 0, restores = 0, refused = 0, resets = 0;
  int regenerated = 0, appended = 0;
  // A sanitizer build runs each step several times slower; the Release run
  // covers the whole walk.
  constexpr int kSteps = PEAK_TEST_SANITIZED ? 250 : 2000;
  for (int step = 0; step < kSteps; ++step) {
    const int action = pick(100);
    const std::string line = kLines[pick(6)];
    if (action < 50) {
      runtime::GenerateOptions o;
      o.max_tokens = 2 + pick(30);
      if (session.awaiting_answer()) {
        session.regenerate(o);
      } else {
        session.chat(line, o);
      }
      ++turns;
    } else if (action < 62) {  // the last turn answered again, or edited, or a turn appended
      runtime::GenerateOptions o;
      o.max_tokens = 2 + pick(30);
      const int kind = pick(3);
      if (kind == 0 && can_answer_again()) {
        session.regenerate(o);
        ++regenerated;
      } else if (kind == 1 && can_answer_again()) {
        session.edit_last(line, o);
        ++regenerated;
      } else if (!session.awaiting_answer()) {
        session.append("user", line);
        if (pick(2) == 0) session.append("assistant", kLines[pick(6)]);
        ++appended;
      }
    } else if (action < 72) {  // cancelled: the abort flag, set while the answer streams
      volatile int abort_flag = 0;
      const int after = 1 + pick(6);
      int pieces = 0;
      runtime::GenerateOptions o;
      o.abort_flag = &abort_flag;
      o.on_text = [&](const std::string&) {
        if (++pieces == after) __atomic_store_n(&abort_flag, 1, __ATOMIC_RELAXED);
        return true;
      };
      if (session.awaiting_answer()) {
        session.regenerate(o);
      } else {
        session.chat(line, o);
      }
      ++cancelled;
    } else if (action < 78) {  // failed: the callback throws
      const std::vector<int32_t> before = session.cached_tokens();
      const int64_t summaries_before = session.stats().summaries;
      runtime::GenerateOptions o;
      const int after = 1 + pick(6);
      int pieces = 0;
      o.on_text = [&](const std::string&) -> bool {
        if (++pieces == after) throw std::runtime_error("stop");
        return true;
      };
      try {
        if (session.awaiting_answer() || (pick(3) == 0 && can_answer_again())) {
          session.regenerate(o);
        } else {
          session.chat(line, o);
        }
      } catch (const std::runtime_error&) {
        ++failed;
        // A finished summary may have gone in place first; nothing else changed.
        if (session.stats().summaries == summaries_before) {
          ASSERT_EQ(session.cached_tokens(), before) << "step " << step;
        }
      }
    } else if (action < 86) {
      session.save(good, /*include_kv=*/pick(4) != 0);
      have_good = true;
      ++saves;
    } else if (action < 91) {
      if (have_good) {
        session.restore(good);
        ++restores;
      }
    } else if (action < 98) {
      if (!have_good) continue;
      std::vector<uint8_t> bytes = testing::read_bytes(good);
      if (pick(2) == 0) {
        bytes[16 + static_cast<size_t>(pick(static_cast<int>(bytes.size() - 24)))] ^= 0x10;  // checksum mismatch
      } else {
        auto f = testing::EditableSessionFile::parse(bytes);
        if (f.has_kv && !f.positions.empty()) {
          f.positions[static_cast<size_t>(pick(static_cast<int>(f.positions.size())))] += 1 + pick(1000);
        } else {
          f.turns = -1 - pick(5);
        }
        bytes = f.bytes();
      }
      testing::write_bytes(bad, bytes);
      const std::vector<int32_t> before = session.cached_tokens();
      const SessionStats stats_before = session.stats();
      EXPECT_THROW(session.restore(bad), std::runtime_error) << "step " << step;
      ASSERT_EQ(session.cached_tokens(), before) << "step " << step;
      ASSERT_EQ(session.stats().turns, stats_before.turns);
      ++refused;
    } else {
      session.reset();
      ++resets;
    }
    expect_cells_match_segments(session, step);
  }
  std::printf("soak: %d turns, %d answered again or edited, %d appended, %d cancelled, %d failed, %d saves, "
              "%d restores, %d bad files refused, %d resets, %lld summaries\n",
              turns, regenerated, appended, cancelled, failed, saves, restores, refused, resets,
              static_cast<long long>(session.stats().summaries));
  EXPECT_GT(failed, 0);
  EXPECT_GT(refused, 0);
  EXPECT_GT(regenerated, 0);
  EXPECT_GT(appended, 0);

  // The control: the same final file restored into the soaked session and into a
  // fresh one. All three continue from the same cells and segments.
  session.save(good, true);
  const std::vector<int32_t> saved_cells = session.cached_tokens();
  ChatSession fresh(stories(), settings);
  fresh.restore(good);
  EXPECT_EQ(fresh.cached_tokens(), saved_cells);
  const std::string soaked = greedy_answer(session, "Then the sun came out.");
  session.restore(good);
  EXPECT_EQ(greedy_answer(session, "Then the sun came out."), soaked);
  EXPECT_EQ(greedy_answer(fresh, "Then the sun came out."), soaked);
  EXPECT_FALSE(soaked.empty());
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace peak::chat
