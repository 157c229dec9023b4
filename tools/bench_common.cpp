#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_args.h"

std::string made_up_text(const peak_model* model, int target, bool add_special, uint32_t* state) {
  static const char* const kWords[] = {
      "the",      "garden", "meeting", "Alice",    "budget", "on",        "Tuesday", "we",      "agreed",
      "to",       "keep",   "costs",   "under",    "forty",  "thousand",  "and",     "Bob",     "prefers",
      "green",    "tea",    "never",   "schedule", "calls",  "before",    "nine",    "project", "Falcon",
      "deadline", "is",     "March",   "third",    "please", "remember",  "that",    "my",      "daughter",
      "plays",    "violin", "in",      "a",        "small",  "orchestra", "near",    "the",     "river"};
  constexpr size_t kCount = sizeof kWords / sizeof kWords[0];
  std::string text;
  size_t n = 0;
  while (true) {
    *state = *state * 1664525u + 1013904223u;
    if (!text.empty()) text += ' ';
    text += kWords[(*state >> 8) % kCount];
    peak_tokenize(model, text.data(), text.size(), add_special ? 1 : 0, 0, nullptr, 0, &n);
    if (static_cast<int>(n) >= target) return text + ".";
  }
}

long process_status_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
  }
  return 0;
}

std::string dominant_type(const std::string& path) {
  peak_gguf* g = nullptr;
  if (peak_gguf_open(path.c_str(), nullptr, &g) != PEAK_OK) return "?";
  std::map<peak_type, uint64_t> bytes;
  for (size_t i = 0; i < peak_gguf_n_tensors(g); ++i) {
    peak_gguf_tensor_info t;
    if (peak_gguf_get_tensor(g, i, &t) == PEAK_OK) bytes[t.type] += t.n_bytes;
  }
  peak_gguf_free(g);
  const auto best = std::max_element(bytes.begin(), bytes.end(), [](auto& a, auto& b) { return a.second < b.second; });
  return best == bytes.end() ? "?" : peak_type_name(best->first);
}

std::string model_label(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void mean_sd(const std::vector<double>& v, double* mean, double* sd) {
  double sum = 0, sum2 = 0;
  for (double x : v) sum += x, sum2 += x * x;
  const auto n = static_cast<double>(v.size());
  *mean = sum / n;
  *sd = v.size() > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / n) / (n - 1))) : 0;
}

std::vector<int> parse_list(const char* option, const char* text, int min, int max) {
  std::vector<int> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < min || v > max) {
      throw UsageError(std::string("option ") + option + ": '" + item + "' is not a number from " +
                       std::to_string(min) + " to " + std::to_string(max));
    }
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw UsageError(std::string("option ") + option + " needs a value");
  return out;
}
