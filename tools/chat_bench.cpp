// peak bench --chat: a scripted long conversation through a peak_session, in
// each memory mode, measuring per-turn latency against the turn index, the KV
// cache bytes and the process RSS, and the time spent writing summaries and
// putting them in place.
//
// Every user turn has about --user-tokens tokens of made-up text (words from a
// fixed list, seeded), every answer --answer-tokens greedy tokens. Between turns
// the bench waits for a running summary and lets the session put it in place,
// as an app does while the user types: that time is reported, not counted in
// the turn's latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"

namespace {

struct SessionDeleter { void operator()(peak_session* s) const { peak_session_free(s); } };

struct ChatBenchOptions {
  std::string model;
  int turns = 300;
  int user_tokens = 60;
  int answer_tokens = 60;
  std::vector<std::string> modes = {"ssskv", "window", "none"};
  peak_session_params session = peak_session_default_params();
  size_t threads = 0;
  std::string csv;  // per-turn latencies
};

struct ModeResult {
  std::string mode;
  int turns_done = 0;
  std::string stopped;  // why it stopped early, if it did
  std::vector<double> latency;  // seconds per turn
  uint64_t kv_min = UINT64_MAX, kv_max = 0;
  long rss_turn50_kib = 0, rss_end_kib = 0;
  peak_session_stats final_stats{};
  double wait_seconds = 0;  // between turns, waiting for summaries
};

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// A user message of about `target` tokens: words from a fixed list picked by a
// seeded generator, grown until the tokenizer counts enough.
std::string make_message(const peak_model* model, int target, uint32_t* state) {
  static const char* const kWords[] = {
      "the", "garden", "meeting", "Alice", "budget", "on", "Tuesday", "we", "agreed", "to", "keep", "costs", "under",
      "forty", "thousand", "and", "Bob", "prefers", "green", "tea", "never", "schedule", "calls", "before", "nine",
      "project", "Falcon", "deadline", "is", "March", "third", "please", "remember", "that", "my", "daughter",
      "plays", "violin", "in", "a", "small", "orchestra", "near", "the", "river"};
  constexpr size_t kCount = sizeof kWords / sizeof kWords[0];
  std::string text;
  size_t n = 0;
  while (true) {
    *state = *state * 1664525u + 1013904223u;
    if (!text.empty()) text += ' ';
    text += kWords[(*state >> 8) % kCount];
    peak_tokenize(model, text.data(), text.size(), 0, 0, nullptr, 0, &n);
    if (static_cast<int>(n) >= target) return text + ".";
  }
}

peak_session_stats get_stats(peak_session* s) {
  peak_session_stats st{};
  st.struct_size = sizeof st;
  check_status(peak_session_get_stats(s, &st));
  return st;
}

ModeResult run_mode(const peak_model* model, const ChatBenchOptions& o, const std::string& mode) {
  ModeResult r;
  r.mode = mode;
  peak_session_params p = o.session;
  p.mode = mode == "ssskv" ? PEAK_MEMORY_SSSKV : mode == "window" ? PEAK_MEMORY_WINDOW : PEAK_MEMORY_NONE;
  p.system_prompt = "You are a helpful assistant. Keep track of the user's plans, names and numbers.";
  p.sampler.temperature = 0.0f;
  p.n_threads = o.threads;
  peak_session* raw = nullptr;
  check_status(peak_session_create(model, &p, &raw));
  std::unique_ptr<peak_session, SessionDeleter> session(raw);

  uint32_t seed = 2024;
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = static_cast<size_t>(o.answer_tokens);
  for (int turn = 0; turn < o.turns; ++turn) {
    const std::string message = make_message(model, o.user_tokens, &seed);
    const auto start = std::chrono::steady_clock::now();
    const peak_status status = peak_session_chat(session.get(), message.data(), message.size(), &gp, nullptr);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != PEAK_OK) {
      r.stopped = peak_last_error();
      break;
    }
    r.latency.push_back(seconds);
    ++r.turns_done;
    const auto wait_start = std::chrono::steady_clock::now();
    check_status(peak_session_wait_summary(session.get()));  // the user is typing
    r.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
    const peak_session_stats st = get_stats(session.get());
    r.kv_min = std::min<uint64_t>(r.kv_min, st.kv_bytes);
    r.kv_max = std::max<uint64_t>(r.kv_max, st.kv_bytes);
    if (turn + 1 == 50) r.rss_turn50_kib = rss_kib();
    if (turn % 25 == 24) {
      std::fprintf(stderr, "  %s: turn %d, %.3f s, context %zu+%zu+%zu/%zu, %zu summaries\n", mode.c_str(), turn + 1,
                   seconds, st.prefix_tokens, st.summary_tokens, st.recent_tokens, st.n_ctx, st.summaries);
    }
  }
  r.rss_end_kib = rss_kib();
  r.final_stats = get_stats(session.get());
  return r;
}

