// peak perplexity -m MODEL -f TEXT -c CTX: perplexity over a text, with
// llama-perplexity's protocol. The whole text is tokenized once, with BOS when
// the model adds one; window c holds tokens [c*CTX, (c+1)*CTX) with its first
// token replaced by BOS, is evaluated from an empty cache, and only its second
// half is scored (position j predicts token j+1 for j in [CTX/2, CTX-1)), so
// every scored token sees at least CTX/2 tokens of context.
//
// --kl-divergence-base FILE saves the base model's log-probabilities of the
// scored positions (kl_base_file.h); with --kl-divergence, another model (a
// quantization of it) is evaluated on the saved windows and compared: the KL
// divergence of its distributions from the base's, how often both pick the
// same top token, and the perplexity of both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "kl_base_file.h"
#include "model_session.h"
#include "input_file.h"
#include "text_format.h"

namespace {

constexpr size_t kDefaultWindow = 512;

struct PerplexityOptions {
  GenerationOptions gen;
  std::string text_path;
  size_t max_chunks = 0;  // 0: every window of the text
  std::string kl_base_path;
  bool kl_divergence = false;
  bool json = false;
};

void print_help() {
  std::printf(
      "usage: peak perplexity [-m MODEL] -f TEXT [-c CTX] [options]\n"
      "       peak perplexity -m BASE -f TEXT --kl-divergence-base FILE [-c CTX]\n"
      "       peak perplexity -m MODEL --kl-divergence-base FILE --kl-divergence\n"
      "  Perplexity over a text as llama-perplexity computes it: the running value after\n"
      "  each window, then the final PPL +/- its error.\n"
      "  -f, --file FILE           the text ('-': standard input)\n"
      "  -c, --ctx-size N          window length in tokens (default 512)\n"
      "  --chunks N                score at most N windows\n"
      "  --kl-divergence-base FILE without --kl-divergence: also save the model's log-probabilities\n"
      "                            to FILE (llama-perplexity's format); with it: read them from FILE\n"
      "  --kl-divergence           compare the model with the saved base: KL divergence, same top\n"
      "                            token, perplexity of both (the windows and text come from FILE)\n"
      "  --json                    print one JSON document (per-window and final values) instead\n"
      "%s",
      model_options_help().c_str());
}

PerplexityOptions parse(int argc, char** argv, bool* help) {
  PerplexityOptions o;
  o.gen.context.n_ctx = 0;  // not given yet
  ArgCursor args(argc, argv);
  while (!args.done()) {
    if (parse_model_option(args, o.gen)) continue;
    const char* a = args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      *help = true;
      return o;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      o.text_path = args.value(a);
    } else if (!std::strcmp(a, "--chunks")) {
      o.max_chunks = static_cast<size_t>(args.integer(a, 1, 1 << 30));
    } else if (!std::strcmp(a, "--kl-divergence-base")) {
      o.kl_base_path = args.value(a);
    } else if (!std::strcmp(a, "--kl-divergence")) {
      o.kl_divergence = true;
    } else if (!std::strcmp(a, "--json")) {
      o.json = true;
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak perplexity --help)");
    }
  }
  if (o.kl_divergence && o.kl_base_path.empty()) {
    throw UsageError("--kl-divergence needs the base model's log-probabilities (--kl-divergence-base FILE)");
  }
  if (!o.kl_divergence && o.text_path.empty()) throw UsageError("no text given (-f FILE)");
  if (o.gen.context.n_ctx != 0 && o.gen.context.n_ctx < 4) throw UsageError("the window (-c) must be at least 4 tokens");
  return o;
}

// Mean of a sample and the standard error of that mean, as llama-perplexity
// reports them (no error below 11 values).
struct MeanError {
  double mean = 0, error = 0;
};

MeanError mean_and_error(double sum, double sum2, size_t count) {
  if (count == 0) return {};
  const double n = static_cast<double>(count);
  const double mean = sum / n, variance = sum2 / n - mean * mean;
  return {mean, variance > 0 && count > 10 ? std::sqrt(variance / (n - 1)) : 0.0};
}

