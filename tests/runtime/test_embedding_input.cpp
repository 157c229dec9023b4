// Context::eval_embeddings: rows that enter the layers as they are (an
// image's tokens from its encoder). Rows equal to tokens' scaled embeddings
// give those tokens' cache and logits; a span of rows attending to each
// other both ways (Gemma 3's image tokens), between prompt tokens, matches the
// naive double-precision reference, sliding layers included; bad rows are
// refused by name and leave the context as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "model/model.h"
#include "reference_forward.h"
#include "runtime/context.h"
#include "tiny_models.h"

namespace peak {
namespace {

using kernels::GgmlType;

const std::vector<int32_t> kBefore = {1, 17, 250, 3, 99, 42};
const std::vector<int32_t> kSpanTokens = {7, 280, 64, 5, 5, 123, 200, 11, 140, 33, 298, 2};  // longer than the window
const std::vector<int32_t> kAfter = {77, 61, 190, 8};

const model::Arch kDecoders[] = {model::Arch::Llama,  model::Arch::Qwen2, model::Arch::Qwen3,  model::Arch::Gemma2,
                                 model::Arch::Gemma3, model::Arch::Phi3,  model::Arch::SmolLM3};

class EmbeddingInput : public ::testing::TestWithParam<model::Arch> {};

runtime::ContextParams f32_cache() {
  runtime::ContextParams params;
  params.n_ctx = 64;
  params.n_batch = 16;
  params.type_k = GgmlType::F32;
  params.type_v = GgmlType::F32;
  return params;
}

// Each token's row of token_embd times the model's embedding scale: what the
// layers receive for it.
std::vector<float> embedding_rows(const model::Model& m, const std::vector<int32_t>& tokens) {
  const int64_t e = m.hparams().n_embd;
  const auto* table = static_cast<const float*>(m.weights().token_embd->data);
  std::vector<float> rows;
  for (int32_t t : tokens) {
    for (int64_t i = 0; i < e; ++i) rows.push_back(table[t * e + i] * m.hparams().embedding_scale);
  }
  return rows;
}

double max_diff(const float* a, const float* b, int64_t n) {
  double d = 0.0;
  for (int64_t i = 0; i < n; ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

TEST_P(EmbeddingInput, RowsOfTokensGiveTheTokensLogits) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  runtime::Context tokens(*m, f32_cache());
  runtime::Context rows(*m, f32_cache());
  tokens.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  rows.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  tokens.eval(kSpanTokens.data(), static_cast<int64_t>(kSpanTokens.size()));
  const std::vector<float> span = embedding_rows(*m, kSpanTokens);
  rows.eval_embeddings(span.data(), static_cast<int64_t>(kSpanTokens.size()), false);
  EXPECT_LE(max_diff(tokens.logits(), rows.logits(), m->hparams().n_vocab), 1e-5);
  // And what follows sees the same cache.
  tokens.eval(kAfter.data(), static_cast<int64_t>(kAfter.size()));
  rows.eval(kAfter.data(), static_cast<int64_t>(kAfter.size()));
  EXPECT_LE(max_diff(tokens.logits(), rows.logits(), m->hparams().n_vocab), 1e-5);
  EXPECT_EQ(rows.kv().used(), static_cast<int64_t>(kBefore.size() + kSpanTokens.size() + kAfter.size()));
}

// A span attending both ways after a prompt, then tokens after it, against
// the reference; on sliding layers (gemma2 and gemma3's window of 8) the span
// sees its own later rows and the earlier cells within the window.
TEST_P(EmbeddingInput, ASpanAttendingBothWaysMatchesTheReference) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  runtime::Context ctx(*m, f32_cache());
  test::ReferenceForward ref(m->file(), m->hparams(), 64);
  test::ReferenceDeviation d;
  ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  for (int32_t t : kBefore) ref.step(t);

  const std::vector<float> rows = embedding_rows(*m, kSpanTokens);
  std::vector<std::vector<double>> ref_rows;
  const size_t e = static_cast<size_t>(m->hparams().n_embd);
  for (size_t r = 0; r < kSpanTokens.size(); ++r)
    ref_rows.emplace_back(rows.begin() + r * e, rows.begin() + (r + 1) * e);
  ctx.eval_embeddings(rows.data(), static_cast<int64_t>(kSpanTokens.size()), true);
  d.add(ref.span(ref_rows), ctx.logits());
  for (int32_t t : kAfter) {
    ctx.eval(&t, 1);
    d.add(ref.step(t), ctx.logits());
  }
  EXPECT_GT(d.max_ref, 1e-3) << "logits are degenerate";
  EXPECT_LT(d.max_diff, 1e-4 * std::max(1.0, d.max_ref)) << "max |diff| " << d.max_diff;

  // Causally, the same rows give other logits: the span's attention did look ahead.
  runtime::Context causal(*m, f32_cache());
  causal.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  causal.eval_embeddings(rows.data(), static_cast<int64_t>(kSpanTokens.size()), false);
  runtime::Context both(*m, f32_cache());
  both.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  both.eval_embeddings(rows.data(), static_cast<int64_t>(kSpanTokens.size()), true);
  EXPECT_GT(max_diff(causal.logits(), both.logits(), m->hparams().n_vocab), 1e-3);
}

// The same span over caches of F16 and (heads of 32: qwen3) Q8_0 cells, whose
// keys sit in lanes: the logits stay near the F32 cache's.
TEST_P(EmbeddingInput, ASpanAttendsBothWaysOverEveryCacheType) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  const std::vector<float> rows = embedding_rows(*m, kSpanTokens);
  std::vector<float> f32_logits;
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0}) {
    SCOPED_TRACE(kernels::ggml_type_name(static_cast<uint32_t>(type)));
    if (type == GgmlType::Q8_0 && m->hparams().head_dim % 32 != 0) continue;  // Q8_0 cells hold whole blocks of 32
    runtime::ContextParams params = f32_cache();
    params.type_k = params.type_v = type;
    runtime::Context ctx(*m, params);
    ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
    ctx.eval_embeddings(rows.data(), static_cast<int64_t>(kSpanTokens.size()), true);
    ctx.eval(kAfter.data(), static_cast<int64_t>(kAfter.size()));
    if (type == GgmlType::F32) {
      f32_logits.assign(ctx.logits(), ctx.logits() + ctx.n_vocab());
      continue;
    }
    EXPECT_LT(max_diff(f32_logits.data(), ctx.logits(), ctx.n_vocab()), type == GgmlType::F16 ? 1e-2 : 5e-2);
  }
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, EmbeddingInput, ::testing::ValuesIn(kDecoders),
                         [](const ::testing::TestParamInfo<model::Arch>& param) {
                           return std::string(model::arch_name(param.param));
                         });

