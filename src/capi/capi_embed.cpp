// peak_embedder, peak_embed(_tokens) and peak_rerank: runtime::Encoder (and
// runtime::Reranker on it) behind the C API.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "runtime/encoder.h"
#include "runtime/reranker.h"

struct peak_embedder {
  const peak_model* model;
  std::unique_ptr<peak::runtime::Encoder> encoder;
};

namespace {

using peak::capi::at_most;
using peak::capi::fail;
using peak::capi::guarded;
using peak::capi::kMaxTokenCount;

// The pooling a peak_embed_params asks for; unset for the model's own.
bool pooling_from_c(int raw, std::optional<peak::model::Pooling>* out) {
  switch (raw) {
    case PEAK_POOLING_MODEL: *out = std::nullopt; return true;
    case PEAK_POOLING_NONE: *out = peak::model::Pooling::None; return true;
    case PEAK_POOLING_MEAN: *out = peak::model::Pooling::Mean; return true;
    case PEAK_POOLING_CLS: *out = peak::model::Pooling::Cls; return true;
    case PEAK_POOLING_LAST: *out = peak::model::Pooling::Last; return true;
    case PEAK_POOLING_RANK:
      fail(PEAK_ERR_INVALID_ARGUMENT,
           "peak_embed_params.pooling is PEAK_POOLING_RANK: a reranker's scores come "
           "from peak_rerank");
      return false;
    default: break;
  }
  fail(PEAK_ERR_INVALID_ARGUMENT, "peak_embed_params.pooling " + std::to_string(raw) +
                                      " is not a peak_pooling (-1 model, 0 none, 1 mean, 2 cls, 3 last)");
  return false;
}

// The first version of peak_embed_params ended at normalize.
constexpr size_t kEmbedParamsFirstSize = offsetof(peak_embed_params, dimensions);

// Reads peak_embed_params (either version) into the encoder's options.
bool embed_options(const peak_embedder& embedder, const peak_embed_params* params,
                   peak::runtime::EmbedOptions* options) {
  peak_embed_params p;
  if (!peak::capi::read_versioned_params(params, peak_embed_default_params(), {kEmbedParamsFirstSize},
                                         "peak_embed_params", &p) ||
      !pooling_from_c(p.pooling, &options->pooling)) {
    return false;
  }
  if (options->pooling.value_or(embedder.encoder->model().hparams().pooling) == peak::model::Pooling::Rank) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "the model is a reranker (rank pooling): score documents with peak_rerank");
    return false;
  }
  const size_t n_embd = static_cast<size_t>(embedder.encoder->n_embd());
  if (p.dimensions > n_embd) {
    fail(PEAK_ERR_INVALID_ARGUMENT, "peak_embed_params.dimensions " + std::to_string(p.dimensions) +
                                        " is more than the model's n_embd of " + std::to_string(n_embd) + " (1.." +
                                        std::to_string(n_embd) + ", or 0 for all)");
    return false;
  }
  options->normalize = p.normalize != 0;
  options->dimensions = static_cast<int64_t>(p.dimensions);
  options->truncate = p.truncate != 0;
  return true;
}

// Counts the output of checked `sequences` (n_vectors too, when given), then
// embeds them into `out` if it holds them all.
peak_status embed_checked(peak::runtime::Encoder& encoder, const std::vector<std::vector<int32_t>>& sequences,
                          const peak::runtime::EmbedOptions& options, const char* function, float* out, size_t capacity,
                          size_t* n_floats, size_t* n_vectors) {
  const bool per_token = options.pooling.value_or(encoder.model().hparams().pooling) == peak::model::Pooling::None;
  const size_t dimensions = static_cast<size_t>(encoder.output_dimensions(options));
  size_t needed = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const size_t n =
        per_token ? static_cast<size_t>(encoder.embedded_length(sequences[i].size(), options.truncate)) : 1;
    if (n_vectors) n_vectors[i] = n;
    needed += n * dimensions;
  }
  *n_floats = needed;
  if (needed > capacity) {
    return fail(PEAK_ERR_BUFFER_TOO_SMALL, std::string(function) + ": the vectors need " + std::to_string(needed) +
                                               " floats, the buffer holds " + std::to_string(capacity));
  }
  const std::vector<std::vector<float>> vectors = encoder.embed(sequences, options);
  float* at = out;
  for (const std::vector<float>& v : vectors) {
    std::memcpy(at, v.data(), v.size() * sizeof(float));
    at += v.size();
  }
  return PEAK_OK;
}

// "FUNCTION: WHAT i has N tokens, more than the embedder's n_batch of B", or "" when it fits or will be cut.
std::string too_long(const peak::runtime::Encoder& encoder, size_t n_tokens, bool truncate, const std::string& which) {
  if (truncate || static_cast<int64_t>(n_tokens) <= encoder.n_batch()) return "";
  return which + " has " + std::to_string(n_tokens) + " tokens, more than the embedder's n_batch of " +
         std::to_string(encoder.n_batch()) + " (truncate cuts it to fit)";
}