// The sum of squares' counterpart for the perplexity: -log p of each scored token.
struct NllSum {
  double nll = 0, nll2 = 0;
  size_t count = 0;
  void add(double v) {
    nll += v;
    nll2 += v * v;
    ++count;
  }
  double ppl() const { return std::exp(nll / static_cast<double>(count)); }
  // llama-perplexity's final error: ppl * the standard error of the mean NLL.
  double error() const {
    if (count < 2) return 0;
    const double n = static_cast<double>(count), mean = nll / n, variance = nll2 / n - mean * mean;
    return variance > 0 ? ppl() * std::sqrt(variance / (n - 1)) : 0;
  }
};

// log softmax(logits) as (largest logit, log of the sum of exp(logit - largest)).
struct LogSoftmax {
  float max_logit;
  size_t argmax;
  double log_sum_exp;
  LogSoftmax(const float* logits, size_t n_vocab) : max_logit(logits[0]), argmax(0) {
    for (size_t i = 1; i < n_vocab; ++i) {
      if (logits[i] > max_logit) {
        max_logit = logits[i];
        argmax = i;
      }
    }
    double sum = 0;
    for (size_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - max_logit));
    log_sum_exp = std::log(sum);
  }
  double log_prob(const float* logits, size_t i) const { return static_cast<double>(logits[i] - max_logit) - log_sum_exp; }
};

// Evaluates windows of n_ctx tokens from an empty cache, the first replaced by
// BOS when the model has one.
class WindowEvaluator {
 public:
  WindowEvaluator(LoadedModel& m, size_t n_ctx)
      : m_(m), window_(n_ctx), logits_(n_ctx * static_cast<size_t>(m.info.n_vocab)) {}
  // The logits of every position (n_ctx x n_vocab) of the window starting at `tokens`.
  const float* eval(const int32_t* tokens) {
    std::copy(tokens, tokens + window_.size(), window_.begin());
    if (m_.info.bos_token >= 0) window_[0] = m_.info.bos_token;
    check_status(peak_context_kv_clear(m_.context.get()));
    check_status(peak_context_eval_all_logits(m_.context.get(), window_.data(), window_.size(), logits_.data()));
    return logits_.data();
  }

 private:
  LoadedModel& m_;
  std::vector<int32_t> window_;
  std::vector<float> logits_;
};

void prepare_context(GenerationOptions& gen, size_t n_ctx) {
  gen.context.n_ctx = n_ctx;
  gen.context.logits_all = 1;
  gen.context.n_batch = std::min(gen.context.n_batch, n_ctx);
}

std::string model_path_of(const PerplexityOptions& o) {
  return o.gen.model_path.empty() ? demo_model_path() : o.gen.model_path;
}