// Median and 95th percentile (nearest rank) of turns [first, last] (1-based).
bool window_stats(const std::vector<double>& latency, int first, int last, double* median, double* p95) {
  if (static_cast<int>(latency.size()) < last) return false;
  std::vector<double> v(latency.begin() + first - 1, latency.begin() + last);
  std::sort(v.begin(), v.end());
  *median = v[v.size() / 2];
  *p95 = v[std::min(v.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(v.size()) + 0.5) - 1)];
  return true;
}

}  // namespace

int run_chat_bench(int argc, char** argv) {
  ChatBenchOptions o;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    if (parse_session_option(args, o.session)) continue;
    const char* a = args.next();
    if (!std::strcmp(a, "--chat")) {
      continue;
    } else if (!std::strcmp(a, "-m") || !std::strcmp(a, "--model")) {
      o.model = args.value(a);
    } else if (!std::strcmp(a, "--turns")) {
      o.turns = static_cast<int>(args.integer(a, 1, 100000));
    } else if (!std::strcmp(a, "--user-tokens")) {
      o.user_tokens = static_cast<int>(args.integer(a, 1, 4096));
    } else if (!std::strcmp(a, "--answer-tokens")) {
      o.answer_tokens = static_cast<int>(args.integer(a, 1, 4096));
    } else if (!std::strcmp(a, "--modes")) {
      o.modes.clear();
      std::stringstream s(args.value(a));
      for (std::string m; std::getline(s, m, ',');) {
        if (m != "ssskv" && m != "window" && m != "none") throw UsageError("--modes: unknown mode '" + m + "'");
        o.modes.push_back(m);
      }
    } else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--threads")) {
      o.threads = static_cast<size_t>(args.integer(a, 1, 64));
    } else if (!std::strcmp(a, "-ctk") || !std::strcmp(a, "--cache-type-k")) {
      o.session.type_k = parse_cache_type(a, args.value(a));
    } else if (!std::strcmp(a, "-ctv") || !std::strcmp(a, "--cache-type-v")) {
      o.session.type_v = parse_cache_type(a, args.value(a));
    } else if (!std::strcmp(a, "--csv")) {
      o.csv = args.value(a);
    } else {
      throw UsageError(std::string("unknown option '") + a + "' for peak bench --chat");
    }
  }
  if (o.model.empty()) throw UsageError("no model given (-m MODEL)");
  GenerationOptions g;
  g.model.repack_weights = PEAK_REPACK_AT_LOAD;  // the steady state, as in peak bench
  LoadedModel m = load_model(o.model, g, /*with_context=*/false);
  std::fprintf(stderr, "chat bench: %s, %d turns of ~%d user + %d answer tokens, recent_max %zu, summary_max %zu, "
               "trigger_discard %zu\n", o.model.c_str(), o.turns, o.user_tokens, o.answer_tokens,
               o.session.recent_max, o.session.summary_max, o.session.trigger_discard);
  std::vector<ModeResult> results;
  for (const std::string& mode : o.modes) results.push_back(run_mode(m.model.get(), o, mode));

  std::printf("| mode | turns | turns 20-50 median / p95 s | turns 250-300 median / p95 s | p95 ratio | KV MiB (min-max) "
              "| RSS MiB at 50 / end | summaries | summary s | rebuild s | window shift s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModeResult& r : results) {
    double m1 = 0, p1 = 0, m2 = 0, p2 = 0;
    const bool early = window_stats(r.latency, 20, 50, &m1, &p1);
    const bool late = window_stats(r.latency, 250, 300, &m2, &p2);
    const peak_session_stats& s = r.final_stats;
    char early_text[64] = "-", late_text[64] = "-", ratio_text[32] = "-";
    if (early) std::snprintf(early_text, sizeof early_text, "%.3f / %.3f", m1, p1);
    if (late) std::snprintf(late_text, sizeof late_text, "%.3f / %.3f", m2, p2);
    if (early && late) std::snprintf(ratio_text, sizeof ratio_text, "%.2f", p2 / p1);
    std::printf("| %s | %d%s | %s | %s | %s | %.1f-%.1f | %.0f / %.0f | %zu | %.1f | %.2f | %.2f |\n", r.mode.c_str(),
                r.turns_done, r.stopped.empty() ? "" : " (full)", early_text, late_text, ratio_text,
                static_cast<double>(r.kv_min) / 1048576.0, static_cast<double>(r.kv_max) / 1048576.0,
                static_cast<double>(r.rss_turn50_kib) / 1024.0, static_cast<double>(r.rss_end_kib) / 1024.0,
                s.summaries, s.summary_seconds, s.rebuild_seconds,
                s.window_shift_seconds);
  }
  for (const ModeResult& r : results) {
    if (!r.stopped.empty()) std::printf("\n%s stopped after %d turns: %s\n", r.mode.c_str(), r.turns_done, r.stopped.c_str());
  }
  if (!o.csv.empty()) {
    std::ofstream csv(o.csv);
    if (!csv) throw CommandError("cannot write '" + o.csv + "'");
    csv << "mode,turn,seconds\n";
    for (const ModeResult& r : results) {
      for (size_t i = 0; i < r.latency.size(); ++i) csv << r.mode << "," << i + 1 << "," << r.latency[i] << "\n";
    }
  }
  return 0;
}
