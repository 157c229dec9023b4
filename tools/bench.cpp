// peak bench: prompt processing (pp) and token generation (tg) speed, as
// llama-bench measures them: pp evaluates N prompt tokens in batches; tg
// generates N tokens one at a time; both after D tokens already in the cache
// (-d, default 0: an empty context). The D tokens are evaluated once per test,
// untimed; before each repetition the cells the previous one appended are
// removed, so every repetition starts at depth D.
// Each test runs once to warm up, then R times; t/s is reported as mean ± sd.
// For tg it also reports the bytes streamed per second and that as a share of
// the machine's read bandwidth, probed right before each timed repetition: on
// a shared machine the bandwidth on offer drifts within seconds, so each
// repetition is compared with its own probe and the shares are averaged.
// With --sample, tg samples each next token from the logits (llama.cpp's
// default chain, seed 0) instead of feeding one token again; with --grammar or
// --grammar-file it samples under that grammar, starting it again whenever its
// text ends: both count the sampler's time in the tokens per second. A
// generated token streams the weights and, at depth, every layer's K and V
// rows of the used cells (their mean count over the test).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include "bandwidth_probe.h"
#include "bench_common.h"
#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "text_format.h"

namespace {

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<int> prompt_lengths = {512};
  std::vector<int> gen_lengths = {128};
  std::vector<int> depths = {0};
  std::vector<int> threads;
  int repetitions = 5;
  std::string output = "md";
  bool profile = false;
  bool probe = true;
  bool sample = false;  // tg samples each next token (always with a grammar)
  // tg of several sequences stepping in shared passes (peak_pass_group), one
  // thread each; 1 is the plain single-context test.
  std::vector<int> sequences = {1};
  GenerationOptions gen;
};

struct Result {
  std::string model, type;
  uint64_t size = 0, params = 0;
  int threads = 0, n_prompt = 0, n_gen = 0, n_depth = 0, n_seq = 1;
  double mean = 0, sd = 0;      // tokens per second
  double gbps = 0, probe = 0;   // tg only: weights and KV streamed, mean probed bandwidth
  double share = 0;             // tg only: mean over repetitions of streamed / probed
  const char* sampling = "";    // tg: "", " sampled" or " grammar" (--sample, --grammar)
};

void print_help() {
  std::printf(
      "usage: peak bench -m MODEL [-m MODEL2 ...] [-p 512] [-n 128] [-d 0] [-t T] [-r 5] [-o md|csv|json] [--profile]\n"
      "  pp: N prompt tokens; tg: N tokens generated one by one; both after D tokens in the cache.\n"
      "  -p, -n, -d, -t take comma-separated lists (e.g. -t 1,2); 0 skips a pp or tg test.\n"
      "  -d, --n-depth D  tokens already in the cache (default 0), filled once per test, untimed\n"
      "  tg's GB/s and %% of probe count the weights and, at depth, the K and V rows of every\n"
      "  layer over the used cells that each generated token reads.\n"
      "  -r N         repetitions after one warm-up run (default 5)\n"
      "  -o FORMAT    md (default), csv or json\n"
      "  --profile    time per op type (printed to stderr after each test)\n"
      "  --no-probe   skip the memory bandwidth probe\n"
      "  --no-repack  keep weights in the file's layout (see peak run --help)\n"
      "  --sample     tg samples each next token (top-k 40, top-p 0.95, min-p 0.05, temp 0.8, seed 0)\n"
      "  --grammar GBNF, --grammar-file FILE, --grammar-root NAME, -j/--json-schema SCHEMA,\n"
      "  -jf/--json-schema-file FILE\n"
      "               tg samples under the grammar, starting it again where its text ends\n"
      "  -s, --sequences N  tg of N sequences at once (a list: -s 1,2,4,8), each on its own thread\n"
      "               and context, stepping in shared forward passes (peak_pass_group, as peak serve's\n"
      "               slots): t/s counts the tokens of all; GB/s the weights once per pass and each\n"
      "               sequence's K and V rows\n"
      "  -ctk/-ctv T  KV cache types (default f16)\n"
      "  --lora FILE[:SCALE], --control-vector FILE[:STRENGTH], --control-vector-layers A-B\n"
      "               run the model with adapters (see peak run --help); tg's bytes count the\n"
      "               adapters' matrices too\n"
      "\n"
      "usage: peak bench --chat -m MODEL [--turns 300] [--user-tokens 60] [--answer-tokens 60]\n"
      "                  [--modes ssskv,window,none] [--think-time 15] [-t T] [--csv FILE]\n"
      "                  [long-conversation options of peak chat]\n"
      "  A scripted long conversation per memory mode: turn latency (median, p95) early and late and\n"
      "  right after a rebuild, where each turn's time went (rebuild, catch-up, window shift, prefill,\n"
      "  generation, settle), KV bytes, RSS, time in summaries and rebuilds on the worker.\n"
      "  --think-time S  seconds the user reads and types between turns, in which only the session's\n"
      "               worker runs (skipped once it is idle; default 15)\n"
      "  --csv FILE   every turn's latency and its parts\n"
      "\n"
      "usage: peak bench --embed -m MODEL [--texts 256] [--text-tokens 30] [-t T] [-b N] [-r 5] [-o md|csv|json]\n"
      "  Embedding throughput of an embedding model: tokens and texts per second, RSS (see --embed --help).\n"
      "\n"
      "usage: peak bench --mmproj FILE [--image FILE] [-t T] [-r 5] [-o md|csv|json]\n"
      "  Image encoding with a vision-language model's projector file: seconds per image, RSS (see\n"
      "  --mmproj --help).\n");
}

