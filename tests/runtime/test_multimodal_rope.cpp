// Multimodal rotary positions (Qwen2-VL's M-RoPE, llama.cpp's qwen2vl) on a
// tiny synthetic model: a picture's tokens evaluated between text, split over
// several batches, match the naive double-precision reference that rotates
// them as HF's get_rope_index places them (one position t, t + row, t +
// column; the next token at t + max(rows, cols)); the cache keeps their
// places through remove, put back, shift and restore; a picture of a
// negative width, or given to a model without such positions, is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "model/model.h"
#include "model/synth.h"
#include "reference_forward.h"
#include "runtime/context.h"
#include "runtime/kv_journal.h"
#include "tiny_models.h"

namespace peak {
namespace {

using kernels::GgmlType;

const std::vector<int32_t> kBefore = {1, 17, 250, 3, 99};
const std::vector<int32_t> kAfter = {77, 61, 190, 8, 42};
constexpr int64_t kRows = 3, kCols = 5;  // a picture of 15 tokens: wider than tall

runtime::ContextParams f32_cache(int64_t n_batch) {
  runtime::ContextParams params;
  params.n_ctx = 64;
  params.n_batch = n_batch;
  params.type_k = GgmlType::F32;
  params.type_v = GgmlType::F32;
  return params;
}

// A picture's rows: random values of the scale of the tiny model's embeddings.
std::vector<float> picture_rows(const model::Model& m, int64_t n) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> rows(static_cast<size_t>(n * m.hparams().n_embd));
  for (float& v : rows) v = dist(rng);
  return rows;
}

std::vector<std::vector<double>> as_double_rows(const std::vector<float>& rows, int64_t n_embd) {
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < rows.size(); i += static_cast<size_t>(n_embd)) {
    out.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(i),
                     rows.begin() + static_cast<std::ptrdiff_t>(i) + n_embd);
  }
  return out;
}

double max_diff(const std::vector<double>& expected, const float* logits) {
  test::ReferenceDeviation d;
  d.add(expected, logits);
  return d.max_diff;
}

double max_diff(const float* a, const float* b, int64_t n) {
  double d = 0.0;
  for (int64_t i = 0; i < n; ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

class MultimodalRope : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = model::Model::load(test::write_tiny_model(model::Arch::Qwen2VL, GgmlType::F32));
    ASSERT_EQ(model_->hparams().rope.mode, core::RopeMode::Multi);
    rows_ = picture_rows(*model_, kRows * kCols);
  }
  // Text, the picture, text: the picture's rows in batches of n_batch.
  void evaluate(runtime::Context& ctx) const {
    ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
    ctx.eval_embeddings(rows_.data(), kRows * kCols, false, nullptr, kCols);
  }
  std::unique_ptr<model::Model> model_;
  std::vector<float> rows_;
};

TEST_F(MultimodalRope, APictureBetweenTextMatchesTheReference) {
  // The tiny model's 8 rotated pairs split 2, 3, 3.
  EXPECT_EQ(model_->hparams().rope.sections[0], 2);
  EXPECT_EQ(model_->hparams().rope.sections[1], 3);
  for (int64_t n_batch : {4, 16}) {  // the picture over 4 batches, or in one
    SCOPED_TRACE("n_batch " + std::to_string(n_batch));
    runtime::Context ctx(*model_, f32_cache(n_batch));
    test::ReferenceForward ref(model_->file(), model_->hparams(), 64);
    std::vector<double> expected;
    for (int32_t t : kBefore) expected = ref.step(t);
    ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
    EXPECT_LT(max_diff(expected, ctx.logits()), 1e-4);

    ctx.eval_embeddings(rows_.data(), kRows * kCols, false, nullptr, kCols);
    expected = ref.picture(as_double_rows(rows_, model_->hparams().n_embd), kCols);
    EXPECT_LT(max_diff(expected, ctx.logits()), 1e-4);
    // Every token of the picture at 5; text goes on at 5 + max(3, 5).
    const runtime::KvCache& kv = ctx.kv();
    EXPECT_EQ(kv.positions()[5], 5);
    EXPECT_EQ(kv.positions()[19], 5);
    EXPECT_EQ(kv.places()[19].row, 2);
    EXPECT_EQ(kv.places()[19].col, 4);
    EXPECT_EQ(kv.places()[7].row, 0);
    EXPECT_EQ(kv.places()[7].col, 2);
    EXPECT_EQ(kv.next_position(), 10);

    for (int32_t t : kAfter) {
      ctx.eval(&t, 1);
      expected = ref.step(t);
      EXPECT_LT(max_diff(expected, ctx.logits()), 1e-4) << "token " << t;
    }
    EXPECT_EQ(kv.positions().back(), 14);
  }
}