int run_ppl(PerplexityOptions& o) {
  const size_t n_ctx = o.gen.context.n_ctx != 0 ? o.gen.context.n_ctx : kDefaultWindow;
  const std::string text = read_input_file(o.text_path, "text file");
  // Open the output first: an unwritable path fails before the model loads.
  std::unique_ptr<KlBaseWriter> base;
  if (!o.kl_base_path.empty()) {
    base = std::make_unique<KlBaseWriter>(
        o.kl_base_path, std::vector<OutputFile::Input>{{o.text_path, "the text"}, {model_path_of(o), "the model"}});
  }
  prepare_context(o.gen, n_ctx);
  LoadedModel m = load_model(model_path_of(o), o.gen);
  const std::vector<int32_t> tokens = tokenize(m.model.get(), text, true, false);
  const size_t n_available = tokens.size() / n_ctx;
  if (n_available == 0) {
    throw CommandError("the text has " + std::to_string(tokens.size()) + " tokens, fewer than one window of " +
                       std::to_string(n_ctx) + " (use a smaller -c)");
  }
  const size_t n_chunks = o.max_chunks > 0 ? std::min(o.max_chunks, n_available) : n_available;
  std::fprintf(stderr, "perplexity: %zu tokens, %zu windows of %zu, scoring the second half of each\n", tokens.size(),
               n_chunks, n_ctx);
  const size_t n_vocab = m.info.n_vocab;
  if (base) base->write_header(static_cast<uint32_t>(n_ctx), n_vocab, tokens.data(), n_chunks);

  WindowEvaluator evaluator(m, n_ctx);
  NllSum sum;
  std::string windows_json;
  for (size_t c = 0; c < n_chunks; ++c) {
    const int32_t* window = tokens.data() + c * n_ctx;
    const float* logits = evaluator.eval(window);
    for (size_t j = n_ctx / 2; j < n_ctx - 1; ++j) {
      const float* row = logits + j * n_vocab;
      sum.add(-LogSoftmax(row, n_vocab).log_prob(row, static_cast<size_t>(window[j + 1])));
      if (base) base->write_row(row);
    }
    if (o.json) {
      windows_json += std::string(c ? ", " : "") + "{\"window\": " + std::to_string(c + 1) +
                      ", \"ppl\": " + json_number(sum.ppl()) + "}";
    } else {
      std::printf("[%zu]%.4f,", c + 1, sum.ppl());
      std::fflush(stdout);
    }
  }
  if (base) base->finish();
  if (o.json) {
    std::printf("{\"n_tokens\": %zu, \"n_ctx\": %zu, \"n_windows\": %zu, \"n_scored\": %zu, \"windows\": [%s], "
                "\"ppl\": %s, \"ppl_error\": %s}\n",
                tokens.size(), n_ctx, n_chunks, sum.count, windows_json.c_str(), json_number(sum.ppl()).c_str(),
                json_number(sum.error()).c_str());
  } else {
    std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", sum.ppl(), sum.error());
  }
  return 0;
}

// llama-perplexity's statistics of a model Q against the base: sums over the
// scored tokens, and every token's KL divergence and probability difference
// for the percentiles.
struct KlStats {
  double sum_nll = 0, sum_nll2 = 0, sum_nll_base = 0, sum_nll_base2 = 0, sum_nll_nll_base = 0;
  double sum_kld = 0, sum_kld2 = 0, sum_p_diff = 0, sum_p_diff2 = 0, sum_p_diff4 = 0;
  size_t n_same_top = 0, count = 0;
  std::vector<float> kld_values, p_diff_values;

  // One scored position: Q's logits, the base's log-probabilities, the token that came next.
  void add(const float* logits, const std::vector<float>& base_log_probs, int32_t next) {
    const size_t n_vocab = base_log_probs.size();
    const LogSoftmax q(logits, n_vocab);
    const double nll = -q.log_prob(logits, static_cast<size_t>(next));
    const double nll_base = -static_cast<double>(base_log_probs[static_cast<size_t>(next)]);
    sum_nll += nll;
    sum_nll2 += nll * nll;
    sum_nll_base += nll_base;
    sum_nll_base2 += nll_base * nll_base;
    sum_nll_nll_base += nll * nll_base;
    // KL(base || Q) over the tokens the base gives more than e^-16.
    double kld = 0;
    size_t base_argmax = 0;
    for (size_t i = 0; i < n_vocab; ++i) {
      const double lp_base = base_log_probs[i];
      if (base_log_probs[i] > base_log_probs[base_argmax]) base_argmax = i;
      if (lp_base > -16.0) kld += std::exp(lp_base) * (lp_base - q.log_prob(logits, i));
    }
    sum_kld += kld;
    sum_kld2 += kld * kld;
    if (q.argmax == base_argmax) ++n_same_top;
    const double p_diff = std::exp(-nll) - std::exp(-nll_base);
    sum_p_diff += p_diff;
    sum_p_diff2 += p_diff * p_diff;
    sum_p_diff4 += p_diff * p_diff * p_diff * p_diff;
    kld_values.push_back(static_cast<float>(kld));
    p_diff_values.push_back(static_cast<float>(p_diff));
    ++count;
  }

