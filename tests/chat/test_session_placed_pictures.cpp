// Pictures whose tokens the language model places by row and column (Qwen2.5-VL's
// projector, a qwen2vl text model with multimodal rotary positions) in a
// session, on a tiny synthetic qwen2vl: a turn reads the picture as a plain
// context fed the same pieces by hand (Context::eval_embeddings with the
// picture's width); dropping a message with a picture closes the gap its
// positions leave (more than its cells), the next turn equal to a fresh
// prefill of the cells; session files (format 6) keep the grid, and restored
// cells continue as the original; a picture without its grid is refused.
#include <gtest/gtest.h>

#include <algorithm>
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
#include "tiny_models.h"

namespace peak::chat {
namespace {

using testing::max_tokens;
using testing::picture_rows;

constexpr int64_t kRows = 3, kCols = 4, kTokens = kRows * kCols;

const model::Model& qwen2vl() {
  static const auto m = model::Model::load(test::write_tiny_model(model::Arch::Qwen2VL, kernels::GgmlType::F32));
  return *m;
}

SessionSettings placed_settings(MemoryMode mode = MemoryMode::None) {
  SessionSettings s = testing::small_stories_settings(mode);
  s.images = model::Arch::Qwen25Vision;
  s.type_k = s.type_v = kernels::GgmlType::F32;
  if (mode == MemoryMode::None) s.recent_max = 400;
  return s;
}

// The session's first picture as the session holds it (id 0).
ImageList first_picture(const std::vector<float>& rows) {
  auto image = std::make_shared<SessionImage>(frame_image(model::Arch::Qwen25Vision, kTokens, 0, 0, 512, kCols));
  image->n_embd = qwen2vl().hparams().n_embd;
  image->rows = rows;
  return {image};
}

std::vector<int32_t> encode(const std::string& text, bool special) {
  return qwen2vl().tokenizer().encode(text, false, special);
}

TEST(SessionPlacedPictures, ATurnPlacesThePictureByRowAndColumn) {
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  const SessionSettings settings = placed_settings();
  ChatSession session(m, settings);
  session.attach_image(rows.data(), kTokens, 0, 0, kCols);
  session.chat("Look: <__media__> what is it", max_tokens(0));

  // Raw template: the system prompt and a newline, then the text with
  // Qwen2.5-VL's framing around the picture at its marker.
  runtime::ContextParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  p.type_k = p.type_v = kernels::GgmlType::F32;
  runtime::Context ctx(m, p);
  const auto eval = [&](const std::vector<int32_t>& tokens) {
    ctx.eval(tokens.data(), static_cast<int64_t>(tokens.size()));
  };
  eval(m.tokenizer().encode(settings.system_prompt + "\n", true, false));
  eval(encode("Look: ", false));
  eval(encode("<|vision_start|>", true));
  const int32_t at = ctx.kv().next_position();
  ctx.eval_embeddings(rows.data(), kTokens, false, nullptr, kCols);
  EXPECT_EQ(ctx.kv().next_position(), at + kCols);
  eval(encode("<|vision_end|>", true));
  eval(encode(" what is it", false));
  EXPECT_LT(
      testing::max_abs_diff(std::vector<float>(ctx.logits(), ctx.logits() + ctx.n_vocab()), session.context().logits()),
      1e-4);
  EXPECT_EQ(session.context().kv().positions(), ctx.kv().positions());
  // The session's cells sit where evaluating its tokens puts them.
  const CellPositions expected = cell_positions(session.cached_tokens(), first_picture(rows), true);
  EXPECT_EQ(expected.positions, session.context().kv().positions());
}

TEST(SessionPlacedPictures, ADroppedPictureLeavesNoGapInThePositions) {
  // Recent holds a few messages; the first, with the picture, leaves first.
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  SessionSettings settings = placed_settings(MemoryMode::Window);
  settings.recent_max = 60;
  settings.headroom = 24;
  ChatSession session(m, settings);
  session.attach_image(rows.data(), kTokens, 0, 0, kCols);
  session.chat("<__media__> the dog", max_tokens(4));
  bool dropped = false;
  for (int turn = 0; turn < 6 && !dropped; ++turn) {
    session.chat(testing::kStoryLines[turn % 5], max_tokens(4));
    const std::vector<int32_t> tokens = session.cached_tokens();
    dropped = std::none_of(tokens.begin(), tokens.end(), is_image_token);
    // Positions follow the cells' tokens, and the cache equals a fresh prefill of them.
    EXPECT_EQ(cell_positions(tokens, first_picture(rows), true).positions, session.context().kv().positions())
        << "turn " << turn;
    EXPECT_LT(testing::max_abs_diff(
                  testing::fresh_prefill_logits(m, session, tokens, kernels::GgmlType::F32, first_picture(rows)),
                  session.context().logits()),
              1e-4)
        << "turn " << turn;
  }
  EXPECT_TRUE(dropped) << "the picture's message never left Recent";
}

TEST(SessionPlacedPictures, ASavedConversationKeepsThePicturesGrid) {
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  const std::string path = ::testing::TempDir() + "peak_session_placed.pkss";
  SessionSettings settings = placed_settings(MemoryMode::Ssskv);
  settings.summary_max = 96;  // the synthetic vocabulary spells the summary's framing letter by letter
  settings.recent_max = 400;
  for (const bool with_cells : {true, false}) {
    ChatSession original(m, settings);
    original.attach_image(rows.data(), kTokens, 0, 0, kCols);
    original.chat("The <__media__> dog", max_tokens(6));
    original.save(path, with_cells);
    EXPECT_EQ(testing::saved_format_version(path), 6u);
    ChatSession restored(m, settings);
    restored.restore(path);
    EXPECT_EQ(restored.cached_tokens(), original.cached_tokens());
    // The cells' positions, the picture's shared one included (a prefill may
    // hold more cells: the answer the original has not evaluated yet).
    const std::vector<int32_t>& mine = original.context().kv().positions();
    const std::vector<int32_t>& theirs = restored.context().kv().positions();
    ASSERT_GE(theirs.size(), mine.size());
    EXPECT_TRUE(std::equal(mine.begin(), mine.end(), theirs.begin())) << (with_cells ? "with cells" : "prefilled");
    EXPECT_LT(original.context().kv().next_position(), static_cast<int32_t>(mine.size()));
    EXPECT_EQ(restored.regenerate(max_tokens(6)).generation.tokens,
              original.regenerate(max_tokens(6)).generation.tokens)
        << (with_cells ? "with cells" : "prefilled");
  }
  // The cells checked on restore end inside the picture: its first tokens are
  // computed again where they are, and the saved cells pass.
  ChatSession original(m, settings);
  original.attach_image(rows.data(), kTokens, 0, 0, kCols);
  original.chat("The <__media__> dog", max_tokens(6));
  original.save(path, true);
  const std::vector<int32_t> tokens = original.cached_tokens();
  SessionSettings checking = settings;
  checking.verify_kv_cells = std::find_if(tokens.begin(), tokens.end(), is_image_token) - tokens.begin() + 5;
  ChatSession restored(m, checking);
  restored.restore(path);
  EXPECT_EQ(restored.context().kv().positions(), original.context().kv().positions());
  EXPECT_EQ(restored.regenerate(max_tokens(6)).generation.tokens, original.regenerate(max_tokens(6)).generation.tokens);
}

TEST(SessionPlacedPictures, ARestoreThatDropsThePictureClosesItsPositions) {
  // Saved with cells, restored into a smaller Recent: the picture's message
  // leaves, and the cells after it move down by the positions it took (4 for
  // its 12 cells), as after a turn that drops it.
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  const std::string path = ::testing::TempDir() + "peak_session_placed_drop.pkss";
  SessionSettings settings = placed_settings();
  ChatSession original(m, settings);
  original.attach_image(rows.data(), kTokens, 0, 0, kCols);
  original.chat("<__media__> the dog", max_tokens(4));
  original.chat(testing::kStoryLines[0], max_tokens(4));
  original.save(path, true);
  const auto recent = static_cast<int64_t>(original.cached_tokens().size());

  SessionSettings smaller = settings;
  smaller.mode = MemoryMode::Window;
  smaller.headroom = 24;
  smaller.recent_max = 48;
  ChatSession restored(m, smaller);
  restored.restore(path);
  const std::vector<int32_t> tokens = restored.cached_tokens();
  ASSERT_TRUE(std::none_of(tokens.begin(), tokens.end(), is_image_token))
      << "the picture's message stayed: " << tokens.size() << " of " << recent << " cells";
  EXPECT_EQ(cell_positions(tokens, {}, true).positions, restored.context().kv().positions());
  // And the next turn goes on from there.
  restored.chat(testing::kStoryLines[1], max_tokens(4));
  const std::vector<int32_t>& after = restored.context().kv().positions();
  const std::vector<int32_t> expected = cell_positions(restored.cached_tokens(), {}, true).positions;
  ASSERT_LE(after.size(), expected.size());
  EXPECT_TRUE(std::equal(after.begin(), after.end(), expected.begin()));
}

TEST(SessionPlacedPictures, ARebuiltCacheHoldsThePictureAsAFreshPrefillDoes) {
  // Right after a summary is put in place (a cache rebuilt on the worker, or
  // prefilled again), with the picture's message in Recent or just dropped.
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  const std::vector<int32_t> probe = encode("The end.", false);
  for (const RebuildStrategy strategy : {RebuildStrategy::Background, RebuildStrategy::Reprefill}) {
    SessionSettings s = placed_settings(MemoryMode::Ssskv);
    s.summary_max = 96;
    s.recent_max = 160;
    s.trigger_discard = 60;
    s.rebuild = strategy;
    s.background_summary = strategy == RebuildStrategy::Background;
    s.wait_for_summary = true;
    ChatSession session(m, s);
    int checked = 0;
    for (int turn = 0; turn < 40 && checked < 2; ++turn) {
      if (turn % 3 == 0) session.attach_image(rows.data(), kTokens, 0, 0, kCols);
      const int64_t summaries = session.stats().summaries;
      session.chat(testing::kStoryLines[turn % 5], max_tokens(6));
      session.apply_pending_summary(/*wait=*/true);
      if (session.stats().summaries == summaries) continue;
      std::vector<int32_t> tokens = session.cached_tokens();
      if (std::none_of(tokens.begin(), tokens.end(), is_image_token)) continue;
      ++checked;
      EXPECT_EQ(cell_positions(tokens, first_picture(rows), true).positions, session.context().kv().positions())
          << "turn " << turn;
      const std::vector<float> live = testing::logits_after(m, session, probe);
      tokens.insert(tokens.end(), probe.begin(), probe.end());
      const std::vector<float> fresh =
          testing::fresh_prefill_logits(m, session, tokens, kernels::GgmlType::F32, first_picture(rows));
      EXPECT_LT(testing::max_abs_diff(fresh, live.data()), 1e-4) << "turn " << turn;
    }
    EXPECT_EQ(checked, 2) << "summaries put in place with the picture in Recent";
  }
}

TEST(SessionPlacedPictures, APictureWithoutItsGridIsRefused) {
  const model::Model& m = qwen2vl();
  const std::vector<float> rows = picture_rows(kTokens, m.hparams().n_embd, 0.5f);
  ChatSession session(m, placed_settings());
  const auto error = [&](int64_t token_cols) {
    try {
      session.attach_image(rows.data(), kTokens, 0, 0, token_cols);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(0).find("this projector sizes each picture"), std::string::npos) << error(0);
  EXPECT_NE(error(5).find("is not rows of 5 across"), std::string::npos) << error(5);
  EXPECT_EQ(session.attached_images(), 0u);
  // Another projector's pictures take no grid.
  SessionSettings gemma = placed_settings();
  gemma.images = model::Arch::Gemma3Vision;
  ChatSession other(m, gemma);
  EXPECT_THROW(other.attach_image(rows.data(), kTokens, 0, 0, kCols), std::invalid_argument);
}

}  // namespace
}  // namespace peak::chat