TEST_F(MultimodalRope, ATallPictureMovesTextByItsRows) {
  runtime::Context ctx(*model_, f32_cache(16));
  test::ReferenceForward ref(model_->file(), model_->hparams(), 64);
  for (int32_t t : kBefore) ref.step(t);
  ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  // The same 15 rows as 5 rows of 3.
  ctx.eval_embeddings(rows_.data(), 15, false, nullptr, 3);
  ref.picture(as_double_rows(rows_, model_->hparams().n_embd), 3);
  EXPECT_EQ(ctx.kv().next_position(), 10);
  const std::vector<double> expected = ref.step(kAfter[0]);
  ctx.eval(kAfter.data(), 1);
  EXPECT_LT(max_diff(expected, ctx.logits()), 1e-4);
}

// Cells removed and put back (the session's journal) keep their places;
// a shift moves a picture's three positions alike, as evaluating it there.
TEST_F(MultimodalRope, CellsKeepTheirPlacesThroughEdits) {
  const int64_t n_vocab = model_->hparams().n_vocab;
  runtime::Context ctx(*model_, f32_cache(16));
  evaluate(ctx);
  {
    runtime::KvJournal journal(ctx.kv());
    runtime::ContextCells cells(ctx);
    journal.remove(cells, 3, 14);
    EXPECT_EQ(ctx.kv().used(), 6);
    EXPECT_EQ(ctx.kv().next_position(), 10);  // the picture's last cell stayed
    journal.undo(cells);
  }
  EXPECT_EQ(ctx.kv().next_position(), 10);
  EXPECT_EQ(ctx.kv().places()[19].col, 4);
  const int32_t next = kAfter[0];
  runtime::Context fresh(*model_, f32_cache(16));
  evaluate(fresh);
  ctx.eval(&next, 1);
  fresh.eval(&next, 1);
  EXPECT_LT(max_diff(ctx.logits(), fresh.logits(), n_vocab), 1e-5);

  // Drop the first two text tokens and move the rest down: equals a context
  // that never saw them, on one layer (whose keys and values depend on each
  // token and its positions only).
  model::SynthSpec spec = test::tiny_spec(model::Arch::Qwen2VL);
  spec.n_layer = 1;
  const auto one_layer = model::Model::load(test::write_tiny_spec(spec, GgmlType::F32, "one_layer_qwen2vl"));
  runtime::Context shifted(*one_layer, f32_cache(16));
  shifted.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  shifted.eval_embeddings(rows_.data(), kRows * kCols, false, nullptr, kCols);
  shifted.eval(&next, 1);
  shifted.kv().remove(0, 2);
  shifted.shift_positions(0, shifted.kv().used(), -2);
  EXPECT_EQ(shifted.kv().positions()[3], 3);
  EXPECT_EQ(shifted.kv().next_position(), 9);
  runtime::Context without(*one_layer, f32_cache(16));
  without.eval(kBefore.data() + 2, 3);
  without.eval_embeddings(rows_.data(), kRows * kCols, false, nullptr, kCols);
  without.eval(&next, 1);
  // A snapshot restored with its places continues as the original.
  runtime::Context restored(*one_layer, f32_cache(16));
  restored.kv().restore(without.kv().snapshot(), without.kv().positions(), without.kv().places());
  EXPECT_EQ(restored.kv().next_position(), without.kv().next_position());
  const int32_t after = kAfter[1];
  shifted.eval(&after, 1);
  without.eval(&after, 1);
  restored.eval(&after, 1);
  EXPECT_LT(max_diff(shifted.logits(), without.logits(), n_vocab), 1e-4);
  EXPECT_EQ(max_diff(restored.logits(), without.logits(), n_vocab), 0.0);
}

TEST_F(MultimodalRope, PicturesOfTheWrongShapeAreRefused) {
  runtime::Context ctx(*model_, f32_cache(16));
  ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  const std::vector<float> logits(ctx.logits(), ctx.logits() + ctx.n_vocab());
  EXPECT_THROW(ctx.eval_embeddings(rows_.data(), 15, false, nullptr, -5), std::invalid_argument);
  EXPECT_EQ(ctx.kv().used(), static_cast<int64_t>(kBefore.size()));
  EXPECT_EQ(max_diff(logits.data(), ctx.logits(), ctx.n_vocab()), 0.0);
  // The first tokens of a picture (a cache checked cell by cell may end
  // inside one) take their places as the whole picture's do.
  ctx.eval_embeddings(rows_.data(), 7, false, nullptr, kCols);
  EXPECT_EQ(ctx.kv().places()[11].row, 1);
  EXPECT_EQ(ctx.kv().places()[11].col, 1);
  EXPECT_EQ(ctx.kv().positions()[11], 5);
  // Places that do not match the positions.
  std::vector<runtime::PicturePlace> places(3);
  EXPECT_THROW(ctx.kv().restore(ctx.kv().snapshot(), ctx.kv().positions(), places), std::invalid_argument);

  // A model without multimodal positions takes no picture shape.
  const auto qwen2 = model::Model::load(test::write_tiny_model(model::Arch::Qwen2, GgmlType::F32));
  runtime::Context plain(*qwen2, f32_cache(16));
  try {
    plain.eval_embeddings(rows_.data(), 15, false, nullptr, kCols);
    FAIL() << "a picture's shape was taken by qwen2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("places no token in a picture"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace peak
