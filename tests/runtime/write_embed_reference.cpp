// Writes the tiny bert model and what runtime::Encoder makes of a few texts,
// for the C API's embedding test (tests/capi/test_capi_embed.c), which checks
// that peak_embed hands out the same vectors:
//   write_embed_reference <model.gguf> <reference.txt>
// reference.txt: the number of texts, the texts one per line, then three cases
// ("mean_normalized": the model's pooling, normalised; "cls_raw": CLS pooling,
// not normalised; "none_normalized": every token's vector), each its name, its
// float count and the floats.
#include <cstdio>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/synth.h"
#include "runtime/encoder.h"
#include "tiny_models.h"

namespace {

const char* const kTexts[] = {"the cat sat on the mat", "hello", "search the notes on this device for the recipe"};

void write_case(std::FILE* f, const char* name, const std::vector<std::vector<float>>& vectors) {
  size_t n = 0;
  for (const auto& v : vectors) n += v.size();
  std::fprintf(f, "%s %zu\n", name, n);
  for (const auto& v : vectors) {
    for (const float x : v) std::fprintf(f, "%.9g\n", static_cast<double>(x));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_embed_reference <model.gguf> <reference.txt>\n");
    return 2;
  }
  using peak::model::Pooling;
  peak::model::SynthOptions opt;
  opt.seed = 7;
  opt.varied_norms = true;
  peak::model::write_synth_model(peak::test::tiny_spec(peak::model::Arch::Bert), opt, argv[1]);
  const auto model = peak::model::Model::load(argv[1]);
  std::vector<std::vector<int32_t>> sequences;
  for (const char* text : kTexts) sequences.push_back(model->tokenizer().encode(text, true, false));
  peak::runtime::Encoder encoder(*model);
  std::FILE* f = std::fopen(argv[2], "w");
  if (!f) {
    std::perror(argv[2]);
    return 1;
  }
  std::fprintf(f, "%zu\n", sequences.size());
  for (const char* text : kTexts) std::fprintf(f, "%s\n", text);
  write_case(f, "mean_normalized", encoder.embed(sequences));
  write_case(f, "cls_raw", encoder.embed(sequences, {Pooling::Cls, false}));
  write_case(f, "none_normalized", encoder.embed(sequences, {Pooling::None, true}));
  return std::fclose(f) == 0 ? 0 : 1;
}
