#include "runtime/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/cpu_topology.h"
#include "core/executor.h"
#include "tokenizer/vocab.h"

namespace peak::runtime {

namespace {

const model::Model& require_encoder(const model::Model& model) {
  const model::ArchSpec& spec = model.hparams().spec();
  if (!model.hparams().embeds) {
    throw std::invalid_argument(std::string("a ") + spec.name +
                                " model is a decoder, not an encoder: it generates text (runtime::Context) and its "
                                "file gives no '" +
                                spec.name + ".pooling_type' to embed with");
  }
  return model;
}

int64_t resolve_batch(const model::Model& model, int64_t requested) {
  const int64_t n_ctx_train = model.hparams().n_ctx_train;
  if (requested < 0 || requested > n_ctx_train) {
    throw std::invalid_argument("n_batch must be between 0 (the model's context) and its context of " +
                                std::to_string(n_ctx_train) + " tokens, not " + std::to_string(requested));
  }
  return requested > 0 ? requested : n_ctx_train;
}

// Scales v to Euclidean length 1, the sum taken in double; a zero vector stays zero.
void normalize_vector(float* v, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  if (sum == 0.0) return;
  const double inverse = 1.0 / std::sqrt(sum);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] * inverse);
}

// The rows [first, end) a sliding layer's token at `row` may see, before its
// sequence's bounds apply (rows and positions differ by the sequence's first
// row): the tokens at most window / 2 away either side (a symmetric window),
// else the last `window` up to `end`. In 64 bits, so that no sum overflows.
std::pair<int64_t, int64_t> window_rows(const model::HParams& hp, int32_t row, int32_t end) {
  const int64_t window = hp.sliding_window;
  if (hp.spec().sliding == model::SlidingWindow::Symmetric) return {row - window / 2, row + window / 2 + 1};
  return {end - window, end};
}

}  // namespace

Encoder::Encoder(const model::Model& model, const EncoderParams& params)
    : model_(require_encoder(model)),
      n_batch_(resolve_batch(model, params.n_batch)),
      n_threads_(core::pass_threads(params.n_threads)),
      pool_(n_threads_) {
  // The worst cases: a full batch of one-token sequences, pooled or not, and
  // scored when the model has a classification head.
  for (model::Pooling pooling : {model::Pooling::Mean, model::Pooling::None, model::Pooling::Rank}) {
    if (pooling == model::Pooling::Rank && model_.weights().cls_output == nullptr) continue;
    graph_.reset();
    model::EncoderBatch worst{n_batch_, n_batch_, pooling};
    model::EncoderInputs inputs;
    model::build_encoder(graph_, model_.hparams(), model_.weights(), worst, inputs);
    allocator_.reserve(graph_, n_threads_);
  }
}

void Encoder::check(const std::vector<std::vector<int32_t>>& sequences, model::Pooling pooling,
                    const std::vector<int32_t>& segments) const {
  const int64_t n_vocab = model_.hparams().n_vocab;
  if (pooling == model::Pooling::Rank && model_.weights().cls_output == nullptr) {
    throw std::invalid_argument(std::string("rank pooling needs a classification head (cls.weight, cls.output.weight), "
                                            "which a model with ") +
                                model::pooling_name(model_.hparams().pooling) + " pooling does not have");
  }
  if (!segments.empty()) {
    if (segments.size() != sequences.size()) {
      throw std::invalid_argument("second_segment has " + std::to_string(segments.size()) + " entries for " +
                                  std::to_string(sequences.size()) + " sequences");
    }
    const core::Tensor* types = model_.weights().token_types;
    if (types == nullptr || types->ne[1] < 2) {
      throw std::invalid_argument("a second segment needs token type 1, which the model does not have");
    }
  }
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::vector<int32_t>& tokens = sequences[s];
    const std::string which = "sequence " + std::to_string(s);
    if (tokens.empty()) throw std::invalid_argument(which + " is empty");
    if (static_cast<int64_t>(tokens.size()) > n_batch_) {
      throw std::invalid_argument(which + " has " + std::to_string(tokens.size()) + " tokens; at most " +
                                  std::to_string(n_batch_) + " fit");
    }
    if (!segments.empty() && (segments[s] < 0 || static_cast<size_t>(segments[s]) > tokens.size())) {
      throw std::invalid_argument(which + ": its second segment starts at " + std::to_string(segments[s]) +
                                  ", outside its " + std::to_string(tokens.size()) + " tokens");
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] < 0 || tokens[i] >= n_vocab) {
        throw std::invalid_argument(which + ": token id " + std::to_string(tokens[i]) + " at index " +
                                    std::to_string(i) + " is outside the vocabulary of " + std::to_string(n_vocab));
      }
    }
  }
}

int64_t Encoder::output_dimensions(const EmbedOptions& options) const {
  if (options.dimensions < 0 || options.dimensions > n_embd()) {
    throw std::invalid_argument("dimensions " + std::to_string(options.dimensions) + " is outside 1.." +
                                std::to_string(n_embd()) + " (the model's n_embd; 0 keeps all " +
                                std::to_string(n_embd()) + ")");
  }
  return options.dimensions > 0 ? options.dimensions : n_embd();
}

int64_t Encoder::embedded_length(size_t n_tokens, bool truncate) const {
  const int64_t n = static_cast<int64_t>(n_tokens);
  return truncate ? std::min(n, n_batch_) : n;
}

