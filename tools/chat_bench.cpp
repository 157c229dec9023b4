// peak bench --chat: a scripted long conversation through a peak_session, in
// each memory mode, measuring per-turn latency against the turn index, where
// each turn's time went, the KV cache bytes and the process RSS, and the time
// spent writing summaries and putting them in place.
//
// Every user turn has about --user-tokens tokens of made-up text (words from a
// fixed list, seeded), every answer --answer-tokens greedy tokens. Between
// turns the user thinks for --think-time seconds, during which only the
// session's background worker runs (a summary, a cache rebuilt after it).
// Whatever the session does when the next message arrives (putting a summary
// in place, catching up a rebuilt cache) is inside that turn's latency, as a
// user of `peak chat` would feel it. When the worker goes idle before the think
// time is over, the rest of it is skipped: nothing would run in it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "output_file.h"

namespace {

struct ChatBenchOptions {
  std::string model;
  int turns = 300;
  int user_tokens = 60;
  int answer_tokens = 60;
  std::vector<std::string> modes = {"ssskv", "window", "none"};
  peak_session_params session = peak_session_default_params();
  size_t threads = 0;
  // Reading the answer and typing the next message: the worker's time budget.
  double think_seconds = 15.0;
  std::string csv;  // per-turn latencies and their parts
};

struct TurnRecord {
  double seconds = 0;             // the whole turn, as the caller waits for it
  peak_session_turn_stats parts{};
  bool rebuilt = false;           // a new summary was put in place at its start
  bool worker_busy = false;       // the worker still ran when the message arrived
};

struct ModeResult {
  std::string mode;
  int turns_done = 0;
  std::string stopped;  // why it stopped early, if it did
  std::vector<TurnRecord> turns;
  uint64_t kv_min = UINT64_MAX, kv_max = 0;
  uint64_t kv_peak = 0;  // kv_bytes plus a cache being rebuilt, at its largest
  long rss_turn50_kib = 0, rss_end_kib = 0;
  long rss_peak_kib = 0;  // the process's high-water mark when the mode ended
  peak_session_stats final_stats{};
  double think_seconds = 0;  // thinking time actually spent (the worker was busy)
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  const auto note_kv = [&r](const peak_session_stats& st) {
    r.kv_peak = std::max<uint64_t>(r.kv_peak, st.kv_bytes + st.staging_kv_bytes);
  };
  for (int turn = 0; turn < o.turns; ++turn) {
    const std::string message = made_up_text(model, o.user_tokens, /*add_special=*/false, &seed);
    TurnRecord record;
    const peak_session_stats before = get_stats(session.get());
    record.worker_busy = before.summary_running != 0;
    const auto start = std::chrono::steady_clock::now();
    const peak_status status = peak_session_chat(session.get(), message.data(), message.size(), &gp, nullptr);
    record.seconds = seconds_since(start);
    if (status != PEAK_OK) {
      r.stopped = peak_last_error();
      break;
    }
    record.parts.struct_size = sizeof record.parts;
    check_status(peak_session_get_turn_stats(session.get(), &record.parts));
    peak_session_stats st = get_stats(session.get());
    record.rebuilt = st.summaries > before.summaries;
    r.turns.push_back(record);
    ++r.turns_done;
    r.kv_min = std::min<uint64_t>(r.kv_min, st.kv_bytes);
    r.kv_max = std::max<uint64_t>(r.kv_max, st.kv_bytes);
    note_kv(st);
    // The user thinks; only the worker runs.
    const auto think_start = std::chrono::steady_clock::now();
    while (st.summary_running && seconds_since(think_start) < o.think_seconds) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      st = get_stats(session.get());
      note_kv(st);
    }
    r.think_seconds += seconds_since(think_start);
    if (turn + 1 == 50) r.rss_turn50_kib = process_status_kib("VmRSS:");
    if (turn % 25 == 24) {
      std::fprintf(stderr, "  %s: turn %d, %.3f s, context %zu+%zu+%zu/%zu, %zu summaries\n", mode.c_str(), turn + 1,
                   record.seconds, st.prefix_tokens, st.summary_tokens, st.recent_tokens, st.n_ctx, st.summaries);
    }
  }
  r.rss_end_kib = process_status_kib("VmRSS:");
  r.rss_peak_kib = process_status_kib("VmHWM:");
  r.final_stats = get_stats(session.get());
  return r;
}

