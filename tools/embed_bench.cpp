// peak bench --embed: how fast an embedding model turns a batch of texts into
// vectors, the retrieval workload: --texts texts of about --text-tokens tokens
// each (made-up text, counted with the [CLS]/[SEP] the tokenizer adds), all
// given to one peak_embed call, which tokenizes them and packs them into
// forward passes of up to -b tokens. Each test runs once to warm up, then R
// times; it reports tokens and texts per second (mean ± sd over the timed
// runs) and the process's resident memory after it, the model's weights
// included (an encoder has no KV cache).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "text_format.h"

namespace {

struct EmbedBenchOptions {
  std::vector<std::string> models;
  int texts = 256;
  int text_tokens = 30;
  std::vector<int> threads;
  size_t n_batch = 0;  // 0: the model's context
  int repetitions = 5;
  std::string output = "md";
};

struct EmbedResult {
  std::string model, type;
  uint64_t size = 0, params = 0;
  int threads = 0;
  size_t n_batch = 0;
  int texts = 0;
  size_t tokens = 0;                      // all texts', special tokens included
  double tokens_mean = 0, tokens_sd = 0;  // per second
  double texts_mean = 0;                  // per second
  long rss_kib = 0, rss_peak_kib = 0;
};

void print_help() {
  std::printf(
      "usage: peak bench --embed -m MODEL [-m MODEL2 ...] [--texts 256] [--text-tokens 30] [-t T] [-b N] [-r 5]\n"
      "                  [-o md|csv|json]\n"
      "  Embedding throughput: --texts made-up texts of about --text-tokens tokens each ([CLS] and [SEP]\n"
      "  counted) in one peak_embed call, tokenizing included; tokens and texts per second, and the\n"
      "  process's resident memory (RSS) after the test and its peak.\n"
      "  -t T         threads, a comma-separated list (default: every core)\n"
      "  -b N         tokens per forward pass (default: the model's context)\n"
      "  -r N         timed runs after one warm-up run (default 5)\n"
      "  -o FORMAT    md (default), csv or json\n");
}

EmbedBenchOptions parse(int argc, char** argv, bool* help) {
  EmbedBenchOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "--embed")) {
      continue;
    } else if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.models.push_back(args.value(a));
    } else if (!std::strcmp(a, "--texts")) {
      o.texts = static_cast<int>(args.integer(a, 1, 1 << 20));
    } else if (!std::strcmp(a, "--text-tokens")) {
      o.text_tokens = static_cast<int>(args.integer(a, 1, 1 << 20));
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.threads = parse_list(a, args.value(a), 1, 64);
    } else if (!std::strcmp(a, "-b") || !std::strcmp(a, "--batch-size")) {
      o.n_batch = static_cast<size_t>(args.integer(a, 1, 1 << 20));
    } else if (!std::strcmp(a, "-r") || !std::strcmp(a, "--repetitions")) {
      o.repetitions = static_cast<int>(args.integer(a, 1, 1000));
    } else if (!std::strcmp(a, "-o") || !std::strcmp(a, "--output")) {
      o.output = args.value(a);
      if (o.output != "md" && o.output != "csv" && o.output != "json") {
        throw UsageError("option -o: unknown format '" + o.output + "' (md, csv, json)");
      }
    } else {
      throw UsageError(std::string("unknown option '") + a + "' for peak bench --embed");
    }
  }
  if (o.models.empty()) throw UsageError("no model given (-m MODEL)");
  if (o.threads.empty()) o.threads = {static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  return o;
}

