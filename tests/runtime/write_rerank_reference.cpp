// Writes a tiny reranker and runtime::Reranker's scores for a query and a few
// documents, for the C API's reranking test (tests/capi/test_capi_rerank.c),
// which checks that peak_rerank hands out the same scores:
//   write_rerank_reference bert|qwen3 <model.gguf> <reference.txt>
// bert: the tiny cross-encoder (rank pooling, its classification head);
// qwen3: a tiny Qwen3-Reranker (the yes/no rows, a prompt around the texts).
// reference.txt: the query on one line, the number of documents, the
// documents one per line, one score per document, then each pair's tokens.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/synth.h"
#include "runtime/reranker.h"
#include "tiny_models.h"

namespace {

// Short texts: the synthetic vocabulary spells most words letter by letter,
// and the tiny bert takes 64 tokens. The last pair is the longest (about 45).
const char* const kQuery = "cat";
const char* const kDocuments[] = {"a cat", "hello", "the notes on this device, the mat, the cat"};

}  // namespace

int main(int argc, char** argv) {
  const bool bert = argc == 4 && std::strcmp(argv[1], "bert") == 0;
  if (argc != 4 || (!bert && std::strcmp(argv[1], "qwen3") != 0)) {
    std::fprintf(stderr, "usage: write_rerank_reference bert|qwen3 <model.gguf> <reference.txt>\n");
    return 2;
  }
  peak::model::SynthSpec spec = peak::test::tiny_spec(bert ? peak::model::Arch::Bert : peak::model::Arch::Qwen3);
  spec.pooling = peak::model::Pooling::Rank;
  if (!bert) spec.rerank_prompt = "Query: {query}\nDocument: {document}</s>Relevant:";
  peak::model::SynthOptions opt;
  opt.seed = 7;
  opt.varied_norms = true;
  peak::model::write_synth_model(spec, opt, argv[2]);
  const auto model = peak::model::Model::load(argv[2]);
  const peak::tokenizer::Tokenizer& tokenizer = model->tokenizer();
  peak::runtime::Encoder encoder(*model);
  peak::runtime::Reranker reranker(encoder);
  std::vector<peak::runtime::PairInput> pairs;
  for (const char* text : kDocuments) {
    pairs.push_back(bert ? reranker.join(tokenizer.encode(kQuery, false, false), tokenizer.encode(text, false, false))
                         : reranker.fill(kQuery, text));
  }
  const std::vector<float> scores = reranker.score(pairs);
  std::FILE* f = std::fopen(argv[3], "w");
  if (!f) {
    std::perror(argv[3]);
    return 1;
  }
  std::fprintf(f, "%s\n%zu\n", kQuery, pairs.size());
  for (const char* text : kDocuments) std::fprintf(f, "%s\n", text);
  for (const float score : scores) std::fprintf(f, "%.9g\n", static_cast<double>(score));
  for (const peak::runtime::PairInput& pair : pairs) std::fprintf(f, "%zu\n", pair.tokens.size());
  return std::fclose(f) == 0 ? 0 : 1;
}