BenchOptions parse(int argc, char** argv, bool* help) {
  BenchOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.models.push_back(args.value(a));
    } else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--n-prompt")) {
      o.prompt_lengths = parse_list(a, args.value(a), 0, 1 << 20);
    } else if (!std::strcmp(a, "-n") || !std::strcmp(a, "--n-gen")) {
      o.gen_lengths = parse_list(a, args.value(a), 0, 1 << 20);
    } else if (!std::strcmp(a, "-d") || !std::strcmp(a, "--n-depth")) {
      o.depths = parse_list(a, args.value(a), 0, 1 << 20);
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.threads = parse_list(a, args.value(a), 1, 64);
    } else if (!std::strcmp(a, "-r") || !std::strcmp(a, "--repetitions")) {
      o.repetitions = static_cast<int>(args.integer(a, 1, 1000));
    } else if (!std::strcmp(a, "-o") || !std::strcmp(a, "--output")) {
      o.output = args.value(a);
      if (o.output != "md" && o.output != "csv" && o.output != "json") {
        throw UsageError("option -o: unknown format '" + o.output + "' (md, csv, json)");
      }
    } else if (!std::strcmp(a, "-ctk") || !std::strcmp(a, "--cache-type-k")) {
      o.gen.context.type_k = parse_cache_type(a, args.value(a));
    } else if (!std::strcmp(a, "-ctv") || !std::strcmp(a, "--cache-type-v")) {
      o.gen.context.type_v = parse_cache_type(a, args.value(a));
    } else if (!std::strcmp(a, "-s") || !std::strcmp(a, "--sequences")) {
      o.sequences = parse_list(a, args.value(a), 1, PEAK_PASS_GROUP_MAX_SEQUENCES);
    } else if (!std::strcmp(a, "--profile")) {
      o.profile = true;
    } else if (!std::strcmp(a, "--no-probe")) {
      o.probe = false;
    } else if (!std::strcmp(a, "--sample")) {
      o.sample = true;
    } else if (parse_grammar_option(a, args, o.gen)) {
      o.sample = true;
    } else if (!std::strcmp(a, "--no-repack")) {
      o.gen.model.repack_weights = PEAK_REPACK_NONE;
    } else if (parse_adapter_option(a, args, o.gen)) {
      continue;
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak bench --help)");
    }
  }
  if (o.models.empty()) throw UsageError("no model given (-m MODEL)");
  if (o.threads.empty()) o.threads = {static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  return o;
}

