// Each architecture (llama, qwen2, qwen3, gemma2, gemma3, phi3, smollm3, qwen2vl) on a
// tiny synthetic model, run in a context: the logits of a prefill and of
// token-by-token decoding over more tokens than the sliding window match a
// naive double-precision reference, a batched prefill gives the logits of
// token-by-token decoding, repacked weights change nothing, and editing the
// cache (remove, shift) equals a context that never saw the cells.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/model.h"
#include "model/synth.h"
#include "batched_prefill.h"
#include "reference_forward.h"
#include "runtime/context.h"
#include "tiny_models.h"

namespace peak {

using kernels::float_kernels;
using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;

namespace {

using test::prefill_tolerance;
using test::ReferenceDeviation;
using test::tiny_spec;
using test::write_tiny_model;

const std::vector<int32_t> kPrompt = {1, 17, 250, 3, 99, 42, 7, 280, 64, 5, 5, 123, 200, 11};
// 40 tokens: five times the tiny models' sliding window.
const std::vector<int32_t> kLongPrompt = {1,   17, 250, 3,   99,  42, 7,   280, 64,  5,   5,  123, 200, 11,
                                          140, 33, 298, 2,   77,  61, 190, 8,   254, 19,  46, 101, 3,   222,
                                          15,  88, 170, 260, 132, 9,  57,  211, 4,   160, 29, 73};

double shifted_versus_fresh(const model::Model& m, GgmlType kv_type);

const model::Arch kAllArchs[] = {model::Arch::Llama,  model::Arch::Qwen2, model::Arch::Qwen3,   model::Arch::Gemma2,
                                 model::Arch::Gemma3, model::Arch::Phi3,  model::Arch::SmolLM3, model::Arch::Qwen2VL};

class Architecture : public ::testing::TestWithParam<model::Arch> {};

runtime::ContextParams f32_cache(int64_t n_ctx) {
  runtime::ContextParams params;
  params.n_ctx = n_ctx;
  params.type_k = GgmlType::F32;
  params.type_v = GgmlType::F32;
  return params;
}

// Runs `prompt` through a context of n_ctx cells with an F32 cache beside the
// naive reference, token by token, or as a prefill in batches of 16 with every
// token's logits.
ReferenceDeviation deviation_from_reference(const model::Model& m, const std::vector<int32_t>& prompt, bool prefill,
                                            int64_t n_ctx = 64) {
  runtime::ContextParams params = f32_cache(n_ctx);
  params.n_batch = 16;
  params.logits_all = prefill;
  runtime::Context ctx(m, params);
  test::ReferenceForward ref(m.file(), m.hparams(), n_ctx);
  const int64_t n_vocab = ctx.n_vocab();
  std::vector<float> all(prefill ? prompt.size() * static_cast<size_t>(n_vocab) : 0);
  if (prefill) ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()), all.data());
  ReferenceDeviation d;
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (!prefill) ctx.eval(&prompt[i], 1);
    d.add(ref.step(prompt[i]), prefill ? all.data() + i * static_cast<size_t>(n_vocab) : ctx.logits());
  }
  return d;
}

TEST_P(Architecture, MatchesANaiveDoublePrecisionForwardPass) {
  const std::string path = write_tiny_model(GetParam(), GgmlType::F32);
  const auto m = model::Model::load(path);
  ASSERT_EQ(m->hparams().arch, GetParam());
  for (bool prefill : {false, true}) {
    const ReferenceDeviation d = deviation_from_reference(*m, kLongPrompt, prefill);
    EXPECT_GT(d.max_ref, 1e-3) << "logits are degenerate";
    const double tolerance = prefill ? prefill_tolerance(*m, 1e-4) : 1e-4;
    EXPECT_LT(d.max_diff, tolerance * std::max(1.0, d.max_ref)) << (prefill ? "prefill" : "decode") << ": max |diff| "
                                                                << d.max_diff;
  }
}