std::vector<std::vector<int32_t>> Encoder::truncated(const std::vector<std::vector<int32_t>>& sequences) const {
  const int32_t end_token = model_.tokenizer().appended_end();
  std::vector<std::vector<int32_t>> cut = sequences;
  for (std::vector<int32_t>& tokens : cut) {
    if (static_cast<int64_t>(tokens.size()) <= n_batch_) continue;
    const int32_t last = tokens.back();
    tokens.resize(static_cast<size_t>(n_batch_));
    if (end_token != tokenizer::kNoToken && last == end_token && n_batch_ >= 2) tokens.back() = end_token;
  }
  return cut;
}

std::vector<std::vector<float>> Encoder::embed(const std::vector<std::vector<int32_t>>& sequences,
                                               const EmbedOptions& options,
                                               const std::vector<int32_t>& second_segment) {
  const int64_t dimensions = output_dimensions(options);
  const bool too_long = std::any_of(sequences.begin(), sequences.end(), [&](const std::vector<int32_t>& tokens) {
    return static_cast<int64_t>(tokens.size()) > n_batch_;
  });
  if (options.truncate && too_long) return embed(truncated(sequences), options, second_segment);
  const model::Pooling pooling = options.pooling.value_or(model_.hparams().pooling);
  check(sequences, pooling, second_segment);
  const bool normalize = options.normalize && pooling != model::Pooling::Rank;  // scores are not vectors
  std::vector<std::vector<float>> out;
  out.reserve(sequences.size());
  // Whole sequences, in order, as many as fit in n_batch tokens per pass.
  for (size_t first = 0; first < sequences.size();) {
    size_t end = first;
    int64_t tokens = 0;
    while (end < sequences.size() && tokens + static_cast<int64_t>(sequences[end].size()) <= n_batch_) {
      tokens += static_cast<int64_t>(sequences[end++].size());
    }
    run_batch(sequences, first, end, pooling, dimensions, normalize, second_segment, out);
    first = end;
  }
  return out;
}

void Encoder::run_batch(const std::vector<std::vector<int32_t>>& sequences, size_t first, size_t end,
                        model::Pooling pooling, int64_t dimensions, bool normalize,
                        const std::vector<int32_t>& second_segment, std::vector<std::vector<float>>& out) {
  model::EncoderBatch batch;
  batch.n_tokens = 0;
  for (size_t s = first; s < end; ++s) batch.n_tokens += static_cast<int64_t>(sequences[s].size());
  batch.n_sequences = static_cast<int64_t>(end - first);
  batch.pooling = pooling;

  graph_.reset();
  model::EncoderInputs in;
  const core::Tensor* result = model::build_encoder(graph_, model_.hparams(), model_.weights(), batch, in);
  allocator_.allocate(graph_);

  auto* tokens = static_cast<int32_t*>(in.tokens->data);
  auto* positions = static_cast<int32_t*>(in.positions->data);
  auto* key_ranges = static_cast<int32_t*>(in.key_ranges->data);
  auto* sliding = in.sliding_key_ranges != nullptr ? static_cast<int32_t*>(in.sliding_key_ranges->data) : nullptr;
  auto* pooled = in.pooled_rows != nullptr ? static_cast<int32_t*>(in.pooled_rows->data) : nullptr;
  auto* types = in.token_types != nullptr ? static_cast<int32_t*>(in.token_types->data) : nullptr;
  const bool causal = model_.hparams().causal_attention;
  int32_t row = 0;
  for (size_t s = first; s < end; ++s) {
    const std::vector<int32_t>& seq = sequences[s];
    const model::RowRange rows{row, row + static_cast<int32_t>(seq.size())};
    const int32_t second = second_segment.empty() ? rows.end - rows.first : second_segment[s];
    for (int32_t i = 0; i < static_cast<int32_t>(seq.size()); ++i, ++row) {
      tokens[row] = seq[static_cast<size_t>(i)];
      if (types != nullptr) types[row] = i < second ? 0 : 1;
      positions[row] = i;
      key_ranges[2 * row] = rows.first;
      key_ranges[2 * row + 1] = causal ? row + 1 : rows.end;
      if (sliding != nullptr) {
        const auto [first_seen, end_seen] = window_rows(model_.hparams(), row, key_ranges[2 * row + 1]);
        sliding[2 * row] = static_cast<int32_t>(std::max<int64_t>(rows.first, first_seen));
        sliding[2 * row + 1] = static_cast<int32_t>(std::min<int64_t>(key_ranges[2 * row + 1], end_seen));
      }
    }
    if (pooled != nullptr) {
      const model::RowRange p = model::pooled_rows(model_.hparams(), pooling, rows);
      pooled[2 * (s - first)] = p.first;
      pooled[2 * (s - first) + 1] = p.end;
    }
  }
  {
    const model::Model::ForwardPass pass(model_);
    core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer());
  }

  // Rank: the n_cls_out scores; else the first `dimensions` of the n_embd
  // floats, normalised after the cut.
  const bool scores = pooling == model::Pooling::Rank;
  const int64_t width = scores ? model_.hparams().n_cls_out : dimensions;
  int64_t result_row = 0;
  for (size_t s = first; s < end; ++s) {
    const int64_t rows = pooling == model::Pooling::None ? static_cast<int64_t>(sequences[s].size()) : 1;
    std::vector<float> v(static_cast<size_t>(rows * width));
    for (int64_t r = 0; r < rows; ++r, ++result_row) {
      float* dst = v.data() + r * width;
      std::memcpy(dst, result->row_ptr(result_row), static_cast<size_t>(width) * sizeof(float));
      if (normalize) normalize_vector(dst, width);
    }
    out.push_back(std::move(v));
  }
}

}  // namespace peak::runtime
