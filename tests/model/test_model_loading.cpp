// Loading a model refuses what it cannot run, naming it, and a progress callback
// can cancel a load, also while threads repack its weights.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "tiny_models.h"

namespace peak {

using kernels::GgmlType;
using kernels::kernels_for;

namespace {

using test::tiny_spec;
using test::write_tiny_model;

TEST(ModelLoading, RefusesUnknownArchitecturesMissingTensorsAndWrongShapes) {
  model::SynthOptions opt;
  const std::string path = ::testing::TempDir() + "peak_bad_model.gguf";
  // Build a valid tiny llama, then rewrite it with one thing wrong at a time.
  model::write_synth_model(tiny_spec(model::Arch::Llama), opt, path);
  const auto good = gguf::GgufFile::open(path);
  auto rewrite = [&](const std::string& skip_tensor, const std::string& arch, int64_t reshape_q) {
    gguf::GgufWriter w;
    for (size_t i = 0; i < good->n_kv(); ++i) w.copy_value(good->value(i));
    if (!arch.empty()) w.set_string("general.architecture", arch);
    for (size_t i = 0; i < good->n_tensors(); ++i) {
      const gguf::TensorInfo& t = good->tensor(i);
      if (t.name == skip_tensor) continue;
      int64_t ne[4] = {t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
      if (reshape_q && t.name == "blk.1.attn_q.weight") ne[0] = reshape_q, ne[1] = t.n_elements() / reshape_q;
      w.add_tensor(t.name, t.type, t.n_dims, ne, t.data);
    }
    const std::string out = path + ".bad.gguf";
    w.write_file(out);
    return out;
  };
  auto load_error = [](const std::string& p) -> std::string {
    try {
      model::Model::load(p);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(load_error(rewrite("", "mamba", 0)).find("unsupported architecture 'mamba'"), std::string::npos);
  EXPECT_NE(load_error(rewrite("blk.1.ffn_up.weight", "", 0)).find("lacks tensor 'blk.1.ffn_up.weight'"), std::string::npos);
  EXPECT_NE(load_error(rewrite("", "", 32)).find("tensor 'blk.1.attn_q.weight' has shape [32, 128], expected [64, 64]"),
            std::string::npos);
  EXPECT_NE(load_error(rewrite("", "qwen2", 0)).find("lacks 'qwen2.context_length'"), std::string::npos);
}

TEST(ModelLoading, ProgressCallbackCanCancel) {
  const std::string path = write_tiny_model(model::Arch::Llama, GgmlType::F32);
  model::LoadOptions options;
  int calls = 0;
  options.progress = [&](float) { return ++calls < 3; };
  EXPECT_THROW(model::Model::load(path, options), model::LoadCancelled);
  EXPECT_EQ(calls, 3);
}

// Cancelling, or throwing, from the progress callback while threads repack Q4_0
// matrices stops the load with that error: on one thread after the first piece,
// on three wherever the calling thread reports next.
TEST(ModelLoading, ProgressCallbackCanStopTheRepacking) {
  if (kernels_for(GgmlType::Q4_0).repack == nullptr) GTEST_SKIP() << "this path reads Q4_0 as stored";
  const std::string path = write_tiny_model(model::Arch::Llama, GgmlType::Q4_0);
  // Calls before the repacking: the first, then one per tensor read as stored.
  const auto loaded = model::Model::load(path);
  int before = 1 + static_cast<int>(loaded->file().n_tensors());
  for (const model::LayerWeights& l : loaded->weights().layers) {
    for (const core::Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) before -= t->repacked_bytes() != nullptr;
  }
  ASSERT_LT(before, 1 + static_cast<int>(loaded->file().n_tensors()));
  for (const int n_threads : {1, 3}) {
    SCOPED_TRACE(std::to_string(n_threads) + " load threads");
    model::LoadOptions options;
    options.n_threads = n_threads;
    int calls = 0;
    options.progress = [&](float) { return ++calls <= before; };
    EXPECT_THROW(model::Model::load(path, options), model::LoadCancelled);
    EXPECT_EQ(calls, before + 1);
    calls = 0;
    options.progress = [&](float) {
      if (++calls > before) throw std::runtime_error("stopped while repacking");
      return true;
    };
    try {
      model::Model::load(path, options);
      ADD_FAILURE() << "the load went on";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "stopped while repacking");
    }
  }
}

TEST(ModelLoading, RefusesLoadThreadCountsOutOfRange) {
  const std::string path = write_tiny_model(model::Arch::Llama, GgmlType::Q4_0);
  for (const int n_threads : {-1, model::kMaxLoadThreads + 1}) {
    model::LoadOptions options;
    options.n_threads = n_threads;
    EXPECT_THROW(model::Model::load(path, options), std::invalid_argument) << n_threads;
  }
}

}  // namespace
}  // namespace peak