TEST(EmbeddingInputRefusals, BadRowsAreRefusedByNameAndChangeNothing) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Llama, GgmlType::F32));
  runtime::Context ctx(*m, f32_cache());
  ctx.eval(kBefore.data(), static_cast<int64_t>(kBefore.size()));
  const std::vector<float> before(ctx.logits(), ctx.logits() + ctx.n_vocab());
  const auto expect_refused = [&](const std::vector<float>& rows, int64_t n, bool bidirectional,
                                  const std::string& words) {
    try {
      ctx.eval_embeddings(rows.data(), n, bidirectional);
      ADD_FAILURE() << "evaluated; expected a refusal naming: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(ctx.kv().used(), static_cast<int64_t>(kBefore.size()));
    EXPECT_EQ(std::vector<float>(ctx.logits(), ctx.logits() + ctx.n_vocab()), before);
  };
  std::vector<float> rows = embedding_rows(*m, {5, 6, 7});
  rows[64 + 3] = std::numeric_limits<float>::quiet_NaN();
  expect_refused(rows, 3, true, "row 1 holds nan at 3");
  const std::vector<float> many = embedding_rows(*m, std::vector<int32_t>(17, 9));
  expect_refused(many, 17, true, "17 rows attending to each other must fit one batch of n_batch 16");
  expect_refused(many, 0, false, "no rows");
}

}  // namespace
}  // namespace peak
