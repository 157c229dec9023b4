// A prompt's evaluation stops where its cancellation is requested, between
// batches or inside one, and leaves the context as it was: the same cells and
// the same last logits, so the next evaluation gives bit for bit what a fresh
// context gives. generate() then throws Cancelled before anything is sampled.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/model.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "tiny_models.h"

namespace peak::runtime {
namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(test::stories_path());
  return *m;
}

constexpr int64_t kBatch = 8;

ContextParams params() {
  ContextParams p;
  p.n_ctx = 256;
  p.n_batch = kBatch;
  p.n_threads = 2;
  return p;
}

std::vector<int32_t> long_prompt() {
  std::vector<int32_t> tokens;
  for (int i = 0; i < 200; ++i) tokens.push_back(static_cast<int32_t>(2 + (i * 37) % 500));
  return tokens;
}

std::vector<float> last_logits(const Context& ctx) { return std::vector<float>(ctx.logits(), ctx.logits() + ctx.n_vocab()); }

// Requested once the cache holds `cells` cells more than at the start: the
// poll runs on the evaluating thread (thread 0), which may read the cache.
struct StopAtCells {
  const Context* ctx;
  int64_t cells;
  int polls_after = 0;  // polls once requested: one, if the evaluation stops at once
  static bool poll(const void* self) {
    auto* s = const_cast<StopAtCells*>(static_cast<const StopAtCells*>(self));
    const bool stop = s->ctx->kv().used() >= s->cells;
    if (stop) ++s->polls_after;
    return stop;
  }
};

uint64_t mul_mats(const Context& ctx) { return ctx.op_times().calls[static_cast<int>(core::Op::MulMat)]; }

TEST(PrefillCancel, StopsInsideTheBatchThatSawItAndLeavesTheContextAsItWas) {
  const std::vector<int32_t> prompt = long_prompt();
  const std::vector<int32_t> start = {1, 400, 300};
  Context ctx(stories(), params());
  ctx.eval(start.data(), static_cast<int64_t>(start.size()));
  const std::vector<float> logits_before = last_logits(ctx);

  // The matrix products of one batch, counted by profiling a whole one.
  ctx.set_profiling(true);
  Context probe(stories(), params());
  probe.set_profiling(true);
  probe.eval(prompt.data(), kBatch);
  const uint64_t per_batch = mul_mats(probe);
  ASSERT_GT(per_batch, 0u);

  // Requested while the third of 25 batches runs (the cache then holds its cells).
  StopAtCells stop{&ctx, static_cast<int64_t>(start.size()) + 3 * kBatch};
  const core::Cancellation cancel(StopAtCells::poll, &stop);
  EXPECT_THROW(ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()), nullptr, &cancel), Cancelled);
  EXPECT_EQ(stop.polls_after, 1);
  // Two whole batches and part of the third ran; none of the 22 after it.
  EXPECT_GE(mul_mats(ctx), 2 * per_batch);
  EXPECT_LT(mul_mats(ctx), 3 * per_batch);

  EXPECT_EQ(ctx.kv().used(), static_cast<int64_t>(start.size()));
  EXPECT_EQ(last_logits(ctx), logits_before);

  // The context goes on as if the cancelled call had never been made.
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  Context fresh(stories(), params());
  fresh.eval(start.data(), static_cast<int64_t>(start.size()));
  fresh.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(last_logits(ctx), last_logits(fresh));
}

TEST(PrefillCancel, ARequestBeforeTheFirstBatchEvaluatesNothing) {
  Context ctx(stories(), params());
  ctx.set_profiling(true);
  StopAtCells stop{&ctx, 0};
  const core::Cancellation cancel(StopAtCells::poll, &stop);
  const std::vector<int32_t> prompt = long_prompt();
  EXPECT_THROW(ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()), nullptr, &cancel), Cancelled);
  EXPECT_EQ(stop.polls_after, 1);
  EXPECT_EQ(mul_mats(ctx), 0u);
  EXPECT_EQ(ctx.kv().used(), 0);
}

TEST(PrefillCancel, GenerateThrowsCancelledForAStopDuringThePromptAndAbortsAfterIt) {
  const std::vector<int32_t> prompt = long_prompt();
  sampling::SamplerParams sp;
  sp.temperature = 0.0f;
  Context ctx(stories(), params());
  sampling::SamplerChain sampler(static_cast<int32_t>(stories().hparams().n_vocab), sp);
  volatile int flag = 1;  // set before the call: nothing is evaluated
  GenerateOptions o;
  o.max_tokens = 8;
  o.abort_flag = &flag;
  EXPECT_THROW(generate(ctx, sampler, prompt, o), Cancelled);
  EXPECT_EQ(ctx.kv().used(), 0);
  std::atomic<int> cancel{1};
  o.abort_flag = nullptr;
  o.cancel = &cancel;
  EXPECT_THROW(generate(ctx, sampler, prompt, o), Cancelled);
  EXPECT_EQ(ctx.kv().used(), 0);

  // Set by the first piece of text: the prompt is done, generation aborts.
  cancel = 0;
  int pieces = 0;
  o.on_text = [&](const std::string&) {
    ++pieces;
    cancel = 1;
    return true;
  };
  const GenerateResult r = generate(ctx, sampler, prompt, o);
  EXPECT_EQ(r.reason, StopReason::Aborted);
  EXPECT_EQ(pieces, 1);
  EXPECT_EQ(r.n_generated, 1);
  EXPECT_EQ(ctx.kv().used(), static_cast<int64_t>(prompt.size()) + 1);
}

}  // namespace
}  // namespace peak::runtime
