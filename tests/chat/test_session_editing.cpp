// What an app does with a session besides chatting: reading the conversation
// back (every message and where it is for the model), appending messages
// without generating (an imported history), answering the last message again
// or an edited version of it, and changing the sampling between turns. The
// references are sessions that chatted the same turns, fresh contexts
// prefilled with the same tokens and decoded greedily by the test itself, and
// the session's own dropped text and statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chat/chat_session.h"
#include "model/model.h"
#include "fresh_prefill.h"
#include "scripted_qwen3.h"
#include "session_checks.h"
#include "stories_session.h"

namespace peak::chat {

using kernels::GgmlType;

namespace {

const model::Model& stories() { return testing::stories_model(); }

const auto& kLines = testing::kStoryLines;
using testing::expect_compact;
using testing::expect_same_messages;
using testing::max_tokens;

SessionSettings f32_settings(MemoryMode mode) {
  SessionSettings s = testing::small_stories_settings(mode);
  s.type_k = s.type_v = GgmlType::F32;
  return s;
}

std::string regenerated(ChatSession& session, int n) {
  std::string out;
  runtime::GenerateOptions o = max_tokens(n);
  o.on_text = [&out](const std::string& t) {
    out += t;
    return true;
  };
  session.regenerate(o);
  return out;
}

std::string edited(ChatSession& session, const std::string& text, int n) {
  std::string out;
  runtime::GenerateOptions o = max_tokens(n);
  o.on_text = [&out](const std::string& t) {
    out += t;
    return true;
  };
  session.edit_last(text, o);
  return out;
}

std::vector<int32_t> probe() { return stories().tokenizer().encode("The end.", false, false); }

// What an app shows: the system prompt, then the log; Summarized messages
// first, then those Dropped and waiting for a summary (whose lines are exactly
// the session's dropped text, no job running), then Recent's. Returns the
// counts of Summarized and Dropped messages.
std::pair<size_t, size_t> expect_messages_consistent(const ChatSession& s) {
  EXPECT_EQ(s.n_messages(), s.log().size() + 1);
  const MessageView system = s.message(0);
  EXPECT_EQ(system.role, "system");
  EXPECT_EQ(system.text, s.settings().system_prompt);
  EXPECT_EQ(system.state, MessageState::InContext);
  size_t summarized = 0, dropped = 0, in_context = 0;
  std::string pending;
  for (size_t i = 1; i < s.n_messages(); ++i) {
    const MessageView m = s.message(i);
    EXPECT_EQ(m.role, s.log()[i - 1].role);
    EXPECT_EQ(m.role, i % 2 == 1 ? "user" : "assistant");
    EXPECT_EQ(m.text, s.log()[i - 1].content);
    switch (m.state) {
      case MessageState::Summarized:
        EXPECT_EQ(dropped + in_context, 0u) << "message " << i;
        ++summarized;
        break;
      case MessageState::Dropped:
        EXPECT_EQ(in_context, 0u) << "message " << i;
        pending += (m.role == "user" ? "User: " : "Assistant: ") + m.text + "\n";
        ++dropped;
        break;
      case MessageState::InContext:
        ++in_context;
        break;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(in_context), s.stats().recent_messages);
  EXPECT_EQ(pending, s.dropped_text());
  EXPECT_THROW(s.message(s.n_messages()), std::out_of_range);
  return {summarized, dropped};
}


// The acceptance case: a session with a summary, its messages read back after
// a save and a restore, with and without the KV cache.
TEST(SessionMessages, ReadBackWithTheirStatesAfterSaveAndRestore) {
  const SessionSettings settings = testing::small_stories_settings();
  ChatSession session(stories(), settings);
  std::vector<std::string> answers;
  for (int turn = 0; turn < 15; ++turn) answers.push_back(testing::answer(session, kLines[turn % 5], 12));
  session.wait_for_summary();
  const auto [summarized, dropped] = expect_messages_consistent(session);
  EXPECT_GT(summarized, 0u) << "no summary covers a message";
  EXPECT_GT(dropped, 0u) << "no message waits for the next summary";
  EXPECT_GT(session.stats().summaries, 0);
  for (int turn = 0; turn < 15; ++turn) {
    EXPECT_EQ(session.message(1 + 2 * static_cast<size_t>(turn)).text, kLines[turn % 5]);
    EXPECT_EQ(session.message(2 + 2 * static_cast<size_t>(turn)).text, answers[static_cast<size_t>(turn)]);
  }
  for (const bool kv : {true, false}) {
    const std::string path = ::testing::TempDir() + "peak_session_messages.pkss";
    session.save(path, kv);
    ChatSession restored(stories(), settings);
    restored.restore(path);
    expect_same_messages(session, restored);
    expect_messages_consistent(restored);
    EXPECT_EQ(restored.cached_tokens(), session.cached_tokens());
    std::remove(path.c_str());
  }
  // Without a system prompt the log is the whole conversation.
  SessionSettings bare = settings;
  bare.system_prompt.clear();
  ChatSession no_system(stories(), bare);
  no_system.chat(kLines[0], max_tokens(4));
  EXPECT_EQ(no_system.n_messages(), 2u);
  EXPECT_EQ(no_system.message(0).role, "user");
}

// An imported history: appending the same messages a chat produced leaves the
// same cells, segments, summary and dropped text, and both sessions go on
// alike. F32 cells: the appended pairs are evaluated in one batch, the chatted
// ones token by token.
TEST(SessionAppend, AnAppendedHistoryEqualsTheSameTurnsChatted) {
  const SessionSettings settings = f32_settings(MemoryMode::Ssskv);
  ChatSession chatted(stories(), settings), appended(stories(), settings);
  for (int turn = 0; turn < 12; ++turn) {
    const std::string answer = testing::answer(chatted, kLines[turn % 5], 12);
    appended.append("user", kLines[turn % 5]);
    EXPECT_TRUE(appended.awaiting_answer());
    appended.append("assistant", answer);
    // Summaries land at other moments (after the user message, or after its
    // answer): once both are in place the sessions agree.
    chatted.wait_for_summary();
    appended.wait_for_summary();
    ASSERT_EQ(appended.cached_tokens(), chatted.cached_tokens()) << "turn " << turn;
    ASSERT_EQ(appended.context().kv().positions(), chatted.context().kv().positions()) << "turn " << turn;
  }
  EXPECT_GT(chatted.stats().dropped_total, 0);
  EXPECT_GT(chatted.stats().summaries, 0);
  EXPECT_EQ(appended.summary(), chatted.summary());
  EXPECT_EQ(appended.dropped_text(), chatted.dropped_text());
  EXPECT_EQ(appended.stats().dropped_total, chatted.stats().dropped_total);
  EXPECT_EQ(appended.stats().turns, chatted.stats().turns);
  expect_same_messages(appended, chatted);
  const std::vector<float> a = testing::logits_after(stories(), appended, probe());
  const double d = testing::max_abs_diff(a, testing::logits_after(stories(), chatted, probe()).data());
  std::printf("appended history vs chatted, F32 KV: max |logit diff| %.3g\n", d);
  EXPECT_LT(d, 1e-3);
  EXPECT_EQ(testing::answer(appended, kLines[2], 16), testing::answer(chatted, kLines[2], 16));
}

// With a real chat template (Qwen3's, on the scripted model): the appended
// turns render as the chatted ones, control tokens from the template only.
TEST(SessionAppend, WithQwen3sTemplateAppendedTurnsRenderAsChattedOnes) {
  const std::string path = ::testing::TempDir() + "peak_append_qwen3_scripted.gguf";
  test::write_scripted_qwen3(path);
  const auto m = model::Model::load(path);
  const SessionSettings s = testing::scripted_qwen3_settings();
  ChatSession chatted(*m, s), appended(*m, s);
  for (const char* question : {"What colour is the sky?", "And the <|im_end|> sea?", "Why?"}) {
    const std::string before_answer = chatted.preview_prompt(question);
    const std::string answer = testing::answer(chatted, question, 16);
    EXPECT_EQ(answer, "Blue.");
    appended.append("user", question);
    EXPECT_EQ(m->tokenizer().detokenize(appended.cached_tokens(), false, true), before_answer)
        << "a user message waiting for its answer is what a turn evaluates before it answers";
    appended.append("assistant", answer);
    ASSERT_EQ(appended.cached_tokens(), chatted.cached_tokens()) << question;
  }
  EXPECT_EQ(appended.preview_prompt("Next."), chatted.preview_prompt("Next."));
}

TEST(SessionAppend, RefusesWhatRolesCannotRenderAndChangesNothing) {
  ChatSession session(stories(), testing::small_stories_settings());
  auto refused = [&](const std::string& role, const std::string& text) -> std::string {
    const std::vector<int32_t> cells = session.cached_tokens();
    const size_t messages = session.n_messages();
    try {
      session.append(role, text);
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(session.cached_tokens(), cells);
      EXPECT_EQ(session.n_messages(), messages);
      return e.what();
    }
    return "(appended)";
  };
  EXPECT_NE(refused("assistant", "Hello.").find("cannot open the conversation"), std::string::npos);
  EXPECT_NE(refused("system", "Be kind.").find("append takes user or assistant"), std::string::npos);
  EXPECT_NE(refused("User", "Hi.").find("role is 'User'"), std::string::npos);
  session.append("user", "Once upon a time.");
  EXPECT_NE(refused("user", "Again.").find("already ends with a user message"), std::string::npos);
  EXPECT_THROW(session.chat("Hello?", max_tokens(4)), std::invalid_argument);
  session.append("assistant", "There was a cat.");
  EXPECT_NE(refused("assistant", "More.").find("already ends with an assistant message"), std::string::npos);
  EXPECT_EQ(session.stats().turns, 1);
  session.chat("And then?", max_tokens(4));
  EXPECT_EQ(session.stats().turns, 2);
}

// An answer longer than the headroom drops older messages to fit; one longer
// than recent_max + headroom keeps its end, its start going to the summary path.
TEST(SessionAppend, ALongAnswerMakesRoomAndAVeryLongOneIsCut) {
  const SessionSettings settings = testing::small_stories_settings(MemoryMode::Window);
  const int64_t bound = settings.recent_max + settings.headroom;
  ChatSession session(stories(), settings);
  for (int turn = 0; turn < 3; ++turn) session.chat(kLines[turn], max_tokens(8));
  std::string long_answer;
  for (int i = 0; i < 6; ++i) long_answer += std::string(kLines[i % 5]) + " ";
  const int64_t long_tokens = static_cast<int64_t>(stories().tokenizer().encode(long_answer, false, false).size());
  ASSERT_GT(long_tokens, settings.headroom);
  ASSERT_LT(long_tokens, settings.recent_max);
  const int64_t dropped_before = session.stats().dropped_total;
  session.append("user", "Tell me everything.");
  session.append("assistant", long_answer);
  SessionStats s = session.stats();
  EXPECT_GT(s.dropped_total, dropped_before);
  EXPECT_LE(s.recent_tokens, bound);
  EXPECT_EQ(session.message(session.n_messages() - 2).state, MessageState::InContext) << "the question stays";
  EXPECT_EQ(session.context().kv().used(), static_cast<int64_t>(session.cached_tokens().size()));

  std::string very_long;
  while (static_cast<int64_t>(stories().tokenizer().encode(very_long, false, false).size()) <= 2 * bound) {
    very_long += long_answer;
  }
  session.append("user", "Again, all of it.");
  session.append("assistant", very_long);
  s = session.stats();
  EXPECT_LE(s.recent_tokens, bound);
  EXPECT_EQ(s.recent_messages, 1) << "only the answer's end fits";
  EXPECT_NE(session.dropped_text().find("User: Again, all of it.\nAssistant (start of a long message): Once upon"),
            std::string::npos);
  EXPECT_EQ(session.message(session.n_messages() - 1).text, very_long) << "the message keeps its whole text";
  EXPECT_EQ(session.message(session.n_messages() - 2).state, MessageState::Dropped);
  const runtime::KvCache& kv = session.context().kv();
  EXPECT_EQ(kv.used(), static_cast<int64_t>(session.cached_tokens().size()));
  for (size_t i = 0; i < kv.positions().size(); ++i) ASSERT_EQ(kv.positions()[i], static_cast<int32_t>(i));
  EXPECT_THROW(session.regenerate(max_tokens(4)), std::invalid_argument) << "its question left the context";
  session.chat(kLines[0], max_tokens(4));  // and it goes on
}

// Greedy sampling: answering again gives the same answer from the same cells,
// bit for bit when the turn dropped nothing, and within float rounding when it
// did (its messages are put back and Recent moved up again).
TEST(SessionRegenerate, GreedyGivesTheSameAnswerFromTheSameCache) {
  const SessionSettings settings = f32_settings(MemoryMode::Window);
  ChatSession session(stories(), settings);
  session.chat(kLines[0], max_tokens(12));
  std::string first = testing::answer(session, kLines[1], 12);
  ASSERT_EQ(session.stats().dropped_total, 0);
  const std::vector<uint8_t> kv_after = session.context().kv().snapshot();
  const std::vector<int32_t> cells_after = session.cached_tokens();
  EXPECT_EQ(regenerated(session, 12), first);
  EXPECT_EQ(session.context().kv().snapshot(), kv_after);
  EXPECT_EQ(session.cached_tokens(), cells_after);
  EXPECT_EQ(session.stats().turns, 2);
  EXPECT_EQ(session.log().back().content, first);

  int turn = 2;
  for (;; ++turn) {
    const int64_t dropped = session.stats().dropped_total;
    first = testing::answer(session, kLines[turn % 5], 12);
    if (session.stats().dropped_total > dropped) break;
  }
  const int64_t dropped_total = session.stats().dropped_total;
  const std::string dropped_text = session.dropped_text();
  const std::vector<float> logits_after = testing::logits_after(stories(), session, probe());
  const std::vector<int32_t> cells = session.cached_tokens();
  for (int again = 0; again < 3; ++again) {
    EXPECT_EQ(regenerated(session, 12), first) << "turn " << turn;
    EXPECT_EQ(session.cached_tokens(), cells);
    EXPECT_EQ(session.stats().dropped_total, dropped_total) << "the dropped messages were dropped again, once";
    EXPECT_EQ(session.dropped_text(), dropped_text);
    const double d = testing::max_abs_diff(logits_after, testing::logits_after(stories(), session, probe()).data());
    EXPECT_LT(d, 1e-4);
  }
}

// A summary in place since the turn: its dropped messages stay in the summary
// and only the turn's messages are answered again. The cache is the rebuilt
// one (a fresh prefill), so the answer is what greedy decoding of the same
// tokens in a fresh context gives.
TEST(SessionRegenerate, AfterASummaryWentInPlaceItAnswersFromTheCacheAsItIs) {
  SessionSettings settings = f32_settings(MemoryMode::Ssskv);
  ChatSession session(stories(), settings);
  std::string line;
  for (int turn = 0; turn < 40; ++turn) {
    line = kLines[turn % 5];
    if (session.chat(line, max_tokens(12)).summary_started) break;
  }
  ASSERT_TRUE(session.apply_pending_summary(true));
  ASSERT_GT(session.stats().summaries, 0);
  const std::vector<int32_t> before = session.cached_tokens();
  const std::string answer = session.log().back().content;
  // Raw text: the turn's cells are its user text and answer tokenized together.
  const tokenizer::Tokenizer& tok = stories().tokenizer();
  const size_t turn_cells = tok.encode(line + answer, false, false).size();
  std::vector<int32_t> prompt(before.begin(), before.end() - static_cast<std::ptrdiff_t>(turn_cells));
  const std::vector<int32_t> user = tok.encode(line, false, false);
  prompt.insert(prompt.end(), user.begin(), user.end());
  runtime::ContextParams p;
  p.n_ctx = session.context().n_ctx();
  p.n_threads = 1;
  p.type_k = p.type_v = GgmlType::F32;
  runtime::Context fresh(stories(), p);
  fresh.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  std::string expected;
  for (int i = 0; i < 12; ++i) {
    const float* l = fresh.logits();
    const int32_t t = static_cast<int32_t>(std::max_element(l, l + fresh.n_vocab()) - l);
    if (tok.is_eog(t)) break;
    expected += tok.token_to_piece(t, false);
    fresh.eval(&t, 1);
  }
  const int64_t summaries = session.stats().summaries;
  EXPECT_EQ(regenerated(session, 12), expected);
  EXPECT_EQ(session.stats().summaries, summaries);
  expect_messages_consistent(session);
}

// Answering again right after a turn that started a summary job cancels the
// job and starts it again with the same text: the same summary as in a
// session that never answered again.
TEST(SessionRegenerate, AJobTheTurnStartedIsCancelledAndStartedAgain) {
  for (const bool background : {false, true}) {
    SCOPED_TRACE(background ? "on the worker" : "before the turn returns");
    SessionSettings settings = testing::small_stories_settings();
    settings.background_summary = background;
    ChatSession live(stories(), settings), control(stories(), settings);
    const int turns = testing::run_twins_until_summary(live, control);
    ASSERT_GT(turns, 0);
    const std::string answer = live.log().back().content;
    EXPECT_EQ(regenerated(live, 12), answer);
    EXPECT_TRUE(live.apply_pending_summary(true)) << "no job started again";
    EXPECT_TRUE(control.apply_pending_summary(true));
    EXPECT_EQ(live.summary(), control.summary());
    EXPECT_EQ(live.cached_tokens(), control.cached_tokens());
    EXPECT_EQ(live.stats().dropped_total, control.stats().dropped_total);
    expect_same_messages(live, control);
  }
}

// Editing the last user message: the session equals one fed the edited
// history (the same turns chatted, greedy, then the edited message), the
// messages the original turn dropped back in place first.
TEST(SessionEdit, EqualsAFreshSessionFedTheEditedHistory) {
  const SessionSettings settings = f32_settings(MemoryMode::Window);
  ChatSession session(stories(), settings), fed(stories(), settings);
  for (int turn = 0; turn < 9; ++turn) session.chat(kLines[turn % 5], max_tokens(12));
  const int64_t dropped_before_last = session.stats().dropped_total;
  ASSERT_GT(dropped_before_last, 0);
  session.chat("A very long story about a cat, a dog, a bird and the big blue sea.", max_tokens(12));
  ASSERT_GT(session.stats().dropped_total, dropped_before_last) << "the last turn must drop messages";
  const std::string answer = edited(session, "Sue ran.", 12);

  for (int turn = 0; turn < 9; ++turn) {
    EXPECT_EQ(testing::answer(fed, kLines[turn % 5], 12), session.log()[2 * static_cast<size_t>(turn) + 1].content);
  }
  EXPECT_EQ(testing::answer(fed, "Sue ran.", 12), answer);
  EXPECT_EQ(session.cached_tokens(), fed.cached_tokens());
  EXPECT_EQ(session.context().kv().positions(), fed.context().kv().positions());
  EXPECT_EQ(session.stats().dropped_total, fed.stats().dropped_total) << "the edit dropped only what it needed";
  EXPECT_EQ(session.dropped_text(), fed.dropped_text());
  expect_same_messages(session, fed);
  const double d = testing::max_abs_diff(testing::logits_after(stories(), session, probe()),
                                         testing::logits_after(stories(), fed, probe()).data());
  std::printf("edited vs fed the edited history, F32 KV: max |logit diff| %.3g\n", d);
  EXPECT_LT(d, 1e-4);
  const std::string text = stories().tokenizer().detokenize(session.cached_tokens(), false, false);
  EXPECT_NE(text.find("Sue ran."), std::string::npos);
  EXPECT_EQ(text.find("big blue sea"), std::string::npos);
}

// A regenerate or edit that fails (its text callback throws) leaves the
// session as it was: the old answer, its cells, the dropped messages.
TEST(SessionEdit, AFailedRegenerateOrEditLeavesTheSessionAsItWas) {
  const SessionSettings settings = f32_settings(MemoryMode::Ssskv);
  runtime::GenerateOptions failing = max_tokens(12);
  failing.on_text = [](const std::string&) -> bool { throw std::runtime_error("the reader went away"); };
  for (const bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "right after the turn" : "after an appended turn");
    ChatSession session(stories(), settings), control(stories(), settings);
    int turn = 0;
    for (; turn < 12; ++turn) {
      session.chat(kLines[turn % 5], max_tokens(12));
      control.chat(kLines[turn % 5], max_tokens(12));
    }
    if (!exact) {
      for (ChatSession* s : {&session, &control}) {
        s->append("user", kLines[turn % 5]);
        s->append("assistant", "The dog was happy.");
      }
      ++turn;
    }
    const std::vector<int32_t> cells = session.cached_tokens();
    const SessionStats stats = session.stats();
    const std::vector<float> logits = testing::logits_after(stories(), session, probe());
    EXPECT_THROW(session.regenerate(failing), std::runtime_error);
    EXPECT_THROW(session.edit_last("Something else.", failing), std::runtime_error);
    EXPECT_EQ(session.cached_tokens(), cells);
    EXPECT_EQ(session.context().kv().positions(), control.context().kv().positions());
    EXPECT_EQ(session.stats().turns, stats.turns);
    EXPECT_EQ(session.stats().dropped_total, stats.dropped_total);
    EXPECT_LT(testing::max_abs_diff(logits, testing::logits_after(stories(), session, probe()).data()), 1e-4);
    expect_same_messages(session, control);
    // And it goes on as the control does.
    EXPECT_EQ(regenerated(session, 12), regenerated(control, 12));
    EXPECT_EQ(testing::answer(session, kLines[turn % 5], 12), testing::answer(control, kLines[turn % 5], 12));
  }
}

TEST(SessionRegenerate, RefusesWithoutAUserMessageAndAnswersAnAppendedOne) {
  ChatSession session(stories(), testing::small_stories_settings());
  EXPECT_THROW(session.regenerate(max_tokens(4)), std::invalid_argument);
  EXPECT_THROW(session.edit_last("Hi.", max_tokens(4)), std::invalid_argument);
  ChatSession control(stories(), testing::small_stories_settings());
  session.append("user", kLines[0]);
  const std::string answer = testing::answer(control, kLines[0], 12);
  EXPECT_EQ(regenerated(session, 12), answer) << "an appended question is answered as chat() answers it";
  EXPECT_EQ(session.cached_tokens(), control.cached_tokens());
  // The appended pair is answered again as it stands.
  session.append("user", kLines[1]);
  session.append("assistant", "Made up.");
  control.chat(kLines[1], max_tokens(12));
  regenerated(session, 12);
  EXPECT_EQ(session.cached_tokens(), control.cached_tokens());
  EXPECT_EQ(session.log().back().content, control.log().back().content);
}

// Sampling changes between turns: greedy is deterministic, a temperature
// takes effect, and a sampled answer written again draws new numbers.
TEST(SessionSampling, ChangesPerTurnAndTakeEffect) {
  const SessionSettings settings = testing::small_stories_settings(MemoryMode::Window);
  ChatSession session(stories(), settings), twin(stories(), settings);
  session.chat(kLines[0], max_tokens(12));
  twin.chat(kLines[0], max_tokens(12));
  const std::string greedy = testing::answer(session, kLines[1], 24);
  EXPECT_EQ(regenerated(session, 24), greedy);
  EXPECT_EQ(regenerated(session, 24), greedy);

  sampling::SamplerParams hot;
  hot.temperature = 1.5f;
  hot.top_k = 0;
  hot.top_p = 1.0f;
  hot.min_p = 0.0f;
  hot.seed = 7;
  session.set_sampler(hot);
  EXPECT_EQ(session.settings().sampler.temperature, 1.5f);
  const std::string sampled = regenerated(session, 24);
  EXPECT_NE(sampled, greedy);
  EXPECT_NE(regenerated(session, 24), sampled) << "the random sequence goes on";
  // The same parameters from the same point give the same text.
  twin.chat(kLines[1], max_tokens(24));
  twin.set_sampler(hot);
  EXPECT_EQ(regenerated(twin, 24), sampled);

  sampling::SamplerParams bad = hot;
  bad.temperature = -1.0f;
  EXPECT_THROW(session.set_sampler(bad), std::invalid_argument);
  EXPECT_EQ(session.settings().sampler.temperature, 1.5f);
  sampling::SamplerParams greedy_params = settings.sampler;
  session.set_sampler(greedy_params);
  EXPECT_EQ(regenerated(session, 24), greedy);
}

// The summary worker reads none of the session's members: reading the
// conversation while it writes a summary needs no waiting (and shows no race
// under ThreadSanitizer).
TEST(SessionMessages, ReadWhileASummaryIsWritten) {
  SessionSettings settings = testing::small_stories_settings();
  settings.background_summary = true;
  settings.summarizer.max_new_tokens = 64;
  ChatSession session(stories(), settings);
  int reads_while_running = 0;
  for (int turn = 0; turn < 40 && reads_while_running == 0; ++turn) {
    if (!session.chat(kLines[turn % 5], max_tokens(12)).summary_started) continue;
    while (session.stats().summary_running && reads_while_running < 200) {
      size_t bytes = 0;
      for (size_t i = 0; i < session.n_messages(); ++i) bytes += session.message(i).text.size();
      EXPECT_GT(bytes, 0u);
      ++reads_while_running;
    }
  }
  EXPECT_GT(reads_while_running, 0);
  session.wait_for_summary();
  expect_messages_consistent(session);
}

}  // namespace
}  // namespace peak::chat
