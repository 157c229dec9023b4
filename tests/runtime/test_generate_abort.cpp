// The abort flag of generate(), set from another thread while it runs: read with
// an atomic load, it is no data race (ThreadSanitizer reported one while the
// generator read it as a plain volatile int), and generation stops promptly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

GenerateResult generate_until_stopped(const GenerateOptions& stop, std::thread& stopper) {
  ContextParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  Context ctx(stories(), p);
  sampling::SamplerParams sp;
  sp.temperature = 0.0f;
  sampling::SamplerChain sampler(static_cast<int32_t>(stories().hparams().n_vocab), sp);
  GenerateOptions o = stop;
  o.max_tokens = -1;
  o.stop_at_eog = false;
  // Slow enough that the other thread's store lands while tokens are generated.
  o.on_text = [](const std::string&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return true;
  };
  const GenerateResult r = generate(ctx, sampler, {1}, o);
  stopper.join();
  return r;
}

TEST(Generate, TheCApiAbortFlagStoredFromAnotherThreadStopsIt) {
  volatile int flag = 0;  // the C API's type
  std::thread stopper([&flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    __atomic_store_n(&flag, 1, __ATOMIC_RELAXED);  // the store peak.h documents
  });
  GenerateOptions o;
  o.abort_flag = &flag;
  const GenerateResult r = generate_until_stopped(o, stopper);
  EXPECT_EQ(r.reason, StopReason::Aborted);
  EXPECT_LT(r.n_generated, 500);
}

TEST(Generate, AnAtomicCancelStoredFromAnotherThreadStopsIt) {
  std::atomic<int> cancel{0};
  std::thread stopper([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancel = 1;
  });
  GenerateOptions o;
  o.cancel = &cancel;
  const GenerateResult r = generate_until_stopped(o, stopper);
  EXPECT_EQ(r.reason, StopReason::Aborted);
  EXPECT_LT(r.n_generated, 500);
}

}  // namespace
}  // namespace peak::runtime
