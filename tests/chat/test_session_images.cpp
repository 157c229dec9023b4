// Pictures in a session (ChatSession::attach_image) on stories260K: the turn
// evaluates the text and the image's rows where the framing puts them, checked
// against a plain context fed the same pieces by hand (the documented framing,
// Context::eval and eval_embeddings) and decoding greedily; the conversation
// keeps the marker, the summarizer reads "[an image]"; the same rows are one
// image; a picture of SmolVLM's tiles; regenerate, edit_last, append, a
// background rebuild, session files and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_session.h"
#include "chat/conversation_images.h"
#include "model/model.h"
#include "runtime/context.h"
#include "fresh_prefill.h"
#include "session_file_edit.h"
#include "stories_session.h"

namespace peak::chat {
namespace {

using testing::max_tokens;
using testing::stories_model;

constexpr int64_t kImageTokens = 12;

// Gemma 3's processor puts these around a picture's tokens (Hugging Face's
// Gemma3Processor: boi "<start_of_image>" between blank lines, eoi after).
const std::string kGemmaPrefix = "\n\n<start_of_image>";
const std::string kGemmaSuffix = "<end_of_image>\n\n";
using testing::picture_rows;

SessionSettings image_settings(MemoryMode mode = MemoryMode::None) {
  SessionSettings s = testing::small_stories_settings(mode);
  s.images = testing::kStoriesImageProjector;
  s.type_k = s.type_v = kernels::GgmlType::F32;
  if (mode == MemoryMode::None) s.recent_max = 400;
  return s;
}

std::vector<int32_t> encode(const std::string& text, bool special) {
  return stories_model().tokenizer().encode(text, false, special);
}

// Greedy ids after `prompt`'s pieces in a fresh context: tokens, or (empty
// tokens) the rows, attending both ways; `first_logits` gets the logits after the prompt.
struct Piece {
  std::vector<int32_t> tokens;
  const float* rows = nullptr;
  int64_t n_rows = kImageTokens;
  bool bidirectional = true;
};
// The turn's prompt count of `prompt`: every piece's tokens or rows but the
// first (the system prompt, which the Prefix holds).
int32_t prompt_count(const std::vector<Piece>& prompt) {
  int64_t n = 0;
  for (size_t i = 1; i < prompt.size(); ++i) {
    n += prompt[i].rows ? prompt[i].n_rows : static_cast<int64_t>(prompt[i].tokens.size());
  }
  return static_cast<int32_t>(n);
}

std::vector<int32_t> greedy_by_hand(const std::vector<Piece>& prompt, int n, std::vector<float>& first_logits) {
  const model::Model& m = stories_model();
  runtime::ContextParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  p.type_k = p.type_v = kernels::GgmlType::F32;
  runtime::Context ctx(m, p);
  for (const Piece& piece : prompt) {
    if (piece.rows) {
      ctx.eval_embeddings(piece.rows, piece.n_rows, piece.bidirectional);
    } else if (!piece.tokens.empty()) {
      ctx.eval(piece.tokens.data(), static_cast<int64_t>(piece.tokens.size()));
    }
  }
  first_logits.assign(ctx.logits(), ctx.logits() + ctx.n_vocab());
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) {
    const int32_t next =
        static_cast<int32_t>(std::max_element(ctx.logits(), ctx.logits() + ctx.n_vocab()) - ctx.logits());
    if (m.tokenizer().is_eog(next)) break;
    ids.push_back(next);
    ctx.eval(&next, 1);
  }
  return ids;
}

// The ids of the pictures in the session's cells, each where its first row is.
std::vector<uint32_t> cached_image_ids(const ChatSession& session) {
  std::vector<uint32_t> ids;
  for (const int32_t t : session.cached_tokens()) {
    if (is_image_token(t) && image_row(t) == 0) ids.push_back(image_of(t));
  }
  return ids;
}

TEST(SessionImages, ATurnReadsTheImageWhereTheFramingPutsIt) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  const SessionSettings settings = image_settings();
  for (const bool marked : {false, true}) {
    ChatSession session(m, settings);
    session.attach_image(rows.data(), kImageTokens);
    const std::string text = marked ? "Look: <__media__> Once upon a time" : "Once upon a time";
    const TurnResult turn = session.chat(text, max_tokens(10));

    // Raw template: the system prompt and a newline, then the message's text
    // with the image's prefix, rows and suffix at its marker (unmarked: first).
    std::vector<Piece> prompt;
    prompt.push_back({m.tokenizer().encode(settings.system_prompt + "\n", true, false)});
    if (marked) prompt.push_back({encode("Look: ", false)});
    prompt.push_back({encode(kGemmaPrefix, true)});
    prompt.push_back({{}, rows.data()});
    prompt.push_back({encode(kGemmaSuffix, true)});
    prompt.push_back({encode(marked ? " Once upon a time" : "Once upon a time", false)});
    // The prompt's count holds the picture's rows and the text around them.
    EXPECT_EQ(turn.generation.n_prompt, prompt_count(prompt));
    std::vector<float> logits;
    const std::vector<int32_t> expected = greedy_by_hand(prompt, 10, logits);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(turn.generation.tokens, expected) << (marked ? "marked" : "unmarked");

    // The logits right after the prompt (an answer of no tokens), within
    // float rounding of other batch splits.
    ChatSession prompt_only(m, settings);
    prompt_only.attach_image(rows.data(), kImageTokens);
    prompt_only.chat(text, max_tokens(0));
    double worst = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(logits[i] - prompt_only.context().logits()[i])));
    }
    EXPECT_LT(worst, 1e-4) << (marked ? "marked" : "unmarked");

    // The conversation keeps the marker, and the image beside it.
    ASSERT_EQ(session.n_messages(), 3u);  // system, user, assistant
    EXPECT_EQ(session.message(1).text, marked ? text : std::string(kImageMarker) + text);
    EXPECT_EQ(session.message(1).n_images, 1u);
    EXPECT_EQ(session.attached_images(), 0u);
  }
}