void print_profile(peak_context* ctx, const char* test) {
  size_t n = 0;
  peak_context_get_profile(ctx, nullptr, 0, &n);
  std::vector<peak_op_profile> entries(n);
  check_status(peak_context_get_profile(ctx, entries.data(), entries.size(), &n));
  double total = 0;
  for (const auto& e : entries) total += e.seconds;
  std::fprintf(stderr, "profile of %s (all runs):\n", test);
  for (const auto& e : entries) {
    std::fprintf(stderr, "  %-12s %10.2f ms %5.1f%% %10llu calls\n", e.op, e.seconds * 1e3,
                 total > 0 ? 100.0 * e.seconds / total : 0.0, static_cast<unsigned long long>(e.calls));
  }
  peak_context_reset_profile(ctx);
}

// The token tg evaluates after `token`: sampled from the context's logits
// when there is a sampler (and recorded: a grammar reads it; its end, the
// only token a finished grammar allows, starts the grammar and the penalties
// again), else `token` again.
int32_t next_token(peak_sampler* sampler, peak_context* ctx, const peak_model* model, int32_t token) {
  if (!sampler) return token;
  int32_t next = -1;
  check_status(peak_sampler_sample(sampler, ctx, &next));
  if (peak_token_is_eog(model, next)) {
    peak_sampler_reset(sampler);
  } else {
    check_status(peak_sampler_accept(sampler, next));
  }
  return next;
}

// Fixed pseudo-random ids (a linear congruential sequence from `seed`): the
// cost of a pass does not depend on them.
void fill_pseudo_random(std::vector<int32_t>& tokens, size_t n_vocab, uint32_t seed) {
  uint32_t state = seed;
  for (int32_t& t : tokens) t = static_cast<int32_t>((state = state * 1664525u + 1013904223u) % n_vocab);
}

