// Once a context exists, evaluating tokens touches no heap memory, for every
// architecture: per-layer rope settings and windows, fused-matrix views, soft-
// caps, the LongRoPE factors and adapters all live in the graph arena and the
// reserved buffers. This binary replaces the global operator new to count allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "model/synth_lora.h"
#include "runtime/context.h"
#include "runtime/draft_model.h"
#include "runtime/pass_group.h"
#include "tiny_models.h"

namespace peak {

using kernels::ggml_type_name;
using kernels::GgmlType;

namespace {

int* volatile g_probe = nullptr;  // volatile: the probe allocations cannot be elided
void* volatile g_aligned_probe = nullptr;

TEST(RuntimeNoAllocHook, CountsPlainAndAlignedAllocations) {
  test::AllocationScope scope;
  g_probe = new int(7);
  g_aligned_probe = ::operator new(100, std::align_val_t{64});
  const test::AllocationStats stats = scope.stats();
  delete g_probe;
  ::operator delete(g_aligned_probe, std::align_val_t{64});
  EXPECT_EQ(stats.bytes, sizeof(int) + 100);
  EXPECT_EQ(stats.largest, 100u);
}

class RuntimeNoAlloc : public ::testing::TestWithParam<model::Arch> {};

// A small context: 64 cells, batches of 8, two threads.
runtime::ContextParams small_context(int64_t max_logit_rows = 1) {
  runtime::ContextParams params;
  params.n_ctx = 64;
  params.n_batch = 8;
  params.n_threads = 2;
  params.max_logit_rows = max_logit_rows;
  return params;
}

TEST_P(RuntimeNoAlloc, PrefillAndDecodeAllocateNothing) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F16));
  runtime::Context ctx(*m, small_context());
  const std::vector<int32_t> prompt = {1, 17, 250, 3, 99, 42, 7, 280, 64, 5, 5, 123, 200};  // two batches
  test::AllocationScope scope;
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  for (int32_t token = 20; token < 40; ++token) ctx.eval(&token, 1);  // past the tiny gemmas' window of 8
  EXPECT_EQ(scope.stats().bytes, 0u) << "largest request " << scope.stats().largest;
}

// Speculative decoding's passes: a token with its draft, the logits of each,
// and the refused part of the draft dropped again.
TEST_P(RuntimeNoAlloc, VerifyingDraftsAllocatesNothing) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F16));
  runtime::Context ctx(*m, small_context(5));
  const std::vector<int32_t> prompt = {1, 17, 250, 3, 99, 42, 7};
  const std::vector<int32_t> drafted = {20, 21, 22, 23, 24};
  std::vector<float> rows(5 * static_cast<size_t>(ctx.n_vocab()));
  test::AllocationScope scope;
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  for (int step = 0; step < 6; ++step) {
    ctx.eval_last_rows(drafted.data(), 5, 5, rows.data());
    ctx.drop_last(3, rows.data() + ctx.n_vocab());
  }
  EXPECT_EQ(scope.stats().bytes, 0u) << "largest request " << scope.stats().largest;
  EXPECT_EQ(ctx.kv().used(), static_cast<int64_t>(prompt.size()) + 6 * 2);
}

// A draft model follows a growing text (evaluating what is new), drafts
// after it and follows again after a refusal, in its reserved cells.
TEST_P(RuntimeNoAlloc, DraftModelFollowsWithoutAllocating) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F16));
  runtime::DraftModel draft(*m, small_context());
  std::vector<int32_t> text = {1, 17, 250, 3, 99, 42, 7};
  text.reserve(64);
  draft.follow(text.data(), text.size(), 4);
  test::AllocationScope scope;
  for (int32_t step = 0; step < 8; ++step) {
    draft.push(30 + step);  // drafted, then refused: the text goes on with another token
    draft.push(31 + step);
    text.push_back(60 + step);
    draft.follow(text.data(), text.size(), 4);
  }
  EXPECT_EQ(scope.stats().bytes, 0u) << "largest request " << scope.stats().largest;
  EXPECT_EQ(draft.tokens(), text);
}

// Two contexts stepping in passes they share (runtime::PassGroup), each from
// its own thread, prompts in chunks beside the other's steps. The tiny
// model's passes take microseconds, so one stream may finish before the other
// starts: rounds go on until one had a pass with both.
TEST_P(RuntimeNoAlloc, SharedPassesAllocateNothing) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F16));
  runtime::PassGroupParams gp;
  gp.n_ctx = 64;
  gp.max_sequences = 2;
  gp.prefill_chunk = 8;
  gp.n_threads = 2;
  gp.gather_wait = std::chrono::milliseconds(200);
  runtime::PassGroup group(*m, gp);
  runtime::ContextParams params = small_context();
  params.pass_group = &group;
  const std::vector<int32_t> prompt = {1, 17, 250, 3, 99, 42, 7, 280, 64, 5, 5, 123, 200};  // two chunks
  for (int round = 0; round < 20 && group.stats().passes_by_sequences[1] == 0; ++round) {
    runtime::Context first(*m, params);
    runtime::Context second(*m, params);
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
    auto stream = [&](runtime::Context* ctx, int32_t offset) {
      for (++started; started.load() < 3;) std::this_thread::yield();
      ctx->eval(prompt.data(), static_cast<int64_t>(prompt.size()));
      for (int32_t token = 20; token < 40; ++token) {
        const int32_t id = token + offset;
        ctx->eval(&id, 1);
      }
      ++finished;
    };
    std::thread a(stream, &first, 0);
    std::thread b(stream, &second, 100);
    {
      test::AllocationScope scope;
      ++started;
      while (finished.load() < 2) std::this_thread::sleep_for(std::chrono::microseconds(100));
      EXPECT_EQ(scope.stats().bytes, 0u) << "largest request " << scope.stats().largest;
    }
    a.join();
    b.join();
  }
  EXPECT_GT(group.stats().passes_by_sequences[1], 0u) << "no pass took both sequences";
}

// With two LoRA adapters (F16 and Q8_0), set after the context was made:
// their products live in the reserved buffers too.
TEST_P(RuntimeNoAlloc, AdaptersAllocateNothing) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F16));
  runtime::Adapters adapters;
  for (const GgmlType type : {GgmlType::F16, GgmlType::Q8_0}) {
    model::SynthLoraSpec spec;
    spec.rank = 32;
    spec.type = type;
    const std::string path = test::test_temp_path(std::string("lora_") + ggml_type_name(static_cast<uint32_t>(type)));
    model::write_synth_lora(m->file(), spec, path);
    adapters.loras.push_back({model::LoraAdapter::load(*m, path), 0.5f});
  }
  runtime::Context ctx(*m, small_context());
  ctx.set_adapters(adapters);
  const std::vector<int32_t> prompt = {1, 17, 250, 3, 99, 42, 7, 280, 64, 5, 5, 123, 200};  // two batches
  test::AllocationScope scope;
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  for (int32_t token = 20; token < 40; ++token) ctx.eval(&token, 1);
  EXPECT_EQ(scope.stats().bytes, 0u) << "largest request " << scope.stats().largest;
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, RuntimeNoAlloc,
                         ::testing::Values(model::Arch::Llama, model::Arch::Qwen2, model::Arch::Qwen3,
                                           model::Arch::Gemma2, model::Arch::Gemma3, model::Arch::Phi3,
                                           model::Arch::SmolLM3),
                         [](const auto& param_info) { return std::string(model::arch_name(param_info.param)); });

}  // namespace
}  // namespace peak