TEST(SessionImages, APictureOfTilesIsFramedAsTheProcessorWritesIt) {
  // SmolVLM's projector: a picture cut into 2 x 1 tiles, then the overview,
  // three frames of 4 rows read causally, each after the text Hugging Face's
  // Idefics3 processor (_prompt_split_image) writes before it.
  const model::Model& m = stories_model();
  constexpr int64_t kFrameRows = 4;
  const std::vector<float> rows = picture_rows(3 * kFrameRows, m.hparams().n_embd, 0.5f);
  SessionSettings settings = image_settings();
  settings.images = model::Arch::Idefics3Vision;
  ChatSession session(m, settings);
  session.attach_image(rows.data(), 3 * kFrameRows, 2, 1);
  const TurnResult turn = session.chat("Look: <__media__> Once upon a time", max_tokens(10));

  const auto frame = [&](int64_t f) { return Piece{{}, rows.data() + f * kFrameRows * 64, kFrameRows, false}; };
  ASSERT_EQ(m.hparams().n_embd, 64);
  std::vector<Piece> prompt;
  prompt.push_back({m.tokenizer().encode(settings.system_prompt + "\n", true, false)});
  prompt.push_back({encode("Look: ", false)});
  prompt.push_back({encode("<fake_token_around_image><row_1_col_1>", true)});
  prompt.push_back(frame(0));
  prompt.push_back({encode("\n<fake_token_around_image><row_2_col_1>", true)});
  prompt.push_back(frame(1));
  prompt.push_back({encode("\n\n<fake_token_around_image><global-img>", true)});
  prompt.push_back(frame(2));
  prompt.push_back({encode("<fake_token_around_image>", true)});
  prompt.push_back({encode(" Once upon a time", false)});
  EXPECT_EQ(turn.generation.n_prompt, prompt_count(prompt));
  std::vector<float> logits;
  const std::vector<int32_t> expected = greedy_by_hand(prompt, 10, logits);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(turn.generation.tokens, expected);

  // The same rows in one frame are another picture, framed as one.
  session.attach_image(rows.data(), 3 * kFrameRows);
  session.chat("And <__media__>", max_tokens(2));
  const std::vector<uint32_t> ids = cached_image_ids(session);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids[0], ids[1]);

  // Refused: rows that are not three equal frames, a grid Gemma 3 does not cut.
  try {
    session.attach_image(rows.data(), 3 * kFrameRows - 1, 2, 1);
    FAIL() << "11 rows taken as 3 frames";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 frames"), std::string::npos) << e.what();
  }
  ChatSession gemma(m, image_settings());
  EXPECT_THROW(gemma.attach_image(rows.data(), 3 * kFrameRows, 2, 1), std::invalid_argument);
  EXPECT_EQ(session.attached_images(), 0u);
  EXPECT_EQ(gemma.attached_images(), 0u);
}