// Q8_0 matrices take their activations in Q8_0 on both paths, but the batched
// and the single-token products sum in different orders, so an activation on
// a rounding boundary can land one step apart (seen: one token's logits 2e-3
// apart, the others within 1e-7; 5.5e-3 on gemma3 where attention sums in
// another order too, see below). F16 matrices round their activations to
// F16 the same way: where a prefill's attention sums in another order than
// decoding (fp32 tile products, on paths that have them, for heads of whole
// vectors of 16), an output that moves by an fp32 ulp can move an activation
// by a whole F16 step, 2^-11 of it (seen: 3e-4).
double f16_weights_tolerance(const model::Model& m) {
  const bool reordered = float_kernels().f32_tiles.gemm != nullptr && m.hparams().head_dim % 16 == 0;
  return reordered ? 1e-3 : 1e-4;
}

TEST_P(Architecture, BatchedPrefillEqualsTokenByTokenDecoding) {
  for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    const std::string path = write_tiny_model(GetParam(), type);
    const auto m = model::Model::load(path);
    const double tolerance = prefill_tolerance(*m, type == GgmlType::Q8_0 ? 1e-2 : f16_weights_tolerance(*m));
    runtime::ContextParams params;
    params.n_ctx = 64;
    params.n_batch = 5;  // batches of 5, each shorter than the sliding window
    params.logits_all = true;
    runtime::Context batched(*m, params);
    params.logits_all = false;
    runtime::Context stepwise(*m, params);
    EXPECT_LT(test::batched_versus_stepwise(batched, stepwise, kLongPrompt), tolerance)
        << ggml_type_name(static_cast<uint32_t>(type));
    // Decode continues after the prefill.
    const int32_t next = 9;
    batched.eval(&next, 1);
    stepwise.eval(&next, 1);
    for (int64_t v = 0; v < batched.n_vocab(); ++v) EXPECT_NEAR(batched.logits()[v], stepwise.logits()[v], tolerance);
  }
}

// Q4_0 and Q8_0 matrices repacked at load time (model/weight_repack.h, on
// paths that repack) give the logits of the stored layout bit for bit, in a
// batched prefill (gemm) and in decoding (GEMV), with two threads splitting the
// rows.
TEST_P(Architecture, RepackedWeightsGiveTheSameLogits) {
  for (const GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0}) {
    SCOPED_TRACE(ggml_type_name(static_cast<uint32_t>(type)));
    const std::string path = write_tiny_model(GetParam(), type);
    model::LoadOptions stored_layout;
    stored_layout.repack_weights = false;
    const auto stored = model::Model::load(path, stored_layout);
    const auto repacked = model::Model::load(path);
    const bool path_repacks = kernels_for(type).repack != nullptr;
    for (const model::LayerWeights& l : repacked->weights().layers) {
      for (const core::Tensor* t : {l.wq, l.wk, l.wv, l.wqkv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) {
        if (t) {
          EXPECT_EQ(t->repacked_bytes() != nullptr, path_repacks) << t->name;
        }
      }
    }
    EXPECT_EQ(repacked->weights().token_embd->repacked_data, nullptr);  // get_rows reads its rows
    EXPECT_EQ(stored->weights().layers[0].wo->repacked_data, nullptr);

    runtime::ContextParams params;
    params.n_ctx = 64;
    params.n_threads = 2;
    runtime::Context a(*stored, params), b(*repacked, params);
    const int64_t n_vocab = a.n_vocab();
    a.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
    b.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
    for (int32_t next : {9, 250, 3}) {
      for (int64_t v = 0; v < n_vocab; ++v) ASSERT_EQ(a.logits()[v], b.logits()[v]) << "vocab entry " << v;
      a.eval(&next, 1);
      b.eval(&next, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, Architecture, ::testing::ValuesIn(kAllArchs),
                         [](const auto& param_info) { return std::string(model::arch_name(param_info.param)); });

// Removing a middle range of cells and shifting the later ones down gives the
// logits of a context that never saw the removed tokens. That holds exactly for
// one layer only: deeper layers' keys and values of the later tokens were
// computed attending to the removed ones (which is why a rebuild that shifts
// is an approximation of one that prefills again).
double shifted_versus_fresh(const model::Model& m, GgmlType kv_type) {
  runtime::ContextParams params;
  params.n_ctx = 64;
  params.type_k = kv_type;
  params.type_v = kv_type;
  const std::vector<int32_t> a(kPrompt.begin(), kPrompt.begin() + 5), b(kPrompt.begin() + 5, kPrompt.begin() + 9),
      c(kPrompt.begin() + 9, kPrompt.end());
  runtime::Context edited(m, params);
  edited.eval(a.data(), 5);
  edited.eval(b.data(), 4);
  edited.eval(c.data(), static_cast<int64_t>(c.size()));
  edited.kv().remove(5, 4);
  edited.shift_positions(5, static_cast<int64_t>(c.size()), -4);
  EXPECT_EQ(edited.kv().positions().back(), static_cast<int32_t>(4 + c.size()));
  runtime::Context fresh(m, params);
  fresh.eval(a.data(), 5);
  fresh.eval(c.data(), static_cast<int64_t>(c.size()));
  const int32_t next = 77;
  edited.eval(&next, 1);
  fresh.eval(&next, 1);
  double max_diff = 0;
  for (int64_t v = 0; v < fresh.n_vocab(); ++v) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(edited.logits()[v] - fresh.logits()[v])));
  }
  return max_diff;
}

