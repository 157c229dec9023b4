// The abort flag of generate(), set from another thread while it runs: read with
// an atomic load, it is no data race (ThreadSanitizer reported one while the
// generator read it as a plain volatile int), and generation stops promptly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "model/model.h"
#include "runtime/generator.h"

namespace peak::runtime {
namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf");
  return *m;
}

// Generates from stories260K until stopped; `stop` runs on another thread 30 ms
// after the first token is out (a store before then, while the prompt is
// evaluated, would cancel the call instead: test_prefill_cancel.cpp).
GenerateResult generate_until_stopped(GenerateOptions o, const std::function<void()>& stop) {
  ContextParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  Context ctx(stories(), p);
  sampling::SamplerParams sp;
  sp.temperature = 0.0f;
  sampling::SamplerChain sampler(static_cast<int32_t>(stories().hparams().n_vocab), sp);
  o.max_tokens = -1;
  o.stop_at_eog = false;
  std::atomic<bool> generating{false};
  // Slow enough that the other thread's store lands while tokens are generated.
  o.on_text = [&generating](const std::string&) {
    generating = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return true;
  };
  std::thread stopper([&generating, &stop] {
    while (!generating) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    stop();
  });
  GenerateResult r;
  try {
    r = generate(ctx, sampler, {1}, o);
  } catch (...) {
    generating = true;
    stopper.join();
    throw;
  }
  stopper.join();
  return r;
}

TEST(Generate, TheCApiAbortFlagStoredFromAnotherThreadStopsIt) {
  volatile int flag = 0;  // the C API's type
  GenerateOptions o;
  o.abort_flag = &flag;
  // The store peak.h documents.
  const GenerateResult r = generate_until_stopped(o, [&flag] { __atomic_store_n(&flag, 1, __ATOMIC_RELAXED); });
  EXPECT_EQ(r.reason, StopReason::Aborted);
  EXPECT_LT(r.n_generated, 500);
}

TEST(Generate, AnAtomicCancelStoredFromAnotherThreadStopsIt) {
  std::atomic<int> cancel{0};
  GenerateOptions o;
  o.cancel = &cancel;
  const GenerateResult r = generate_until_stopped(o, [&cancel] { cancel = 1; });
  EXPECT_EQ(r.reason, StopReason::Aborted);
  EXPECT_LT(r.n_generated, 500);
}

}  // namespace
}  // namespace peak::runtime
