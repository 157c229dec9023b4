#include "kl_base_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <sys/stat.h>

#include "model_session.h"

namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr uint32_t kMaxWindow = 1u << 24;  // as -c
constexpr size_t kHeaderBytes = sizeof kMagic + 3 * sizeof(int32_t);
// Log-probabilities more than this below the largest are stored as the minimum.
constexpr float kLogProbRange = 16.0f;

size_t scored_per_window(uint32_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

// a * b, or false when it overflows.
bool multiply(uint64_t a, uint64_t b, uint64_t* product) { return !__builtin_mul_overflow(a, b, product); }

}  // namespace

size_t kl_base_row_length(size_t n_vocab) { return 2 * ((n_vocab + 1) / 2) + 4; }

KlBaseWriter::KlBaseWriter(const std::string& path, const std::vector<OutputFile::Input>& inputs)
    : file_(path, inputs) {}

void KlBaseWriter::write_header(uint32_t n_ctx, size_t n_vocab, const int32_t* tokens, size_t n_chunk) {
  n_vocab_ = n_vocab;
  row_.assign(kl_base_row_length(n_vocab), 0);
  const int32_t sizes[2] = {static_cast<int32_t>(n_vocab), static_cast<int32_t>(n_chunk)};
  const size_t n_tokens = n_chunk * n_ctx;
  file_.write(kMagic, sizeof kMagic);
  file_.write(&n_ctx, sizeof n_ctx);
  file_.write(sizes, sizeof sizes);
  file_.write(tokens, sizeof(int32_t) * n_tokens);
}

void KlBaseWriter::write_row(const float* logits) {
  const size_t n = n_vocab_;
  const float max_logit = *std::max_element(logits, logits + n);
  const float min_logit = std::max(*std::min_element(logits, logits + n), max_logit - kLogProbRange);
  double sum_exp = 0;
  for (size_t i = 0; i < n; ++i) sum_exp += std::exp(static_cast<double>(logits[i] - max_logit));
  const float log_sum_exp = static_cast<float>(std::log(sum_exp));
  const float header[2] = {(max_logit - min_logit) / 65535.0f, min_logit - max_logit - log_sum_exp};
  std::memcpy(row_.data(), header, sizeof header);
  uint16_t* q = row_.data() + 4;
  for (size_t i = 0; i < n; ++i) {
    q[i] = header[0] > 0 && logits[i] > min_logit
               ? static_cast<uint16_t>(std::min(65535L, std::lrint((logits[i] - min_logit) / header[0])))
               : 0;
  }
  file_.write(row_.data(), sizeof(uint16_t) * row_.size());
}

void KlBaseWriter::finish() { file_.commit(); }

KlBaseReader::KlBaseReader(const std::string& path) : path_(path) {
  const std::string named = "the KL divergence base '" + path + "'";
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw CommandError("cannot read " + named + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fileno(file_), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw CommandError("cannot read " + named + ": it is not a regular file");
  }
  char magic[sizeof kMagic];
  uint32_t n_ctx = 0;
  int32_t sizes[2] = {0, 0};
  if (std::fread(magic, sizeof magic, 1, file_) != 1 || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    throw CommandError(named + " is not a file of base log-probabilities (no \"_logits_\" magic)");
  }
  if (std::fread(&n_ctx, sizeof n_ctx, 1, file_) != 1 || std::fread(sizes, sizeof sizes, 1, file_) != 1) {
    throw CommandError(named + " is truncated in its header");
  }
  if (n_ctx < 4 || n_ctx > kMaxWindow) {
    throw CommandError(named + " has windows of " + std::to_string(n_ctx) + " tokens; they must be between 4 and " +
                       std::to_string(kMaxWindow));
  }
  if (sizes[0] < 1) throw CommandError(named + " has a vocabulary of " + std::to_string(sizes[0]) + " tokens");
  if (sizes[1] < 1) throw CommandError(named + " has " + std::to_string(sizes[1]) + " windows");
  n_ctx_ = n_ctx;
  n_vocab_ = static_cast<size_t>(sizes[0]);
  n_chunk_ = static_cast<size_t>(sizes[1]);

  // The size the header announces, exactly: the tokens, then the rows.
  const uint64_t row_bytes = kl_base_row_length(n_vocab_) * sizeof(uint16_t);
  uint64_t n_tokens = 0, n_rows = 0, rows_bytes = 0;
  const bool fits = multiply(n_chunk_, n_ctx_, &n_tokens) && multiply(n_chunk_, scored_per_window(n_ctx_), &n_rows) &&
                    multiply(n_rows, row_bytes, &rows_bytes) && n_tokens * sizeof(int32_t) <= UINT64_MAX - kHeaderBytes &&
                    rows_bytes <= UINT64_MAX - kHeaderBytes - n_tokens * sizeof(int32_t);
  const uint64_t expected = fits ? kHeaderBytes + n_tokens * sizeof(int32_t) + rows_bytes : 0;
  if (!fits || static_cast<uint64_t>(st.st_size) != expected) {
    throw CommandError(named + " has " + std::to_string(st.st_size) + " bytes, but its header announces " +
                       std::to_string(n_chunk_) + " windows of " + std::to_string(n_ctx_) + " tokens and a vocabulary of " +
                       std::to_string(n_vocab_) + (fits ? " (" + std::to_string(expected) + " bytes)" : ""));
  }
  tokens_.resize(n_tokens);
  if (std::fread(tokens_.data(), sizeof(int32_t), tokens_.size(), file_) != tokens_.size()) {
    throw CommandError("cannot read the tokens of " + named);
  }
  row_.resize(kl_base_row_length(n_vocab_));
  log_probs_.resize(n_vocab_);
}

KlBaseReader::~KlBaseReader() {
  if (file_) std::fclose(file_);
}

void KlBaseReader::check_vocabulary(size_t n_vocab) const {
  const std::string named = "the KL divergence base '" + path_ + "'";
  if (n_vocab != n_vocab_) {
    throw CommandError(named + " was written for a vocabulary of " + std::to_string(n_vocab_) +
                       " tokens, the model has " + std::to_string(n_vocab));
  }
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] < 0 || static_cast<size_t>(tokens_[i]) >= n_vocab) {
      throw CommandError(named + " has token " + std::to_string(tokens_[i]) + " at position " + std::to_string(i) +
                         ", outside the vocabulary of " + std::to_string(n_vocab));
    }
  }
}

const std::vector<float>& KlBaseReader::next_row() {
  if (std::fread(row_.data(), sizeof(uint16_t), row_.size(), file_) != row_.size()) {
    throw CommandError("cannot read row " + std::to_string(rows_read_) + " of '" + path_ + "'");
  }
  float header[2];
  std::memcpy(header, row_.data(), sizeof header);
  if (!std::isfinite(header[0]) || !std::isfinite(header[1]) || header[0] < 0 || header[1] > 0) {
    throw CommandError("row " + std::to_string(rows_read_) + " of '" + path_ + "' has a scale or minimum (" +
                       format_number(header[0]) + ", " + format_number(header[1]) + ") that is not a log-probability's");
  }
  const uint16_t* q = row_.data() + 4;
  for (size_t i = 0; i < n_vocab_; ++i) log_probs_[i] = header[0] * static_cast<float>(q[i]) + header[1];
  ++rows_read_;
  return log_probs_;
}
