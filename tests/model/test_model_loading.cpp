// Loading a model refuses what it cannot run, naming it, and a progress callback
// can cancel a load.
#include <gtest/gtest.h>

#include <string>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "tiny_models.h"

namespace peak {
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

}  // namespace
}  // namespace peak
