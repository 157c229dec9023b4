// NaN is never hidden at run time: a NaN weight in a matrix (which the load
// does not read unless asked to) makes attention scores NaN, which must
// propagate (not read as masked keys) to the logits, and evaluation then
// fails with NonFiniteLogits, leaving the cache as it was. A KV shift that
// would move a position out of the int32 range is refused before any key
// is rotated.
#include <gtest/gtest.h>

#include <climits>
#include <limits>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "sampling/sampler_chain.h"
#include "tiny_models.h"

namespace peak {
namespace {

runtime::ContextParams small_context() {
  runtime::ContextParams p;
  p.n_ctx = 64;
  p.n_threads = 2;
  return p;
}

TEST(NonFiniteRuntime, ANaNQueryWeightEndsEvaluationWithAClearError) {
  // Row 1 of blk.2.attn_q: one query element of head 0 is NaN for every token,
  // so all of that head's scores are NaN.
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const auto m = model::Model::load(test::edited_stories({}, {"blk.2.attn_q.weight", 100, kNaN}));
  runtime::Context ctx(*m, small_context());
  const std::vector<int32_t> prompt = {1, 403, 407, 261};
  try {
    ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
    ADD_FAILURE() << "a NaN weight produced finite logits";
  } catch (const runtime::NonFiniteLogits& e) {
    EXPECT_NE(std::string(e.what()).find("the model produced NaN/Inf logits"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ctx.kv().used(), 0) << "the failed evaluation left cells behind";
  // Through generation too (one token at a time, on the decode path).
  sampling::SamplerChain sampler(static_cast<int32_t>(m->hparams().n_vocab), sampling::SamplerParams{});
  runtime::GenerateOptions options;
  options.max_tokens = 4;
  EXPECT_THROW(runtime::generate(ctx, sampler, {1}, options), runtime::NonFiniteLogits);
}

TEST(NonFiniteRuntime, TheUneditedModelStillEvaluates) {
  const auto m = model::Model::load(test::stories_path());
  runtime::Context ctx(*m, small_context());
  const std::vector<int32_t> prompt = {1, 403, 407, 261};
  EXPECT_NO_THROW(ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size())));
}

TEST(KvShift, APositionLeavingTheInt32RangeIsRefusedAndNothingChanges) {
  const auto m = model::Model::load(test::stories_path());
  runtime::Context ctx(*m, small_context());
  const std::vector<int32_t> prompt = {1, 403, 407, 261};
  ctx.eval(prompt.data(), 4);
  const std::vector<int32_t> before = ctx.kv().positions();
  EXPECT_THROW(ctx.shift_positions(1, 3, INT32_MAX), std::out_of_range);
  EXPECT_THROW(ctx.shift_positions(0, 4, INT32_MIN), std::out_of_range);
  EXPECT_THROW(ctx.shift_positions(2, 2, -3), std::out_of_range);  // position 2 would become -1
  EXPECT_EQ(ctx.kv().positions(), before);
  // The largest shift that keeps every position representable is taken.
  ctx.shift_positions(3, 1, runtime::kMaxPosition - 3);
  EXPECT_EQ(ctx.kv().positions().back(), runtime::kMaxPosition);
  const int32_t next = 5;
  EXPECT_THROW(ctx.eval(&next, 1), runtime::ContextFull) << "the next position would pass the largest";
}

}  // namespace
}  // namespace peak
