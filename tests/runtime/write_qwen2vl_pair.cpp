// Writes a tiny Qwen2.5-VL pair for the C API's and the CLI's tests
// (tests/capi, tests/tools): a qwen2vl language model (the tiny qwen2 with
// multimodal rotary positions, 64 wide) and Qwen2.5-VL's tiny image encoder
// made 64 wide at its output (pictures of their own size, at most 64 tokens):
//   write_qwen2vl_pair <model.gguf> <mmproj.gguf>
#include <cstdio>
#include <exception>

#include "model/synth.h"
#include "tiny_models.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_qwen2vl_pair <model.gguf> <mmproj.gguf>\n");
    return 2;
  }
  try {
    peak::model::SynthOptions opt;
    opt.seed = 7;
    opt.varied_norms = true;
    peak::model::write_synth_model(peak::test::tiny_spec(peak::model::Arch::Qwen2VL), opt, argv[1]);
    peak::model::SynthSpec projector = peak::test::tiny_spec(peak::model::Arch::Qwen25Vision);
    projector.n_embd_out = 64;
    peak::model::write_synth_model(projector, opt, argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_qwen2vl_pair: %s\n", e.what());
    return 1;
  }
  return 0;
}