// The reranker on an embedder and its query-document pairs as the model reads them.
struct RerankPairs {
  std::unique_ptr<peak::runtime::Reranker> reranker;
  std::vector<peak::runtime::PairInput> pairs;
};

// Checks the query and documents (naming the first bad one by index, after
// `function`) and forms each pair; PEAK_OK or the failure's status.
peak_status rerank_pairs(peak_embedder& embedder, std::string_view query, const char* const* documents,
                         const size_t* lengths, size_t n_documents, const std::string& function, RerankPairs& out) {
  try {
    out.reranker = std::make_unique<peak::runtime::Reranker>(*embedder.encoder);
  } catch (const std::invalid_argument& e) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, function + ": " + e.what());
  }
  if (query.empty()) return fail(PEAK_ERR_INVALID_ARGUMENT, function + ": the query is empty");
  // Every text is tokenized alone first, which finds one the vocabulary
  // cannot spell; a prompted reranker then tokenizes its filled prompt.
  const std::vector<int32_t> query_tokens =
      peak::capi::encode_user_text(*embedder.model, query, false, false, function + ": the query");
  out.pairs.resize(n_documents);
  for (size_t i = 0; i < n_documents; ++i) {
    const std::string which = function + ": document " + std::to_string(i);
    if (!documents[i]) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is NULL");
    if (lengths[i] == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is empty");
    const std::string_view document(documents[i], lengths[i]);
    const std::vector<int32_t> document_tokens =
        peak::capi::encode_user_text(*embedder.model, document, false, false, which);
    out.pairs[i] = out.reranker->prompted() ? out.reranker->fill(query, document)
                                            : out.reranker->join(query_tokens, document_tokens);
  }
  return PEAK_OK;
}

}  // namespace

extern "C" {

peak_embedder_params peak_embedder_default_params(void) {
  peak_embedder_params p{};
  p.struct_size = sizeof(peak_embedder_params);
  p.n_batch = 0;
  p.n_threads = 0;
  return p;
}

peak_embed_params peak_embed_default_params(void) {
  peak_embed_params p{};
  p.struct_size = sizeof(peak_embed_params);
  p.pooling = PEAK_POOLING_MODEL;
  p.normalize = 1;
  return p;
}

peak_status peak_embedder_create(const peak_model* model, const peak_embedder_params* params, peak_embedder** out) {
  PEAK_CHECK_ARG(out, "peak_embedder_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(model, "peak_embedder_create: model");
  if (!has_weights(model, "peak_embedder_create")) return PEAK_ERR_INVALID_ARGUMENT;
  const peak_embedder_params p = params ? *params : peak_embedder_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_embedder_params), "peak_embedder_params") ||
      !at_most(p.n_batch, kMaxTokenCount, "peak_embedder_params.n_batch")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    peak::runtime::EncoderParams ep;
    ep.n_batch = static_cast<int64_t>(p.n_batch);
    ep.n_threads = peak::capi::thread_count(p.n_threads);
    auto e = std::make_unique<peak_embedder>();
    e->model = model;
    e->encoder = std::make_unique<peak::runtime::Encoder>(*model->model, ep);
    *out = e.release();
    return PEAK_OK;
  });
}

void peak_embedder_free(peak_embedder* embedder) { delete embedder; }

size_t peak_embedder_n_embd(const peak_embedder* embedder) {
  return embedder ? static_cast<size_t>(embedder->encoder->n_embd()) : 0;
}

peak_status peak_embed(peak_embedder* embedder, const char* const* texts, const size_t* lengths, size_t n_texts,
                       const peak_embed_params* params, float* out, size_t capacity, size_t* n_floats,
                       size_t* n_vectors) {
  PEAK_CHECK_ARG(embedder, "peak_embed: embedder");
  PEAK_CHECK_ARG(n_floats, "peak_embed: n_floats");
  *n_floats = 0;
  if (n_texts > 0) {
    PEAK_CHECK_ARG(texts, "peak_embed: texts");
    PEAK_CHECK_ARG(lengths, "peak_embed: lengths");
  }
  if (capacity > 0) PEAK_CHECK_ARG(out, "peak_embed: out");
  peak::runtime::EmbedOptions options;
  if (!embed_options(*embedder, params, &options)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    peak::runtime::Encoder& encoder = *embedder->encoder;
    std::vector<std::vector<int32_t>> sequences(n_texts);
    for (size_t i = 0; i < n_texts; ++i) {
      const std::string which = "peak_embed: text " + std::to_string(i);
      if (!texts[i]) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is NULL");
      // With add_special an empty text would still give [CLS] [SEP]: a vector
      // of nothing, which no caller means to search with.
      if (lengths[i] == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is empty");
      sequences[i] =
          peak::capi::encode_user_text(*embedder->model, std::string_view(texts[i], lengths[i]), true, false, which);
      const std::string refused = too_long(encoder, sequences[i].size(), options.truncate, which);
      if (!refused.empty()) return fail(PEAK_ERR_INVALID_ARGUMENT, refused);
    }
    return embed_checked(encoder, sequences, options, "peak_embed", out, capacity, n_floats, n_vectors);
  });
}