// Tokens/s of each timed run (after one warm-up run) of n_prompt prompt tokens
// or n_gen generated ones, each after n_depth tokens in the cache; `before_run`,
// when set, is called right before each timed run. tg samples with `sampler`
// when there is one (next_token).
std::vector<double> time_test(peak_context* ctx, peak_sampler* sampler, const peak_model* model, int n_depth,
                              int n_prompt, int n_gen, size_t n_vocab, int runs,
                              const std::function<void()>& before_run) {
  std::vector<int32_t> tokens(static_cast<size_t>(std::max({n_prompt, n_depth, 1})));
  fill_pseudo_random(tokens, n_vocab, 12345);
  check_status(peak_context_kv_clear(ctx));
  if (n_depth > 0) check_status(peak_context_eval(ctx, tokens.data(), static_cast<size_t>(n_depth)));
  std::vector<double> rates;
  for (int run = 0; run <= runs; ++run) {
    const size_t depth = static_cast<size_t>(n_depth);
    check_status(peak_context_kv_remove(ctx, depth, peak_context_n_used(ctx) - depth));
    if (run > 0 && before_run) before_run();
    const auto start = std::chrono::steady_clock::now();
    if (n_prompt > 0) {
      check_status(peak_context_eval(ctx, tokens.data(), static_cast<size_t>(n_prompt)));
    } else {
      int32_t token = tokens[0];
      for (int i = 0; i < n_gen; ++i) {
        check_status(peak_context_eval(ctx, &token, 1));
        token = next_token(sampler, ctx, model, token);
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) rates.push_back((n_prompt > 0 ? n_prompt : n_gen) / s);
    if (run == 0) peak_context_reset_profile(ctx);
  }
  return rates;
}

// tg of n_seq sequences in shared passes: tokens/s of all of them in each
// timed run (after one warm-up run), every sequence after n_depth tokens.
std::vector<double> time_shared_test(const peak_model* model, const GenerationOptions& g, int n_threads, int n_seq,
                                     int n_depth, int n_gen, size_t n_vocab, int runs,
                                     const std::function<void()>& before_run) {
  peak_pass_group_params gp = peak_pass_group_default_params();
  gp.n_ctx = g.context.n_ctx;
  gp.max_sequences = static_cast<size_t>(n_seq);
  gp.n_threads = static_cast<size_t>(n_threads);
  gp.type_k = g.context.type_k;
  gp.type_v = g.context.type_v;
  peak_pass_group* raw_group = nullptr;
  check_status(peak_pass_group_create(model, &gp, &raw_group));
  std::unique_ptr<peak_pass_group, void (*)(peak_pass_group*)> group(raw_group, peak_pass_group_free);
  peak_context_params cp = g.context;
  cp.n_threads = 1;  // each context's own threads stay idle: the group's run the passes
  cp.pass_group = group.get();
  std::vector<std::unique_ptr<peak_context, ContextDeleter>> contexts;
  std::vector<int32_t> depth_tokens(static_cast<size_t>(std::max(n_depth, 1)));
  for (int s = 0; s < n_seq; ++s) {
    peak_context* ctx = nullptr;
    check_status(peak_context_create(model, &cp, &ctx));
    contexts.emplace_back(ctx);
    fill_pseudo_random(depth_tokens, n_vocab, 12345u + static_cast<uint32_t>(s));
    if (n_depth > 0) check_status(peak_context_eval(ctx, depth_tokens.data(), static_cast<size_t>(n_depth)));
  }
  std::vector<double> rates;
  for (int run = 0; run <= runs; ++run) {
    for (auto& ctx : contexts) {
      check_status(peak_context_kv_remove(ctx.get(), static_cast<size_t>(n_depth),
                                          peak_context_n_used(ctx.get()) - static_cast<size_t>(n_depth)));
    }
    if (run > 0 && before_run) before_run();
    std::vector<std::thread> streams;
    std::vector<peak_status> status(static_cast<size_t>(n_seq), PEAK_OK);
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < n_seq; ++s) {
      streams.emplace_back([&, s] {
        int32_t token = depth_tokens[0] + s;
        for (int i = 0; i < n_gen && status[static_cast<size_t>(s)] == PEAK_OK; ++i) {
          status[static_cast<size_t>(s)] = peak_context_eval(contexts[static_cast<size_t>(s)].get(), &token, 1);
        }
      });
    }
    for (std::thread& t : streams) t.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (peak_status st : status) check_status(st);
    if (run > 0) rates.push_back(static_cast<double>(n_seq) * n_gen / seconds);
  }
  peak_pass_group_stats stats{};
  stats.struct_size = sizeof stats;
  check_status(peak_pass_group_get_stats(group.get(), &stats));
  std::fprintf(stderr, "%d sequences: %llu passes of %.2f sequences on average\n", n_seq,
               static_cast<unsigned long long>(stats.passes),
               stats.passes > 0 ? static_cast<double>(stats.sequences) / static_cast<double>(stats.passes) : 0.0);
  return rates;
}

// Bytes of one cached row of head_dim elements in `type`, as the context
// stores it: block types need a head size that is a multiple of 32 and fall
// back to F16 otherwise.
double kv_row_bytes(peak_type type, size_t head_dim) {
  const auto d = static_cast<double>(head_dim);
  const bool blocks_fit = head_dim % 32 == 0;
  switch (type) {
    case PEAK_TYPE_F32: return 4 * d;
    case PEAK_TYPE_Q8_0: return blocks_fit ? d / 32 * 34 : 2 * d;
    case PEAK_TYPE_Q4_0: return blocks_fit ? d / 32 * 18 : 2 * d;
    default: return 2 * d;
  }
}

// Bytes one generated token reads: the weights, then K and V of every layer
// over the cells it attends to, on average over n_gen tokens generated after
// n_depth (the i-th sees n_depth + i + 1 cells), and the LoRA adapters'
// matrices. A sliding-window layer is counted over all of them, though it
// reads only its window.
double decode_bytes_at_depth(const LoadedModel& m, const GenerationOptions& g, int n_depth, int n_gen) {
  const peak_model_info& info = m.info;
  const double cells = n_depth + (n_gen + 1) / 2.0;
  const double cell_bytes = static_cast<double>(info.n_layer * info.n_head_kv) *
                            (kv_row_bytes(g.context.type_k, info.head_dim) + kv_row_bytes(g.context.type_v, info.head_dim));
  return static_cast<double>(info.decode_bytes_per_token + m.adapter_bytes) + cells * cell_bytes;
}