std::string write_one_layer(model::SynthSpec spec, const std::string& name) {
  spec.n_layer = 1;
  const std::string path = test::test_temp_path("one_layer_" + name + ".gguf");
  model::write_synth_model(spec, model::SynthOptions{}, path);
  return path;
}

TEST_P(Architecture, RemovingAndShiftingCellsEqualsAFreshContext) {
  const auto m = model::Model::load(write_one_layer(tiny_spec(GetParam()), model::arch_name(GetParam())));
  EXPECT_LT(shifted_versus_fresh(*m, GgmlType::F32), 1e-4);
  EXPECT_LT(shifted_versus_fresh(*m, GgmlType::F16), 1e-2);
}

TEST(Llama3RopeFactors, MatchTheReferenceAndShiftConsistently) {
  model::SynthSpec spec = tiny_spec(model::Arch::Llama);
  spec.rope_freqs = true;
  const std::string path = test::test_temp_path("tiny_llama3.gguf");
  model::write_synth_model(spec, model::SynthOptions{}, path);
  const auto m = model::Model::load(path);
  ASSERT_NE(m->weights().rope_freqs, nullptr);
  EXPECT_LT(deviation_from_reference(*m, kPrompt, /*prefill=*/false).max_diff, 1e-4);
  const auto one_layer = model::Model::load(write_one_layer(spec, "llama3"));
  EXPECT_LT(shifted_versus_fresh(*one_layer, GgmlType::F32), 1e-4);
}

// LongRoPE: a context of at most the original training context (32 cells in
// the tiny phi3) rotates with the short factors, a longer one with the long
// factors, and each matches the reference that picks the same; the two
// choices give different logits.
TEST(LongRope, TheContextSizePicksTheShortOrLongFactors) {
  const auto m = model::Model::load(write_tiny_model(model::Arch::Phi3, GgmlType::F32));
  const model::ModelWeights& w = m->weights();
  ASSERT_NE(w.rope_factors_long, nullptr);
  const int64_t original = test::kTinyRopeOriginalContext;
  EXPECT_EQ(model::rope_factors_for_context(w, m->hparams(), original), w.rope_factors_short);
  EXPECT_EQ(model::rope_factors_for_context(w, m->hparams(), original + 1), w.rope_factors_long);
  const std::vector<int32_t> prompt(kLongPrompt.begin(), kLongPrompt.begin() + original);
  for (int64_t n_ctx : {original, 2 * original}) {
    const ReferenceDeviation d = deviation_from_reference(*m, prompt, /*prefill=*/false, n_ctx);
    EXPECT_LT(d.max_diff, 1e-4 * std::max(1.0, d.max_ref)) << "n_ctx " << n_ctx;
  }
  runtime::Context short_ctx(*m, f32_cache(original)), long_ctx(*m, f32_cache(2 * original));
  short_ctx.eval(prompt.data(), original);
  long_ctx.eval(prompt.data(), original);
  double difference = 0;
  for (int64_t v = 0; v < short_ctx.n_vocab(); ++v) {
    difference = std::max(difference, static_cast<double>(std::abs(short_ctx.logits()[v] - long_ctx.logits()[v])));
  }
  EXPECT_GT(difference, 1e-3);
}

}  // namespace
}  // namespace peak