// Median and 95th percentile (nearest rank) of `v`; false when it is empty.
bool median_p95(std::vector<double> v, double* median, double* p95) {
  if (v.empty()) return false;
  std::sort(v.begin(), v.end());
  *median = v[v.size() / 2];
  *p95 = v[std::min(v.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(v.size()) + 0.5) - 1)];
  return true;
}

// "median / p95" of `v`, or "-".
std::string median_p95_text(const std::vector<double>& v) {
  double median = 0, p95 = 0;
  if (!median_p95(v, &median, &p95)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.3f / %.3f", median, p95);
  return text;
}

// The latencies of turns [first, last] (1-based), or nothing when there are fewer.
std::vector<double> turn_window(const ModeResult& r, int first, int last) {
  std::vector<double> v;
  if (static_cast<int>(r.turns.size()) < last) return v;
  for (int i = first - 1; i < last; ++i) v.push_back(r.turns[static_cast<size_t>(i)].seconds);
  return v;
}

// The turns from the first one that put a summary in place on: the steady
// state of a long conversation.
std::vector<TurnRecord> since_first_rebuild(const ModeResult& r) {
  const auto first = std::find_if(r.turns.begin(), r.turns.end(), [](const TurnRecord& t) { return t.rebuilt; });
  return std::vector<TurnRecord>(first, r.turns.end());
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

void print_latency_table(const std::vector<ModeResult>& results) {
  std::printf("| mode | turns | turns 20-50 median / p95 s | turns 250-300 median / p95 s | p95 ratio | KV MiB (min-max) "
              "| KV MiB at peak, rebuild included | RSS MiB at 50 / end / peak | summaries | summary s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModeResult& r : results) {
    double m1 = 0, p1 = 0, m2 = 0, p2 = 0;
    const std::vector<double> early = turn_window(r, 20, 50), late = turn_window(r, 250, 300);
    char ratio[32] = "-";
    if (median_p95(early, &m1, &p1) && median_p95(late, &m2, &p2)) std::snprintf(ratio, sizeof ratio, "%.2f", p2 / p1);
    const peak_session_stats& s = r.final_stats;
    char rss50[32] = "-";
    if (r.rss_turn50_kib > 0) std::snprintf(rss50, sizeof rss50, "%.0f", static_cast<double>(r.rss_turn50_kib) / 1024.0);
    std::printf("| %s | %d%s | %s | %s | %s | %.1f-%.1f | %.1f | %s / %.0f / %.0f | %zu | %.1f |\n", r.mode.c_str(),
                r.turns_done, r.stopped.empty() ? "" : " (full)", median_p95_text(early).c_str(),
                median_p95_text(late).c_str(), ratio, mib(r.kv_min), mib(r.kv_max), mib(r.kv_peak), rss50,
                static_cast<double>(r.rss_end_kib) / 1024.0, static_cast<double>(r.rss_peak_kib) / 1024.0, s.summaries,
                s.summary_seconds);
  }
}

// Turns right after a rebuild against the other turns of the steady state, and
// where the rebuilds' time went: the caller's thread or the worker.
void print_rebuild_table(const std::vector<ModeResult>& results) {
  std::printf("\n| mode | turns after a rebuild: n, median / p95 s | other turns since the first: median / p95 s "
              "| p95 ratio | hot path: rebuild s + catch-up s | worker: rebuild s | turns arriving while the worker ran "
              "| think time s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModeResult& r : results) {
    std::vector<double> after, other;
    for (const TurnRecord& t : since_first_rebuild(r)) (t.rebuilt ? after : other).push_back(t.seconds);
    double hot_rebuild = 0, hot_catch_up = 0;
    int busy = 0;
    for (const TurnRecord& t : r.turns) {
      hot_rebuild += t.parts.rebuild_seconds;
      hot_catch_up += t.parts.catch_up_seconds;
      busy += t.worker_busy ? 1 : 0;
    }
    double m1 = 0, p1 = 0, m2 = 0, p2 = 0;
    char ratio[32] = "-";
    if (median_p95(after, &m1, &p1) && median_p95(other, &m2, &p2)) std::snprintf(ratio, sizeof ratio, "%.2f", p1 / p2);
    std::printf("| %s | %zu, %s | %s | %s | %.2f + %.2f | %.2f | %d | %.0f |\n", r.mode.c_str(), after.size(),
                median_p95_text(after).c_str(), median_p95_text(other).c_str(), ratio, hot_rebuild, hot_catch_up,
                r.final_stats.worker_rebuild_seconds, busy, r.think_seconds);
  }
}

// Median seconds of each part of a turn over the steady state (all turns when
// no summary was put in place); "rest" is the turn less its parts (framing the
// message, sampling set-up, bookkeeping).
void print_parts_table(const std::vector<ModeResult>& results) {
  std::printf("\n| mode | median s per turn: rebuild | catch-up | window shift | prefill | generation | settle | rest |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModeResult& r : results) {
    std::vector<TurnRecord> turns = since_first_rebuild(r);
    if (turns.empty()) turns = r.turns;
    std::vector<double> parts[7];
    for (const TurnRecord& t : turns) {
      const peak_session_turn_stats& p = t.parts;
      const double known[6] = {p.rebuild_seconds, p.catch_up_seconds, p.window_shift_seconds,
                               p.prefill_seconds, p.generation_seconds, p.settle_seconds};
      double rest = t.seconds;
      for (int i = 0; i < 6; ++i) {
        parts[i].push_back(known[i]);
        rest -= known[i];
      }
      parts[6].push_back(rest);
    }
    std::printf("| %s |", r.mode.c_str());
    for (const std::vector<double>& v : parts) {
      double median = 0, p95 = 0;
      if (median_p95(v, &median, &p95)) {
        std::printf(" %.3f |", median);
      } else {
        std::printf(" - |");
      }
    }
    std::printf("\n");
  }
}

void write_csv(OutputFile& out, const std::vector<ModeResult>& results) {
  std::ostringstream csv;
  csv << "mode,turn,seconds,rebuilt,worker_busy,rebuild,catch_up,window_shift,prefill,generation,settle\n";
  for (const ModeResult& r : results) {
    for (size_t i = 0; i < r.turns.size(); ++i) {
      const TurnRecord& t = r.turns[i];
      const peak_session_turn_stats& p = t.parts;
      csv << r.mode << "," << i + 1 << "," << t.seconds << "," << (t.rebuilt ? 1 : 0) << "," << (t.worker_busy ? 1 : 0)
          << "," << p.rebuild_seconds << "," << p.catch_up_seconds << "," << p.window_shift_seconds << ","
          << p.prefill_seconds << "," << p.generation_seconds << "," << p.settle_seconds << "\n";
    }
  }
  const std::string bytes = csv.str();
  out.write(bytes.data(), bytes.size());
  out.commit();
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
    } else if (!std::strcmp(a, "--think-time")) {
      o.think_seconds = args.real(a, 0.0, 3600.0);
    } else if (!std::strcmp(a, "--csv")) {
      o.csv = args.value(a);
    } else {
      throw UsageError(std::string("unknown option '") + a + "' for peak bench --chat");
    }
  }
  if (o.model.empty()) throw UsageError("no model given (-m MODEL)");
  // Opened first: a path that cannot be written fails before the benchmark's
  // minutes, and the old file stays whole until the new one is.
  std::unique_ptr<OutputFile> csv;
  if (!o.csv.empty()) csv = std::make_unique<OutputFile>(o.csv, std::vector<OutputFile::Input>{{o.model, "the model"}});
  GenerationOptions g;
  g.model.repack_weights = PEAK_REPACK_AT_LOAD;  // the steady state, as in peak bench
  LoadedModel m = load_model(o.model, g, /*with_context=*/false);
  std::fprintf(stderr, "chat bench: %s, %d turns of ~%d user + %d answer tokens, recent_max %zu, summary_max %zu, "
               "trigger_discard %zu\n", o.model.c_str(), o.turns, o.user_tokens, o.answer_tokens,
               o.session.recent_max, o.session.summary_max, o.session.trigger_discard);
  std::vector<ModeResult> results;
  for (const std::string& mode : o.modes) results.push_back(run_mode(m.model.get(), o, mode));

  print_latency_table(results);
  print_rebuild_table(results);
  print_parts_table(results);
  for (const ModeResult& r : results) {
    if (!r.stopped.empty()) std::printf("\n%s stopped after %d turns: %s\n", r.mode.c_str(), r.turns_done, r.stopped.c_str());
  }
  if (csv) write_csv(*csv, results);
  return 0;
}