TEST(SessionImages, TheImageIsTheSameInThreadsAndRuns) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 1.5f);
  std::vector<int32_t> first;
  for (const int threads : {1, 2, 1}) {
    SessionSettings s = image_settings();
    s.n_threads = threads;
    ChatSession session(m, s);
    session.attach_image(rows.data(), kImageTokens);
    const std::vector<int32_t> ids = session.chat("The cat", max_tokens(12)).generation.tokens;
    if (first.empty()) first = ids;
    EXPECT_EQ(ids, first) << threads << " threads";
  }
}

TEST(SessionImages, TheSameRowsAreOneImageAndMarkersMustMatch) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  const std::vector<float> other = picture_rows(kImageTokens, m.hparams().n_embd, 2.5f);
  ChatSession session(m, image_settings());
  session.attach_image(rows.data(), kImageTokens);
  session.attach_image(other.data(), kImageTokens);
  // Two attached, one marked: refused, both stay attached.
  EXPECT_THROW(session.chat("Here: <__media__>", max_tokens(2)), std::invalid_argument);
  EXPECT_EQ(session.attached_images(), 2u);
  EXPECT_EQ(session.n_messages(), 1u);
  session.chat("<__media__> and <__media__>", max_tokens(2));
  session.attach_image(rows.data(), kImageTokens);  // again, in the next message
  session.chat("Again.", max_tokens(2));

  std::vector<uint32_t> ids;  // the image of each run of image tokens, in order
  const std::vector<int32_t> cached = session.cached_tokens();
  for (size_t i = 0; i < cached.size(); ++i) {
    if (is_image_token(cached[i]) && image_row(cached[i]) == 0) ids.push_back(image_of(cached[i]));
  }
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_EQ(ids[2], ids[0]);
  EXPECT_EQ(std::count_if(cached.begin(), cached.end(), is_image_token), 3 * kImageTokens);
}

TEST(SessionImages, AStopAskedWhileThePictureIsReadLeavesTheSessionAsItWas) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  ChatSession session(m, image_settings());
  session.chat("Once", max_tokens(4));
  const std::vector<int32_t> before = session.cached_tokens();
  const size_t messages = session.n_messages();
  session.attach_image(rows.data(), kImageTokens);
  const std::atomic<int> stop{1};
  runtime::GenerateOptions o = max_tokens(8);
  o.cancel = &stop;
  EXPECT_THROW(session.chat("Look: <__media__> a cat", o), runtime::Cancelled);
  EXPECT_EQ(session.cached_tokens(), before);
  EXPECT_EQ(session.n_messages(), messages);
  EXPECT_EQ(session.attached_images(), 1u);
  EXPECT_EQ(session.context().kv().used(), static_cast<int64_t>(before.size()) - session.unsettled_tokens());
  session.chat("Look: <__media__> a cat", max_tokens(4));  // and then it goes
  EXPECT_EQ(session.message(3).n_images, 1u);
}

TEST(SessionImages, RefusalsNameWhatIsWrong) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  ChatSession text_only(m, testing::small_stories_settings());
  try {
    text_only.attach_image(rows.data(), kImageTokens);
    FAIL() << "a session without a projector took an image";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("takes no images"), std::string::npos) << e.what();
  }
  ChatSession session(m, image_settings());
  std::vector<float> bad = rows;
  bad[70] = NAN;
  EXPECT_THROW(session.attach_image(bad.data(), kImageTokens), std::invalid_argument);
  const std::vector<float> long_rows = picture_rows(600, m.hparams().n_embd, 0.5f);
  EXPECT_THROW(session.attach_image(long_rows.data(), 600), std::invalid_argument);  // past n_batch 512
  EXPECT_EQ(session.attached_images(), 0u);
  session.attach_image(rows.data(), kImageTokens);
  EXPECT_THROW(session.append("assistant", "No."), std::invalid_argument);
  session.clear_attached_images();
  EXPECT_EQ(session.attached_images(), 0u);
}

