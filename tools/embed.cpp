// peak embed -m MODEL (-p TEXT | -f FILE): the vectors an embedding model
// (an encoder such as BGE or all-MiniLM) gives texts, for search and retrieval.
//
// Output on stdout, the texts in the order given:
//  - json (default): an array with one array of floats per text; with
//    --pooling none, one array per text of its tokens' arrays;
//  - csv: one line of comma-separated floats per vector (per text when
//    pooled; with --pooling none, per token, the texts one after another).
// Floats are written with 9 significant digits, enough to read back the same float.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "input_file.h"

namespace {

struct EmbedOptions {
  std::string model_path;
  std::vector<std::string> texts;
  std::string file;  // -f: where the texts came from, for the messages
  bool from_prompt = false;
  peak_embed_params embed = peak_embed_default_params();
  peak_embedder_params embedder = peak_embedder_default_params();
  bool csv = false;
};

void print_help() {
  std::printf(
      "usage: peak embed -m MODEL (-p TEXT ... | -f FILE) [options]\n"
      "  Prints the vectors an embedding model (BGE, all-MiniLM, nomic-embed-text, EmbeddingGemma,\n"
      "  Qwen3-Embedding ...) gives texts.\n"
      "  Each text is tokenized with the model's special tokens ([CLS] ... [SEP], or an EOS at the end).\n"
      "  -m, --model FILE          the GGUF embedding model\n"
      "  -p, --prompt TEXT         a text; give -p once per text\n"
      "  -f, --file FILE           the texts, one per line ('-': standard input); an empty line is refused\n"
      "  --pooling P               none, mean, cls or last (default: the model's own)\n"
      "  --no-normalize            keep the vectors' length (default: scaled to length 1)\n"
      "  --dimensions N            keep each vector's first N floats (Matryoshka models), normalised after\n"
      "                            the cut (default: all of the model's n_embd)\n"
      "  --truncate                embed a text longer than the batch as its first tokens, the end token\n"
      "                            ([SEP]) kept last (default: such a text is refused)\n"
      "  --format F                json (default): an array of one array per text\n"
      "                            (with --pooling none, per text an array of its tokens' arrays);\n"
      "                            csv: one line per vector\n"
      "  -t, --threads N           threads (default: the fast cores this process may use)\n"
      "  -b, --batch-size N        tokens per forward pass, the longest text (default: the model's context)\n"
      "  Errors name a text by its index from 0: text i is the i-th -p, or line i+1 of the file.\n");
}

int parse_pooling(const char* option, const char* text) {
  if (!std::strcmp(text, "none")) return PEAK_POOLING_NONE;
  if (!std::strcmp(text, "mean")) return PEAK_POOLING_MEAN;
  if (!std::strcmp(text, "cls")) return PEAK_POOLING_CLS;
  if (!std::strcmp(text, "last")) return PEAK_POOLING_LAST;
  throw UsageError(std::string("option ") + option + " takes none, mean, cls or last, not '" + text + "'");
}

EmbedOptions parse(int argc, char** argv, bool* help) {
  EmbedOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.model_path = args.value(a);
    } else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--prompt")) {
      o.texts.emplace_back(args.value(a));
      o.from_prompt = true;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      if (!o.file.empty()) throw UsageError("give -f once");
      o.file = args.value(a);
    } else if (!std::strcmp(a, "--pooling")) {
      o.embed.pooling = parse_pooling(a, args.value(a));
    } else if (!std::strcmp(a, "--no-normalize")) {
      o.embed.normalize = 0;
    } else if (!std::strcmp(a, "--dimensions")) {
      o.embed.dimensions = static_cast<size_t>(args.integer(a, 1, 1 << 20));
    } else if (!std::strcmp(a, "--truncate")) {
      o.embed.truncate = 1;
    } else if (!std::strcmp(a, "--format")) {
      const char* f = args.value(a);
      if (!std::strcmp(f, "csv")) {
        o.csv = true;
      } else if (std::strcmp(f, "json") != 0) {
        throw UsageError(std::string("option --format takes json or csv, not '") + f + "'");
      }
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.embedder.n_threads = static_cast<size_t>(args.integer(a, 1, 64));
    } else if (!std::strcmp(a, "-b") || !std::strcmp(a, "--batch-size")) {
      o.embedder.n_batch = static_cast<size_t>(args.integer(a, 1, 1 << 20));
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak embed --help)");
    }
  }
  if (o.model_path.empty()) throw UsageError("no model given (-m MODEL)");
  if (!o.from_prompt && o.file.empty()) throw UsageError("no text given (-p TEXT or -f FILE)");
  if (o.from_prompt && !o.file.empty()) throw UsageError("give the texts once: -p and -f exclude each other");
  return o;
}

void print_vector(const float* v, size_t n, bool csv) {
  std::string line = csv ? "" : "[";
  char number[32];
  for (size_t j = 0; j < n; ++j) {
    std::snprintf(number, sizeof number, "%s%.9g", j ? "," : "", static_cast<double>(v[j]));
    line += number;
  }
  std::printf("%s%s", line.c_str(), csv ? "\n" : "]");
}

}  // namespace

int run_embed(int argc, char** argv) {
  bool help = false;
  EmbedOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  if (!o.file.empty()) o.texts = read_text_lines(o.file);

  const LoadedEmbedder loaded = load_embedder(o.model_path, o.embedder);
  peak_embedder* const embedder = loaded.embedder.get();
  const TextViews views = text_views(o.texts);
  const std::vector<const char*>& texts = views.texts;
  const std::vector<size_t>& lengths = views.lengths;

  // Asked first with no buffer: the texts are checked and the floats counted
  // (with --pooling none they depend on the token counts), nothing runs.
  std::vector<size_t> n_vectors(texts.size());
  size_t n_floats = 0;
  const peak_status asked = peak_embed(embedder, texts.data(), lengths.data(), texts.size(), &o.embed, nullptr, 0,
                                       &n_floats, n_vectors.data());
  if (asked != PEAK_ERR_BUFFER_TOO_SMALL) check_status(asked);
  std::vector<float> out(n_floats);
  check_status(peak_embed(embedder, texts.data(), lengths.data(), texts.size(), &o.embed, out.data(), out.size(),
                          &n_floats, n_vectors.data()));

  const size_t n_embd = o.embed.dimensions > 0 ? o.embed.dimensions : peak_embedder_n_embd(embedder);
  const bool per_token = o.embed.pooling == PEAK_POOLING_NONE;
  const float* v = out.data();
  if (!o.csv) std::printf("[");
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!o.csv) std::printf("%s%s", i ? ",\n " : "", per_token ? "[" : "");
    for (size_t k = 0; k < n_vectors[i]; ++k, v += n_embd) {
      if (!o.csv && k) std::printf(",");
      print_vector(v, n_embd, o.csv);
    }
    if (!o.csv && per_token) std::printf("]");
  }
  if (!o.csv) std::printf("]\n");
  return 0;
}