peak_status peak_embed_tokens(peak_embedder* embedder, const int32_t* const* tokens, const size_t* n_tokens,
                              size_t n_sequences, const peak_embed_params* params, float* out, size_t capacity,
                              size_t* n_floats, size_t* n_vectors) {
  PEAK_CHECK_ARG(embedder, "peak_embed_tokens: embedder");
  PEAK_CHECK_ARG(n_floats, "peak_embed_tokens: n_floats");
  *n_floats = 0;
  if (n_sequences > 0) {
    PEAK_CHECK_ARG(tokens, "peak_embed_tokens: tokens");
    PEAK_CHECK_ARG(n_tokens, "peak_embed_tokens: n_tokens");
  }
  if (capacity > 0) PEAK_CHECK_ARG(out, "peak_embed_tokens: out");
  peak::runtime::EmbedOptions options;
  if (!embed_options(*embedder, params, &options)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    peak::runtime::Encoder& encoder = *embedder->encoder;
    const int64_t n_vocab = encoder.model().hparams().n_vocab;
    std::vector<std::vector<int32_t>> sequences(n_sequences);
    for (size_t i = 0; i < n_sequences; ++i) {
      const std::string which = "peak_embed_tokens: sequence " + std::to_string(i);
      if (n_tokens[i] == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is empty");
      if (!tokens[i]) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is NULL");
      const std::string refused = too_long(encoder, n_tokens[i], options.truncate, which);
      if (!refused.empty()) return fail(PEAK_ERR_INVALID_ARGUMENT, refused);
      for (size_t k = 0; k < n_tokens[i]; ++k) {
        if (tokens[i][k] < 0 || tokens[i][k] >= n_vocab) {
          return fail(PEAK_ERR_INVALID_ARGUMENT, which + ": token id " + std::to_string(tokens[i][k]) + " at index " +
                                                     std::to_string(k) + " is outside the vocabulary of " +
                                                     std::to_string(n_vocab));
        }
      }
      sequences[i].assign(tokens[i], tokens[i] + n_tokens[i]);
    }
    return embed_checked(encoder, sequences, options, "peak_embed_tokens", out, capacity, n_floats, n_vectors);
  });
}

peak_rerank_params peak_rerank_default_params(void) {
  peak_rerank_params p{};
  p.struct_size = sizeof(peak_rerank_params);
  p.sigmoid = 0;
  return p;
}

peak_status peak_rerank(peak_embedder* embedder, const char* query, size_t query_length, const char* const* documents,
                        const size_t* lengths, size_t n_documents, const peak_rerank_params* params, float* scores) {
  PEAK_CHECK_ARG(embedder, "peak_rerank: embedder");
  PEAK_CHECK_ARG(query, "peak_rerank: query");
  if (n_documents > 0) {
    PEAK_CHECK_ARG(documents, "peak_rerank: documents");
    PEAK_CHECK_ARG(lengths, "peak_rerank: lengths");
    PEAK_CHECK_ARG(scores, "peak_rerank: scores");
  }
  const peak_rerank_params p = params ? *params : peak_rerank_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_rerank_params), "peak_rerank_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  return guarded([&] {
    RerankPairs pairs;
    const peak_status status =
        rerank_pairs(*embedder, {query, query_length}, documents, lengths, n_documents, "peak_rerank", pairs);
    if (status != PEAK_OK) return status;
    std::vector<float> relevance;
    try {
      relevance = pairs.reranker->score(pairs.pairs);
    } catch (const std::invalid_argument& e) {  // a pair too long for n_batch
      return fail(PEAK_ERR_INVALID_ARGUMENT, std::string("peak_rerank: ") + e.what());
    }
    const bool squash = p.sigmoid && !pairs.reranker->gives_probabilities();
    for (size_t i = 0; i < relevance.size(); ++i) {
      scores[i] =
          squash ? static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(relevance[i])))) : relevance[i];
    }
    return PEAK_OK;
  });
}

peak_status peak_rerank_pair_tokens(peak_embedder* embedder, const char* query, size_t query_length,
                                    const char* const* documents, const size_t* lengths, size_t n_documents,
                                    size_t* n_tokens) {
  PEAK_CHECK_ARG(embedder, "peak_rerank_pair_tokens: embedder");
  PEAK_CHECK_ARG(query, "peak_rerank_pair_tokens: query");
  if (n_documents > 0) {
    PEAK_CHECK_ARG(documents, "peak_rerank_pair_tokens: documents");
    PEAK_CHECK_ARG(lengths, "peak_rerank_pair_tokens: lengths");
    PEAK_CHECK_ARG(n_tokens, "peak_rerank_pair_tokens: n_tokens");
  }
  return guarded([&] {
    RerankPairs pairs;
    const peak_status status = rerank_pairs(*embedder, {query, query_length}, documents, lengths, n_documents,
                                            "peak_rerank_pair_tokens", pairs);
    if (status != PEAK_OK) return status;
    for (size_t i = 0; i < n_documents; ++i) n_tokens[i] = pairs.pairs[i].tokens.size();
    return PEAK_OK;
  });
}

}  // extern "C"