TEST(SessionImages, ADroppedImageReachesTheSummarizerAsText) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  SessionSettings s = image_settings(MemoryMode::Window);
  ChatSession session(m, s);
  session.attach_image(rows.data(), kImageTokens);
  session.chat("What is in the picture?", max_tokens(8));
  for (int turn = 0; turn < 8 && session.message(1).state == MessageState::InContext; ++turn) {
    session.chat(testing::kStoryLines[turn % 5], max_tokens(8));
  }
  ASSERT_NE(session.message(1).state, MessageState::InContext);
  EXPECT_EQ(session.message(1).text, std::string(kImageMarker) + "What is in the picture?");
  const std::vector<int32_t> cached = session.cached_tokens();
  EXPECT_EQ(std::count_if(cached.begin(), cached.end(), is_image_token), 0);

  // ssskv: the dropped text the next summary reads.
  SessionSettings ss = image_settings(MemoryMode::Ssskv);
  ss.trigger_discard = 100000;  // no summary: the text waits
  ChatSession summarized(m, ss);
  summarized.attach_image(rows.data(), kImageTokens);
  summarized.chat("What is in the picture?", max_tokens(8));
  for (int turn = 0; turn < 8 && summarized.dropped_text().empty(); ++turn) {
    summarized.chat(testing::kStoryLines[turn % 5], max_tokens(8));
  }
  const std::string dropped = summarized.dropped_text();
  EXPECT_EQ(dropped.rfind("User: [an image]What is in the picture?\n", 0), 0u) << dropped;
  EXPECT_EQ(dropped.find(kImageMarker), std::string::npos);
}

TEST(SessionImages, RegenerateKeepsTheImageAndEditTakesTheAttachedOnes) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  const std::vector<float> other = picture_rows(kImageTokens, m.hparams().n_embd, 2.5f);
  ChatSession session(m, image_settings());
  session.attach_image(rows.data(), kImageTokens);
  const std::vector<int32_t> answer = session.chat("The dog", max_tokens(10)).generation.tokens;
  EXPECT_EQ(session.regenerate(max_tokens(10)).generation.tokens, answer);
  EXPECT_EQ(session.message(1).n_images, 1u);

  // Edited with another picture: as a session that was sent it first.
  session.attach_image(other.data(), kImageTokens);
  const std::vector<int32_t> edited = session.edit_last("The dog", max_tokens(10)).generation.tokens;
  ChatSession fresh(m, image_settings());
  fresh.attach_image(other.data(), kImageTokens);
  EXPECT_EQ(fresh.chat("The dog", max_tokens(10)).generation.tokens, edited);
  // Edited without one: a message of text alone.
  session.edit_last("The dog", max_tokens(10));
  EXPECT_EQ(session.message(1).n_images, 0u);
}

TEST(SessionImages, AnAppendedHistoryWithAnImageEqualsTheTurnThatMadeIt) {
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  ChatSession live(m, image_settings());
  live.attach_image(rows.data(), kImageTokens);
  std::string said;
  runtime::GenerateOptions o = max_tokens(10);
  o.on_text = [&said](std::string_view t) {
    said.append(t);
    return true;
  };
  live.chat("A bird", o);

  ChatSession replayed(m, image_settings());
  replayed.attach_image(rows.data(), kImageTokens);
  replayed.append("user", "A bird");
  replayed.append("assistant", said);
  EXPECT_EQ(replayed.cached_tokens().size(), live.cached_tokens().size());
  EXPECT_EQ(live.chat("Then", max_tokens(8)).generation.tokens, replayed.chat("Then", max_tokens(8)).generation.tokens);
}

TEST(SessionImages, ARebuiltCacheHoldsTheImageAsAFreshPrefillDoes) {
  // Right after a summary is put in place (a cache rebuilt on the worker, or
  // prefilled again), with an image's message still in Recent: the cells
  // equal a fresh context's evaluation of the same tokens and rows.
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  auto image = std::make_shared<SessionImage>();
  image->id = 0;  // the session's first
  image->n_tokens = kImageTokens;
  image->n_embd = m.hparams().n_embd;
  image->bidirectional = true;
  image->rows = rows;
  const std::vector<int32_t> probe = encode("The end.", false);
  for (const RebuildStrategy strategy : {RebuildStrategy::Background, RebuildStrategy::Reprefill}) {
    SessionSettings s = image_settings(MemoryMode::Ssskv);
    s.rebuild = strategy;
    s.background_summary = strategy == RebuildStrategy::Background;
    s.wait_for_summary = true;
    ChatSession session(m, s);
    int checked = 0;
    for (int turn = 0; turn < 60 && checked < 2; ++turn) {
      if (turn % 3 == 0) session.attach_image(rows.data(), kImageTokens);
      const int64_t summaries = session.stats().summaries;
      session.chat(testing::kStoryLines[turn % 5], max_tokens(10));
      session.apply_pending_summary(/*wait=*/true);
      if (session.stats().summaries == summaries) continue;
      std::vector<int32_t> tokens = session.cached_tokens();
      if (std::none_of(tokens.begin(), tokens.end(), is_image_token)) continue;
      ++checked;
      const std::vector<float> live = testing::logits_after(m, session, probe);
      tokens.insert(tokens.end(), probe.begin(), probe.end());
      const std::vector<float> fresh =
          testing::fresh_prefill_logits(m, session, tokens, kernels::GgmlType::F32, {image});
      EXPECT_LT(testing::max_abs_diff(fresh, live.data()), 1e-4) << "turn " << turn;
    }
    EXPECT_EQ(checked, 2) << "summaries put in place with an image in Recent";
  }
}

