// Q4_0 matrices repacked by 1, 2 or 3 threads (model/weight_repack.h), at load
// time or in the background, give the logits of the stored layout bit for bit,
// with feed-forward matrices large enough (2.4 MB) that the threads split them
// into pieces.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernels.h"
#include "model/model.h"
#include "model/synth.h"
#include "runtime/context.h"
#include "tiny_models.h"

namespace peak {

using kernels::GgmlType;
using kernels::kernels_for;

namespace {

const std::vector<int32_t> kPrompt = {1, 17, 250, 3, 99, 42, 7, 280, 64, 5, 5, 123, 200, 11};

// A llama whose feed-forward matrices (8192 rows of 512 and 512 rows of 8192
// Q4_0 elements) each span two of the repacking's 2 MiB pieces; 320 tokens, so
// the separate output matrix is repacked too.
std::string write_wide_model() {
  model::SynthSpec spec = test::tiny_spec(model::Arch::Llama);
  spec.n_layer = 1;
  spec.n_embd = 512;
  spec.n_head = 8;
  spec.n_head_kv = 4;
  spec.head_dim = 64;
  spec.n_ff = 8192;
  spec.n_vocab = 320;
  model::SynthOptions opt;
  opt.seed = 3;
  opt.varied_norms = true;
  opt.tensor_type = [](const std::string&, int64_t) { return GgmlType::Q4_0; };
  const std::string path = test::test_temp_path("wide_llama_Q4_0.gguf");
  model::write_synth_model(spec, opt, path);
  return path;
}

// Prefill logits, then those of three decoded tokens.
std::vector<float> logits_of(const model::Model& m) {
  runtime::ContextParams params;
  params.n_ctx = 32;
  params.n_threads = 2;
  runtime::Context c(m, params);
  std::vector<float> all;
  c.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
  for (int32_t next : {9, 250, 3}) {
    all.insert(all.end(), c.logits(), c.logits() + c.n_vocab());
    c.eval(&next, 1);
  }
  all.insert(all.end(), c.logits(), c.logits() + c.n_vocab());
  return all;
}

// logits_of the model at `path` read in the file's layout.
std::vector<float> stored_layout_logits(const std::string& path) {
  model::LoadOptions stored_layout;
  stored_layout.repack_weights = false;
  return logits_of(*model::Model::load(path, stored_layout));
}

TEST(ParallelRepack, AnyThreadCountGivesTheStoredLayoutsLogits) {
  if (kernels_for(GgmlType::Q4_0).repack == nullptr) GTEST_SKIP() << "this path reads Q4_0 as stored";
  const std::string path = write_wide_model();
  const std::vector<float> want = stored_layout_logits(path);
  for (const int n_threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(n_threads) + " load threads");
    model::LoadOptions options;
    options.n_threads = n_threads;
    const auto m = model::Model::load(path, options);
    const model::LayerWeights& l = m->weights().layers[0];
    for (const core::Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down, m->weights().output}) {
      EXPECT_NE(t->repacked_bytes(), nullptr) << t->name;
    }
    const std::vector<float> got = logits_of(*m);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "logit " << i;
  }
}

// Repacking in the background: contexts that run meanwhile read each matrix as
// stored until it is published, and the logits stay those of the stored layout
// bit for bit, before, during and after.
TEST(ParallelRepack, BackgroundRepackingChangesNoLogits) {
  if (kernels_for(GgmlType::Q4_0).repack == nullptr) GTEST_SKIP() << "this path reads Q4_0 as stored";
  const std::string path = write_wide_model();
  const std::vector<float> want = stored_layout_logits(path);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    model::LoadOptions options;
    options.repack_in_background = true;
    const auto m = model::Model::load(path, options);
    ASSERT_EQ(logits_of(*m), want);  // races the repacking
    m->wait_for_repack();
    EXPECT_TRUE(m->repack_finished());
    EXPECT_NE(m->weights().layers[0].ffn_up->repacked_bytes(), nullptr);
    ASSERT_EQ(logits_of(*m), want);
  }
}

// A model destroyed while it repacks in the background stops the threads.
TEST(ParallelRepack, ModelDestroyedWhileRepackingInTheBackground) {
  if (kernels_for(GgmlType::Q4_0).repack == nullptr) GTEST_SKIP() << "this path reads Q4_0 as stored";
  const std::string path = write_wide_model();
  model::LoadOptions options;
  options.repack_in_background = true;
  for (int i = 0; i < 5; ++i) model::Model::load(path, options).reset();
}

#if defined(__linux__)
// The permissions /proc/self/maps gives the page holding `address` ("r--p"...).
std::string page_permissions(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    const size_t dash = range.find('-');
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a >= begin && a < end) return perms;
  }
  return "";
}

// The stored pages of a repacked matrix are made unreadable only once no
// forward pass that began before its publication can still read them.
TEST(ParallelRepack, StoredPagesStayReadableWhileAPassMayReadThem) {
  if (kernels_for(GgmlType::Q4_0).repack == nullptr) GTEST_SKIP() << "this path reads Q4_0 as stored";
  const std::string path = write_wide_model();
  model::LoadOptions options;
  options.repack_in_background = true;
  const auto m = model::Model::load(path, options);
  // The middle of ffn_up's stored rows: whole pages, away from its neighbours.
  const core::Tensor& up = *m->weights().layers[0].ffn_up;
  const auto* middle = static_cast<const uint8_t*>(up.data) + up.byte_size() / 2;
  {
    const model::Model::ForwardPass pass(*m);
    m->wait_for_repack();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(page_permissions(middle).substr(0, 1), "r");
    volatile uint8_t read = *middle;  // would fault once released
    (void)read;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (page_permissions(middle).substr(0, 1) == "r" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(page_permissions(middle).substr(0, 3), "---");
}
#endif

}  // namespace
}  // namespace peak
