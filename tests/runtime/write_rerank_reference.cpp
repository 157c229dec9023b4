// Writes the tiny bert reranker (rank pooling, its classification head) and
// runtime::Reranker's scores for a query and a few documents, for the C
// API's reranking test (tests/capi/test_capi_rerank.c), which checks that
// peak_rerank hands out the same scores:
//   write_rerank_reference <model.gguf> <reference.txt>
// reference.txt: the query on one line, the number of documents, the
// documents one per line, then one score per document.
#include <cstdio>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/synth.h"
#include "runtime/reranker.h"
#include "tiny_models.h"

namespace {

// Short texts: the synthetic vocabulary spells most words letter by letter,
// and the tiny model takes 64 tokens. The last pair is the longest (about 45).
const char* const kQuery = "cat";
const char* const kDocuments[] = {"a cat", "hello", "the notes on this device, the mat, the cat"};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_rerank_reference <model.gguf> <reference.txt>\n");
    return 2;
  }
  peak::model::SynthSpec spec = peak::test::tiny_spec(peak::model::Arch::Bert);
  spec.pooling = peak::model::Pooling::Rank;
  peak::model::SynthOptions opt;
  opt.seed = 7;
  opt.varied_norms = true;
  peak::model::write_synth_model(spec, opt, argv[1]);
  const auto model = peak::model::Model::load(argv[1]);
  const peak::tokenizer::Tokenizer& tokenizer = model->tokenizer();
  std::vector<std::vector<int32_t>> documents;
  for (const char* text : kDocuments) documents.push_back(tokenizer.encode(text, false, false));
  peak::runtime::Encoder encoder(*model);
  peak::runtime::Reranker reranker(encoder);
  const std::vector<float> scores = reranker.score(tokenizer.encode(kQuery, false, false), documents);
  std::FILE* f = std::fopen(argv[2], "w");
  if (!f) {
    std::perror(argv[2]);
    return 1;
  }
  std::fprintf(f, "%s\n%zu\n", kQuery, documents.size());
  for (const char* text : kDocuments) std::fprintf(f, "%s\n", text);
  for (const float score : scores) std::fprintf(f, "%.9g\n", static_cast<double>(score));
  return std::fclose(f) == 0 ? 0 : 1;
}