void print_results(const std::vector<Result>& results, const std::string& format) {
  if (format == "md") {
    std::printf("| model | type | size | params | threads | depth | test | t/s | streamed GB/s | probe GB/s | %% of probe |\n");
    std::printf("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
    for (const Result& r : results) {
      const std::string test = r.n_prompt > 0 ? "pp" + std::to_string(r.n_prompt)
                                              : "tg" + std::to_string(r.n_gen) + r.sampling +
                                                    (r.n_seq > 1 ? " x" + std::to_string(r.n_seq) : std::string());
      std::printf("| %s | %s | %s | %.2f M | %d | %d | %s | %.2f ± %.2f |", r.model.c_str(), r.type.c_str(),
                  human_bytes(r.size).c_str(), static_cast<double>(r.params) / 1e6, r.threads, r.n_depth, test.c_str(),
                  r.mean, r.sd);
      if (r.n_gen > 0) {
        if (r.probe > 0) {
          std::printf(" %.1f | %.1f | %d%% |\n", r.gbps, r.probe, static_cast<int>(100 * r.share + 0.5));
        } else {
          std::printf(" %.1f | - | - |\n", r.gbps);
        }
      } else {
        std::printf(" - | - | - |\n");
      }
    }
  } else if (format == "csv") {
    std::printf("model_filename,model_type,model_size,model_n_params,n_threads,n_prompt,n_gen,n_depth,avg_ts,stddev_ts,streamed_gbps,probe_gbps,probe_share\n");
    for (const Result& r : results) {
      std::printf("%s,%s,%llu,%llu,%d,%d,%d,%d,%.4f,%.4f,%.3f,%.3f,%.3f\n", r.model.c_str(), r.type.c_str(),
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.params), r.threads,
                  r.n_prompt, r.n_gen, r.n_depth, r.mean, r.sd, r.gbps, r.probe, r.share);
    }
  } else {
    std::printf("[\n");
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf("  {\"model_filename\": %s, \"model_type\": %s, \"model_size\": %llu, \"model_n_params\": %llu, "
                  "\"n_threads\": %d, \"n_prompt\": %d, \"n_gen\": %d, \"n_depth\": %d, \"avg_ts\": %.4f, "
                  "\"stddev_ts\": %.4f, \"streamed_gbps\": %.3f, \"probe_gbps\": %.3f, \"probe_share\": %.3f}%s\n",
                  json_string(r.model).c_str(), json_string(r.type).c_str(), static_cast<unsigned long long>(r.size),
                  static_cast<unsigned long long>(r.params), r.threads, r.n_prompt, r.n_gen, r.n_depth, r.mean, r.sd, r.gbps,
                  r.probe, r.share, i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
  }
}

}  // namespace