  MeanError log_ppl() const { return mean_and_error(sum_nll, sum_nll2, count); }
  MeanError log_ppl_base() const { return mean_and_error(sum_nll_base, sum_nll_base2, count); }
  double log_ppl_covariance() const {
    if (count < 10) return 0;
    const double n = static_cast<double>(count);
    return (sum_nll_nll_base / n - (sum_nll / n) * (sum_nll_base / n)) / (n - 1);
  }
  MeanError log_ppl_ratio() const {
    const MeanError a = log_ppl(), b = log_ppl_base();
    const double variance = a.error * a.error + b.error * b.error - 2 * log_ppl_covariance();
    return {a.mean - b.mean, variance > 0 ? std::sqrt(variance) : 0.0};
  }
  MeanError kld() const { return mean_and_error(sum_kld, sum_kld2, count); }
  MeanError rms_p_diff() const {
    const MeanError mse = mean_and_error(sum_p_diff2, sum_p_diff4, count);
    const double rms = std::sqrt(mse.mean);
    return {rms, rms > 0 ? 0.5 / rms * mse.error : 0.0};
  }
  MeanError same_top() const {
    const double p = static_cast<double>(n_same_top) / static_cast<double>(count);
    return {p, count > 1 ? std::sqrt(p * (1 - p) / static_cast<double>(count - 1)) : 0.0};
  }
};

// Linear interpolation between the sorted values around `fraction`.
double percentile(const std::vector<float>& sorted, double fraction) {
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  const double p = fraction * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(p);
  const double t = p - static_cast<double>(i);
  return (1 - t) * sorted[i] + t * sorted[std::min(i + 1, sorted.size() - 1)];
}

struct Quantile {
  const char* label;  // as llama-perplexity prints it
  const char* key;    // in --json
  double fraction;
};
const Quantile kKldQuantiles[] = {{"Maximum", "max", 1},      {"99.9%  ", "p99_9", 0.999}, {"99.0%  ", "p99", 0.99},
                                  {"95.0%  ", "p95", 0.95},   {"90.0%  ", "p90", 0.9},     {"Median ", "median", 0.5},
                                  {"10.0%  ", "p10", 0.1},    {" 5.0%  ", "p5", 0.05},     {" 1.0%  ", "p1", 0.01},
                                  {" 0.1%  ", "p0_1", 0.001}, {"Minimum", "min", 0}};
const Quantile kPDiffQuantiles[] = {{"Maximum", "max", 1},   {"99.9%  ", "p99_9", 0.999}, {"99.0%  ", "p99", 0.99},
                                    {"95.0%  ", "p95", 0.95}, {"90.0%  ", "p90", 0.9},     {"75.0%  ", "p75", 0.75},
                                    {"Median ", "median", 0.5}, {"25.0%  ", "p25", 0.25},  {"10.0%  ", "p10", 0.1},
                                    {" 5.0%  ", "p5", 0.05},  {" 1.0%  ", "p1", 0.01},     {" 0.1%  ", "p0_1", 0.001},
                                    {"Minimum", "min", 0}};

std::string json_mean_error(const char* key, MeanError v) {
  return std::string("\"") + key + "\": " + json_number(v.mean) + ", \"" + key + "_error\": " + json_number(v.error);
}

template <size_t N>
std::string json_quantiles(const Quantile (&quantiles)[N], const std::vector<float>& sorted) {
  std::string out = "{";
  for (size_t i = 0; i < N; ++i) {
    out += std::string(i ? ", " : "") + "\"" + quantiles[i].key + "\": " + json_number(percentile(sorted, quantiles[i].fraction));
  }
  return out + "}";
}

