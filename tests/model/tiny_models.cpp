#include "tiny_models.h"

#include <gtest/gtest.h>

namespace peak::test {

model::SynthSpec tiny_spec(model::Arch arch) {
  model::SynthSpec s;
  s.arch = arch;
  s.n_layer = 2;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = arch == model::Arch::Qwen3 ? 32 : 16;  // qwen3: head size not n_embd / n_head
  s.n_ff = 96;
  s.n_vocab = 300;
  s.tied_output = arch != model::Arch::Llama;
  s.rope_base = arch == model::Arch::Llama ? 10000.0f : 1000000.0f;
  return s;
}

std::string write_tiny_model(model::Arch arch, GgmlType matrix_type) {
  const std::string path = ::testing::TempDir() + "peak_tiny_" + model::arch_name(arch) + "_" +
                           ggml_type_name(static_cast<uint32_t>(matrix_type)) + ".gguf";
  model::SynthOptions opt;
  opt.seed = 7;
  opt.tensor_type = [matrix_type](const std::string&, int64_t) { return matrix_type; };
  model::write_synth_model(tiny_spec(arch), opt, path);
  return path;
}

}  // namespace peak::test