// Seconds of one peak_embed call over `texts` (the vectors written to `out`).
double time_embed(peak_embedder* embedder, const std::vector<const char*>& texts, const std::vector<size_t>& lengths,
                  std::vector<float>& out) {
  const peak_embed_params params = peak_embed_default_params();
  size_t n_floats = 0;
  const auto start = std::chrono::steady_clock::now();
  check_status(peak_embed(embedder, texts.data(), lengths.data(), texts.size(), &params, out.data(), out.size(),
                          &n_floats, nullptr));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

EmbedResult run_test(const std::string& path, const peak_model* model, const peak_model_info& info,
                     const EmbedBenchOptions& o, int threads) {
  peak_embedder_params params = peak_embedder_default_params();
  params.n_batch = o.n_batch;
  params.n_threads = static_cast<size_t>(threads);
  peak_embedder* created = nullptr;
  check_status(peak_embedder_create(model, &params, &created));
  const std::unique_ptr<peak_embedder, EmbedderDeleter> embedder(created);

  uint32_t seed = 12345;  // the same texts for every model and thread count
  std::vector<std::string> texts;
  EmbedResult r;
  for (int i = 0; i < o.texts; ++i) {
    texts.push_back(made_up_text(model, o.text_tokens, /*add_special=*/true, &seed));
    size_t n = 0;
    peak_tokenize(model, texts.back().data(), texts.back().size(), 1, 0, nullptr, 0, &n);
    r.tokens += n;
  }
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (const std::string& t : texts) {
    pointers.push_back(t.c_str());
    lengths.push_back(t.size());
  }
  std::vector<float> out(texts.size() * peak_embedder_n_embd(embedder.get()));
  time_embed(embedder.get(), pointers, lengths, out);  // warm-up
  std::vector<double> tokens_per_second;
  for (int run = 0; run < o.repetitions; ++run) {
    tokens_per_second.push_back(static_cast<double>(r.tokens) / time_embed(embedder.get(), pointers, lengths, out));
  }

  struct stat st {};
  ::stat(path.c_str(), &st);
  r.model = model_label(path);
  r.type = dominant_type(path);
  r.size = static_cast<uint64_t>(st.st_size);
  r.params = info.n_params;
  r.threads = threads;
  r.n_batch = o.n_batch > 0 ? o.n_batch : info.n_ctx_train;
  r.texts = o.texts;
  mean_sd(tokens_per_second, &r.tokens_mean, &r.tokens_sd);
  r.texts_mean = r.tokens_mean * o.texts / static_cast<double>(r.tokens);
  r.rss_kib = process_status_kib("VmRSS:");
  r.rss_peak_kib = process_status_kib("VmHWM:");
  return r;
}

void print_results(const std::vector<EmbedResult>& results, const std::string& format) {
  if (format == "md") {
    std::printf(
        "| model | type | size | params | threads | batch | test | tokens/s | texts/s | RSS MiB | peak RSS MiB |\n");
    std::printf("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
    for (const EmbedResult& r : results) {
      std::printf(
          "| %s | %s | %s | %.2f M | %d | %zu | embed %d texts, %zu tokens | %.1f ± %.1f | %.1f | %.1f | %.1f |\n",
          r.model.c_str(), r.type.c_str(), human_bytes(r.size).c_str(), static_cast<double>(r.params) / 1e6, r.threads,
          r.n_batch, r.texts, r.tokens, r.tokens_mean, r.tokens_sd, r.texts_mean, static_cast<double>(r.rss_kib) / 1024,
          static_cast<double>(r.rss_peak_kib) / 1024);
    }
  } else if (format == "csv") {
    std::printf(
        "model_filename,model_type,model_size,model_n_params,n_threads,n_batch,n_texts,n_tokens,avg_ts,stddev_ts,"
        "texts_per_second,rss_kib,rss_peak_kib\n");
    for (const EmbedResult& r : results) {
      std::printf("%s,%s,%llu,%llu,%d,%zu,%d,%zu,%.4f,%.4f,%.4f,%ld,%ld\n", r.model.c_str(), r.type.c_str(),
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.params), r.threads,
                  r.n_batch, r.texts, r.tokens, r.tokens_mean, r.tokens_sd, r.texts_mean, r.rss_kib, r.rss_peak_kib);
    }
  } else {
    std::printf("[\n");
    for (size_t i = 0; i < results.size(); ++i) {
      const EmbedResult& r = results[i];
      std::printf(
          "  {\"model_filename\": %s, \"model_type\": %s, \"model_size\": %llu, \"model_n_params\": %llu, "
          "\"n_threads\": %d, \"n_batch\": %zu, \"n_texts\": %d, \"n_tokens\": %zu, \"avg_ts\": %.4f, "
          "\"stddev_ts\": %.4f, \"texts_per_second\": %.4f, \"rss_kib\": %ld, \"rss_peak_kib\": %ld}%s\n",
          json_string(r.model).c_str(), json_string(r.type).c_str(), static_cast<unsigned long long>(r.size),
          static_cast<unsigned long long>(r.params), r.threads, r.n_batch, r.texts, r.tokens, r.tokens_mean,
          r.tokens_sd, r.texts_mean, r.rss_kib, r.rss_peak_kib, i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
  }
}

}  // namespace

int run_embed_bench(int argc, char** argv) {
  bool help = false;
  const EmbedBenchOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  std::vector<EmbedResult> results;
  for (const std::string& path : o.models) {
    peak_model* loaded = nullptr;
    check_status(peak_model_load(path.c_str(), nullptr, &loaded));
    const std::unique_ptr<peak_model, ModelDeleter> model(loaded);
    peak_model_info info{};
    info.struct_size = sizeof info;
    check_status(peak_model_get_info(model.get(), &info));
    if (!info.is_encoder) {
      throw CommandError(path + " is a chat model (" + std::string(info.architecture) +
                         "), not an embedding model: peak bench without --embed measures it");
    }
    for (int t : o.threads) results.push_back(run_test(path, model.get(), info, o, t));
  }
  print_results(results, o.output);
  return 0;
}
