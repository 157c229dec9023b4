// peak perplexity -m MODEL -f TEXT -c CTX: perplexity over a text in
// non-overlapping windows of CTX tokens, llama.cpp's protocol: each window
// starts with BOS (when the model adds one) and only its second half is scored,
// so every scored token sees at least CTX/2 tokens of context.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "commands.h"
#include "model_session.h"
#include "text_file.h"

namespace {

void print_help() {
  std::printf(
      "usage: peak perplexity [-m MODEL] -f TEXT [-c CTX] [options]\n"
      "  Prints the running perplexity after each window and the final PPL +/- error.\n"
      "  -f, --file FILE           the text\n"
      "  -c, --ctx-size N          window length in tokens (default 512)\n"
      "  --chunks N                score at most N windows\n"
      "%s",
      generation_options_help());
}

struct Accumulator {
  double nll = 0, nll2 = 0;  // sums of -log p and its square
  long count = 0;
  double ppl() const { return std::exp(nll / static_cast<double>(count)); }
  // llama.cpp's estimate: ppl * standard error of the mean NLL.
  double error() const {
    if (count < 2) return 0;
    const double mean = nll / static_cast<double>(count);
    const double var = nll2 / static_cast<double>(count) - mean * mean;
    return var > 0 ? ppl() * std::sqrt(var / static_cast<double>(count - 1)) : 0;
  }
};

// -log softmax(logits)[target], computed stably in double precision.
double negative_log_prob(const float* logits, size_t n_vocab, int32_t target) {
  float max_logit = logits[0];
  for (size_t i = 1; i < n_vocab; ++i) max_logit = std::max(max_logit, logits[i]);
  double sum = 0;
  for (size_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - max_logit));
  return std::log(sum) - static_cast<double>(logits[target] - max_logit);
}

}  // namespace

int run_perplexity(int argc, char** argv) {
  GenerationOptions o;
  o.context.n_ctx = 512;
  std::string text_path;
  long max_chunks = -1;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const char* a = args.peek();
    if (parse_generation_option(args, o)) continue;
    args.next();
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      print_help();
      return 0;
    } else if (!std::strcmp(a, "-f") || !std::strcmp(a, "--file")) {
      text_path = args.value(a);
    } else if (!std::strcmp(a, "--chunks")) {
      max_chunks = static_cast<long>(args.integer(a, 1, 1 << 30));
    } else {
      throw UsageError(std::string("unknown option '") + a + "' (see peak perplexity --help)");
    }
  }
  if (text_path.empty()) throw UsageError("no text given (-f FILE)");
  const int n_ctx = static_cast<int>(o.context.n_ctx);
  if (n_ctx < 4) throw UsageError("the window (-c) must be at least 4 tokens");
  const std::string text = read_text_file(text_path, "text file");

  o.context.logits_all = 1;
  if (o.context.n_batch > o.context.n_ctx) o.context.n_batch = o.context.n_ctx;
  const std::string path = o.model_path.empty() ? demo_model_path() : o.model_path;
  LoadedModel m = load_model(path, o);
  size_t n_tokens = 0;
  peak_tokenize(m.model.get(), text.data(), text.size(), 0, 0, nullptr, 0, &n_tokens);
  std::vector<int32_t> tokens(n_tokens);
  check_status(peak_tokenize(m.model.get(), text.data(), text.size(), 0, 0, tokens.data(), n_tokens, &n_tokens));
  const long n_chunks_available = static_cast<long>(tokens.size()) / n_ctx;
  if (n_chunks_available == 0) {
    throw CommandError("the text has " + std::to_string(tokens.size()) + " tokens, fewer than one window of " +
                       std::to_string(n_ctx) + " (use a smaller -c)");
  }
  const long n_chunks = max_chunks > 0 ? std::min(max_chunks, n_chunks_available) : n_chunks_available;
  std::fprintf(stderr, "perplexity: %zu tokens, %ld windows of %d, scoring the second half of each\n",
               tokens.size(), n_chunks, n_ctx);

  const size_t n_vocab = m.info.n_vocab;
  std::vector<float> logits(static_cast<size_t>(n_ctx) * n_vocab);
  std::vector<int32_t> window(static_cast<size_t>(n_ctx));
  Accumulator acc;
  for (long c = 0; c < n_chunks; ++c) {
    const size_t start = static_cast<size_t>(c) * static_cast<size_t>(n_ctx);
    std::copy(tokens.begin() + static_cast<long>(start), tokens.begin() + static_cast<long>(start) + n_ctx, window.begin());
    if (m.info.bos_token >= 0) window[0] = m.info.bos_token;  // as llama.cpp: each window starts fresh
    check_status(peak_context_kv_clear(m.context.get()));
    check_status(peak_context_eval_all_logits(m.context.get(), window.data(), window.size(), logits.data()));
    for (int j = n_ctx / 2; j < n_ctx - 1; ++j) {
      const double nll = negative_log_prob(&logits[static_cast<size_t>(j) * n_vocab], n_vocab,
                                           tokens[start + static_cast<size_t>(j) + 1]);
      acc.nll += nll;
      acc.nll2 += nll * nll;
      ++acc.count;
    }
    std::printf("[%ld]%.4f,", c + 1, acc.ppl());
    std::fflush(stdout);
  }
  std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", acc.ppl(), acc.error());
  return 0;
}