void print_kl_summary(KlStats& s) {
  std::sort(s.kld_values.begin(), s.kld_values.end());
  std::sort(s.p_diff_values.begin(), s.p_diff_values.end());
  const MeanError log_ppl = s.log_ppl(), log_ppl_base = s.log_ppl_base(), ratio = s.log_ppl_ratio();
  const double ppl = std::exp(log_ppl.mean), ppl_base = std::exp(log_ppl_base.mean);
  const double ppl_error = ppl * log_ppl.error, ppl_base_error = ppl_base * log_ppl_base.error;
  const double covariance = s.log_ppl_covariance();
  std::printf("====== Perplexity statistics ======\n");
  std::printf("Mean PPL(Q)                   : %10.6f ± %10.6f\n", ppl, ppl_error);
  std::printf("Mean PPL(base)                : %10.6f ± %10.6f\n", ppl_base, ppl_base_error);
  if (log_ppl.error > 0 && log_ppl_base.error > 0) {
    std::printf("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100.0 * covariance / (log_ppl.error * log_ppl_base.error));
  }
  std::printf("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", ratio.mean, ratio.error);
  std::printf("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", std::exp(ratio.mean), std::exp(ratio.mean) * ratio.error);
  const double diff_variance =
      ppl_error * ppl_error + ppl_base_error * ppl_base_error - 2 * ppl * ppl_base * covariance;
  std::printf("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n\n", ppl - ppl_base,
              diff_variance > 0 ? std::sqrt(diff_variance) : 0.0);

  std::printf("====== KL divergence statistics ======\n");
  const MeanError kld = s.kld();
  std::printf("Mean    KLD: %10.6f ± %10.6f\n", kld.mean, kld.error);
  for (const Quantile& q : kKldQuantiles) std::printf("%s KLD: %10.6f\n", q.label, percentile(s.kld_values, q.fraction));
  std::printf("\n====== Token probability statistics ======\n");
  const MeanError p_diff = mean_and_error(s.sum_p_diff, s.sum_p_diff2, s.count);
  std::printf("Mean    Δp: %6.3f ± %5.3f %%\n", 100.0 * p_diff.mean, 100.0 * p_diff.error);
  for (const Quantile& q : kPDiffQuantiles) {
    std::printf("%s Δp: %6.3f%%\n", q.label, 100.0 * percentile(s.p_diff_values, q.fraction));
  }
  const MeanError rms = s.rms_p_diff(), top = s.same_top();
  std::printf("RMS Δp    : %6.3f ± %5.3f %%\n", 100.0 * rms.mean, 100.0 * rms.error);
  std::printf("Same top p: %6.3f ± %5.3f %%\n", 100.0 * top.mean, 100.0 * top.error);
}

void print_kl_json(KlStats& s, size_t n_ctx, size_t n_windows, const std::string& windows_json) {
  std::sort(s.kld_values.begin(), s.kld_values.end());
  std::sort(s.p_diff_values.begin(), s.p_diff_values.end());
  const MeanError log_ppl = s.log_ppl(), log_ppl_base = s.log_ppl_base();
  const MeanError ppl{std::exp(log_ppl.mean), std::exp(log_ppl.mean) * log_ppl.error};
  const MeanError ppl_base{std::exp(log_ppl_base.mean), std::exp(log_ppl_base.mean) * log_ppl_base.error};
  std::printf("{\"n_ctx\": %zu, \"n_windows\": %zu, \"n_scored\": %zu, \"windows\": [%s], %s, %s, %s, %s, "
              "\"kld_quantiles\": %s, %s, \"delta_p_quantiles\": %s, %s, %s}\n",
              n_ctx, n_windows, s.count, windows_json.c_str(), json_mean_error("ppl", ppl).c_str(),
              json_mean_error("ppl_base", ppl_base).c_str(), json_mean_error("ln_ppl_ratio", s.log_ppl_ratio()).c_str(),
              json_mean_error("kld", s.kld()).c_str(), json_quantiles(kKldQuantiles, s.kld_values).c_str(),
              json_mean_error("delta_p", mean_and_error(s.sum_p_diff, s.sum_p_diff2, s.count)).c_str(),
              json_quantiles(kPDiffQuantiles, s.p_diff_values).c_str(),
              json_mean_error("rms_delta_p", s.rms_p_diff()).c_str(), json_mean_error("same_top_p", s.same_top()).c_str());
}

int run_kl_divergence(PerplexityOptions& o) {
  KlBaseReader base(o.kl_base_path);
  const size_t n_ctx = base.n_ctx();
  if (o.gen.context.n_ctx != 0 && o.gen.context.n_ctx != n_ctx) {
    throw UsageError("the base '" + o.kl_base_path + "' has windows of " + std::to_string(n_ctx) + " tokens, not " +
                     std::to_string(o.gen.context.n_ctx) + " (-c)");
  }
  const std::string text = o.text_path.empty() ? std::string() : read_input_file(o.text_path, "text file");
  prepare_context(o.gen, n_ctx);
  LoadedModel m = load_model(model_path_of(o), o.gen);
  const size_t n_vocab = m.info.n_vocab;
  base.check_vocabulary(n_vocab);
  const std::vector<int32_t>& tokens = base.tokens();
  if (!o.text_path.empty()) {
    const std::vector<int32_t> own = tokenize(m.model.get(), text, true, false);
    if (own.size() < tokens.size() || !std::equal(tokens.begin(), tokens.end(), own.begin())) {
      throw CommandError("the text tokenizes differently from the tokens saved in '" + o.kl_base_path +
                         "' (another text, or a model with another tokenizer)");
    }
  }
  const size_t n_chunks = o.max_chunks > 0 ? std::min(o.max_chunks, base.n_chunk()) : base.n_chunk();
  std::fprintf(stderr, "kl-divergence: %zu windows of %zu from '%s', scoring the second half of each\n", n_chunks, n_ctx,
               o.kl_base_path.c_str());

  WindowEvaluator evaluator(m, n_ctx);
  KlStats stats;
  std::string windows_json;
  if (!o.json) {
    std::printf("chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              "
                "Δp RMS            Same top p\n");
  }
  for (size_t c = 0; c < n_chunks; ++c) {
    const int32_t* window = tokens.data() + c * n_ctx;
    const float* logits = evaluator.eval(window);
    for (size_t j = n_ctx / 2; j < n_ctx - 1; ++j) stats.add(logits + j * n_vocab, base.next_row(), window[j + 1]);
    const MeanError log_ppl = stats.log_ppl(), ratio = stats.log_ppl_ratio(), kld = stats.kld();
    const MeanError rms = stats.rms_p_diff(), top = stats.same_top();
    const double ppl = std::exp(log_ppl.mean);
    if (o.json) {
      windows_json += std::string(c ? ", " : "") + "{\"window\": " + std::to_string(c + 1) + ", " +
                      json_mean_error("ppl", {ppl, ppl * log_ppl.error}) + ", " + json_mean_error("ln_ppl_ratio", ratio) +
                      ", " + json_mean_error("kld", kld) + ", " + json_mean_error("rms_delta_p", rms) + ", " +
                      json_mean_error("same_top_p", top) + "}";
    } else {
      std::printf("%4zu    %9.4f ± %9.4f    %10.5f ± %10.5f    %10.5f ± %10.5f    %6.3f ± %6.3f %%    %6.3f ± %6.3f %%\n",
                  c + 1, ppl, ppl * log_ppl.error, ratio.mean, ratio.error, kld.mean, kld.error, 100.0 * rms.mean,
                  100.0 * rms.error, 100.0 * top.mean, 100.0 * top.error);
      std::fflush(stdout);
    }
  }
  if (o.json) {
    print_kl_json(stats, n_ctx, n_chunks, windows_json);
  } else {
    std::printf("\n");
    print_kl_summary(stats);
  }
  return 0;
}

}  // namespace

int run_perplexity(int argc, char** argv) {
  bool help = false;
  PerplexityOptions o = parse(argc, argv, &help);
  if (help) {
    print_help();
    return 0;
  }
  return o.kl_divergence ? run_kl_divergence(o) : run_ppl(o);
}
