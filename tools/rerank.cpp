// peak rerank -m MODEL --query TEXT (-p DOCUMENT ... | -f FILE): documents
// ordered by how relevant a reranker (a cross-encoder such as ms-marco-MiniLM
// or ms-marco-TinyBERT, or Qwen3-Reranker) finds them to the query, through
// peak_rerank.
//
// Output on stdout, JSON in the shape of the rerank APIs (llama.cpp's
// /v1/rerank, Jina's, Cohere's):
//   {"results": [{"index": 2, "relevance_score": 3.25, "document": {"text": "..."}}, ...]}
// best first (equal scores in the order given), the --top-n best only.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "openai_response.h"
#include "input_file.h"
#include "text_format.h"

namespace {

struct RerankOptions {
  std::string model_path;
  std::string query;
  bool has_query = false;
  std::vector<std::string> documents;
  std::string file;
  bool from_prompt = false;
  size_t top_n = 0;  // 0: all
  peak_rerank_params rerank = peak_rerank_default_params();
  peak_embedder_params embedder = peak_embedder_default_params();
};

void print_help() {
  std::printf(
      "usage: peak rerank -m MODEL --query TEXT (-p DOCUMENT ... | -f FILE) [options]\n"
      "  Orders documents by how relevant a reranker finds them to the query: a bert cross-encoder\n"
      "  (ms-marco-MiniLM, ms-marco-TinyBERT ...) scores [CLS] query [SEP] document [SEP] (a logit);\n"
      "  Qwen3-Reranker the two in its prompt (the probability of \"yes\").\n"
      "  Prints {\"results\": [{\"index\", \"relevance_score\", \"document\": {\"text\"}}, ...]}, best first.\n"
      "  -m, --model FILE          the GGUF reranker (pooling type rank)\n"
      "  -q, --query TEXT          the query\n"
      "  -p, --prompt TEXT         a document; give -p once per document\n"
      "  -f, --file FILE           the documents, one per line ('-': standard input); an empty line is refused\n"
      "  --top-n N                 print the N best only (default: all)\n"
      "  --sigmoid                 a logit as 1 / (1 + e^-logit), in (0, 1) (default: the logit, as llama.cpp)\n"
      "  -t, --threads N           threads (default: the fast cores this process may use)\n"
      "  -b, --batch-size N        tokens per forward pass, the longest query and document (default: the\n"
      "                            model's context)\n"
      "  Errors name a document by its index from 0: document i is the i-th -p, or line i+1 of the file.\n");
}

RerankOptions parse(int argc, char** argv, bool* help) {
  RerankOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.model_path = args.value(a);
    } else if (!std::strcmp(a, "-q") || !std::strcmp(a, "--query")) {
      if (o.has_query) throw UsageError("give --query once");
      o.query = args.value(a);
      o.has_query = true;
    } else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--prompt")) {
      o.documents.emplace_back(args.value(a));
      o.from_prompt = true;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      if (!o.file.empty()) throw UsageError("give -f once");
      o.file = args.value(a);
    } else if (!std::strcmp(a, "--top-n")) {
      o.top_n = static_cast<size_t>(args.integer(a, 1, 1 << 30));
    } else if (!std::strcmp(a, "--sigmoid")) {
      o.rerank.sigmoid = 1;
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.embedder.n_threads = static_cast<size_t>(args.integer(a, 1, 64));
    } else if (!std::strcmp(a, "-b") || !std::strcmp(a, "--batch-size")) {
      o.embedder.n_batch = static_cast<size_t>(args.integer(a, 1, 1 << 20));
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak rerank --help)");
    }
  }
  if (o.model_path.empty()) throw UsageError("no model given (-m MODEL)");
  if (!o.has_query) throw UsageError("no query given (--query TEXT)");
  if (!o.from_prompt && o.file.empty()) throw UsageError("no document given (-p DOCUMENT or -f FILE)");
  if (o.from_prompt && !o.file.empty()) throw UsageError("give the documents once: -p and -f exclude each other");
  return o;
}

}  // namespace

int run_rerank(int argc, char** argv) {
  bool help = false;
  RerankOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  if (!o.file.empty()) o.documents = read_text_lines(o.file);

  const LoadedEmbedder loaded = load_embedder(o.model_path, o.embedder);
  const TextViews documents = text_views(o.documents);
  std::vector<float> scores(o.documents.size());
  check_status(peak_rerank(loaded.embedder.get(), o.query.data(), o.query.size(), documents.texts.data(),
                           documents.lengths.data(), scores.size(), &o.rerank, scores.data()));

  // The order of peak serve's /v1/rerank.
  const std::vector<size_t> order = peak_server::rerank_order(scores, o.top_n);
  std::printf("{\"results\": [");
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    std::printf("%s\n  {\"index\": %zu, \"relevance_score\": %s, \"document\": {\"text\": %s}}", k ? "," : "", i,
                json_number(static_cast<double>(scores[i])).c_str(), json_string(o.documents[i]).c_str());
  }
  std::printf("\n]}\n");
  return 0;
}