TEST(SessionImages, ASavedConversationKeepsItsPictures) {
  // Saved with and without cells, restored into a new session (the picture
  // file is not needed): the next turn is the one the original session gives.
  const model::Model& m = stories_model();
  const std::vector<float> rows = picture_rows(kImageTokens, m.hparams().n_embd, 0.5f);
  const std::vector<float> other = picture_rows(kImageTokens, m.hparams().n_embd, 2.5f);
  const std::string path = ::testing::TempDir() + "peak_session_images.pkss";
  SessionSettings settings = image_settings(MemoryMode::Ssskv);
  settings.recent_max = 400;  // nothing dropped
  for (const bool with_cells : {true, false}) {
    ChatSession original(m, settings);
    original.attach_image(rows.data(), kImageTokens);
    original.chat("The dog", max_tokens(8));
    original.attach_image(other.data(), kImageTokens);
    original.append("user", "and <__media__> the cat");
    original.save(path, with_cells);

    ChatSession restored(m, settings);
    restored.attach_image(other.data(), kImageTokens);  // dropped by the restore
    restored.restore(path);
    EXPECT_EQ(restored.attached_images(), 0u);
    ASSERT_EQ(restored.n_messages(), original.n_messages());
    EXPECT_EQ(restored.message(3).text, "and <__media__> the cat");
    EXPECT_EQ(restored.message(3).n_images, 1u);
    EXPECT_EQ(restored.cached_tokens(), original.cached_tokens());
    EXPECT_EQ(restored.regenerate(max_tokens(8)).generation.tokens,
              original.regenerate(max_tokens(8)).generation.tokens)
        << (with_cells ? "with cells" : "prefilled");
    // A picture sent again after the restore is the file's.
    restored.attach_image(rows.data(), kImageTokens);
    restored.chat("Again", max_tokens(2));
    const std::vector<uint32_t> ids = cached_image_ids(restored);
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(ids[2], ids[0]);

    // Refit with another system prompt: rendered again, pictures included.
    SessionSettings refit = settings;
    refit.system_prompt = "A cat sat on the mat.";
    ChatSession rendered(m, refit);
    rendered.restore(path);
    const std::vector<int32_t> tokens = rendered.cached_tokens();
    EXPECT_EQ(std::count_if(tokens.begin(), tokens.end(), is_image_token), 2 * kImageTokens);
    rendered.regenerate(max_tokens(4));
  }
  // A picture of tiles (format 5): restored with its frames, into a session
  // of the same projector only.
  SessionSettings tiled = settings;
  tiled.images = model::Arch::Idefics3Vision;
  ChatSession original(m, tiled);
  original.attach_image(rows.data(), kImageTokens, 1, 2);  // 2 tiles and the overview, 4 rows each
  original.chat("The dog", max_tokens(6));
  original.save(path, false);
  EXPECT_EQ(testing::saved_format_version(path), 5u);
  ChatSession restored(m, tiled);
  restored.restore(path);
  EXPECT_EQ(restored.cached_tokens(), original.cached_tokens());
  EXPECT_EQ(restored.regenerate(max_tokens(6)).generation.tokens, original.regenerate(max_tokens(6)).generation.tokens);
  ChatSession gemma(m, settings);
  try {
    gemma.restore(path);
    FAIL() << "Gemma 3's session restored a picture of tiles";
  } catch (const SessionMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("projector"), std::string::npos) << e.what();
  }

  ChatSession text_only(m, testing::small_stories_settings());
  try {
    text_only.restore(path);
    FAIL() << "a session without a projector restored pictures";
  } catch (const SessionMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("takes none"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peak::chat