int run_bench(int argc, char** argv) {
  bool help = false;
  BenchOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  const auto probe_now = [](int t) {
    const double gbps = probe_read_bandwidth(size_t{1} << 30, t, 5);
    std::fprintf(stderr, "memory read bandwidth probe, %d thread%s: %.1f GB/s (1 GiB, best of 5)\n", t,
                 t == 1 ? "" : "s", gbps);
    return gbps;
  };
  const int max_prompt = *std::max_element(o.prompt_lengths.begin(), o.prompt_lengths.end());
  const int max_gen = *std::max_element(o.gen_lengths.begin(), o.gen_lengths.end());
  const int max_depth = *std::max_element(o.depths.begin(), o.depths.end());
  std::vector<Result> results;
  for (const std::string& path : o.models) {
    GenerationOptions g = o.gen;
    g.context.n_ctx = static_cast<size_t>(max_depth + std::max(max_prompt, max_gen) + 16);
    // Batches of up to 512 tokens, for the prompt and for filling the depth.
    g.context.n_batch = static_cast<size_t>(std::max(1, std::min(std::max(max_prompt, max_depth), 512)));
    g.context.n_threads = static_cast<size_t>(*std::max_element(o.threads.begin(), o.threads.end()));
    // A benchmark measures the steady state: weights repacked before the first test.
    if (g.model.repack_weights != PEAK_REPACK_NONE) g.model.repack_weights = PEAK_REPACK_AT_LOAD;
    LoadedModel m = load_model(path, g);
    struct stat st {};
    ::stat(path.c_str(), &st);
    const std::string type = dominant_type(path);
    for (int t : o.threads) {
      check_status(peak_context_set_threads(m.context.get(), static_cast<size_t>(t)));
      auto run_shared = [&](int n_depth, int n_gen, int n_seq) {
        std::vector<double> probes;
        std::function<void()> probe_before;
        if (o.probe) probe_before = [&] { probes.push_back(probe_now(t)); };
        const std::vector<double> rates =
            time_shared_test(m.model.get(), g, t, n_seq, n_depth, n_gen, m.info.n_vocab, o.repetitions, probe_before);
        Result r{model_label(path), type, static_cast<uint64_t>(st.st_size), m.info.n_params, t, 0, n_gen,
                 n_depth,           n_seq};
        mean_sd(rates, &r.mean, &r.sd);
        // A pass reads the weights once and each sequence's K and V rows.
        const double weights = static_cast<double>(m.info.decode_bytes_per_token + m.adapter_bytes);
        const double kv = decode_bytes_at_depth(m, g, n_depth, n_gen) - weights;
        const double pass_bytes = weights + n_seq * kv;
        r.gbps = pass_bytes * r.mean / n_seq / 1e9;
        for (size_t i = 0; i < probes.size(); ++i) {
          r.probe += probes[i] / static_cast<double>(probes.size());
          r.share += pass_bytes * rates[i] / n_seq / 1e9 / probes[i] / static_cast<double>(probes.size());
        }
        results.push_back(r);
      };
      auto run = [&](int n_depth, int n_prompt, int n_gen) {
        if (o.profile) check_status(peak_context_set_profiling(m.context.get(), 1));
        std::vector<double> probes;
        std::function<void()> probe_before;
        if (n_gen > 0 && o.probe) probe_before = [&] { probes.push_back(probe_now(t)); };
        const std::vector<double> rates =
            time_test(m.context.get(), o.sample ? m.sampler.get() : nullptr, m.model.get(), n_depth, n_prompt, n_gen,
                      m.info.n_vocab, o.repetitions, probe_before);
        Result r{model_label(path), type, static_cast<uint64_t>(st.st_size), m.info.n_params, t, n_prompt, n_gen,
                 n_depth};
        mean_sd(rates, &r.mean, &r.sd);
        if (n_gen > 0) {
          r.sampling = o.gen.grammar_given || o.gen.json_schema_given ? " grammar" : o.sample ? " sampled" : "";
          const double bytes = decode_bytes_at_depth(m, g, n_depth, n_gen);
          r.gbps = bytes * r.mean / 1e9;
          for (size_t i = 0; i < probes.size(); ++i) {
            r.probe += probes[i] / static_cast<double>(probes.size());
            r.share += bytes * rates[i] / 1e9 / probes[i] / static_cast<double>(probes.size());
          }
        }
        if (o.profile) {
          print_profile(m.context.get(), n_prompt > 0 ? "pp" : "tg");
          check_status(peak_context_set_profiling(m.context.get(), 0));
        }
        results.push_back(r);
      };
      for (int d : o.depths) {
        for (int p : o.prompt_lengths) if (p > 0) run(d, p, 0);
        for (int n : o.gen_lengths) {
          if (n <= 0) continue;
          for (int seq : o.sequences) {
            if (seq == 1) {
              run(d, 0, n);
            } else {
              run_shared(d, n, seq);
            }
          }
        }
      }
    }
  }
  print_results(results, o.output);
  return 0;
}
