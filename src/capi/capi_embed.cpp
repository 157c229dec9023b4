// peak_embedder, peak_embed and peak_rerank: runtime::Encoder (and
// runtime::Reranker on it) behind the C API.
#include <cmath>
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
  const peak_embed_params p = params ? *params : peak_embed_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_embed_params), "peak_embed_params")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  peak::runtime::EmbedOptions options;
  if (!pooling_from_c(p.pooling, &options.pooling)) return PEAK_ERR_INVALID_ARGUMENT;
  options.normalize = p.normalize != 0;
  return guarded([&] {
    peak::runtime::Encoder& encoder = *embedder->encoder;
    const peak::model::Pooling pooling = options.pooling.value_or(encoder.model().hparams().pooling);
    if (pooling == peak::model::Pooling::Rank) {
      return fail(PEAK_ERR_INVALID_ARGUMENT,
                  "peak_embed: the model is a reranker (rank pooling); score documents with peak_rerank");
    }
    std::vector<std::vector<int32_t>> sequences(n_texts);
    const size_t n_embd = static_cast<size_t>(encoder.n_embd());
    size_t needed = 0;
    for (size_t i = 0; i < n_texts; ++i) {
      const std::string which = "peak_embed: text " + std::to_string(i);
      if (!texts[i]) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is NULL");
      // With add_special an empty text would still give [CLS] [SEP]: a vector
      // of nothing, which no caller means to search with.
      if (lengths[i] == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is empty");
      sequences[i] =
          peak::capi::encode_user_text(*embedder->model, std::string_view(texts[i], lengths[i]), true, false, which);
      if (static_cast<int64_t>(sequences[i].size()) > encoder.n_batch()) {
        return fail(PEAK_ERR_INVALID_ARGUMENT, which + " has " + std::to_string(sequences[i].size()) +
                                                   " tokens, more than the embedder's n_batch of " +
                                                   std::to_string(encoder.n_batch()));
      }
      const size_t n = pooling == peak::model::Pooling::None ? sequences[i].size() : 1;
      if (n_vectors) n_vectors[i] = n;
      needed += n * n_embd;
    }
    *n_floats = needed;
    if (needed > capacity) {
      return fail(PEAK_ERR_BUFFER_TOO_SMALL, "peak_embed: the vectors need " + std::to_string(needed) +
                                                 " floats, the buffer holds " + std::to_string(capacity));
    }
    const std::vector<std::vector<float>> vectors = encoder.embed(sequences, options);
    float* at = out;
    for (const std::vector<float>& v : vectors) {
      std::memcpy(at, v.data(), v.size() * sizeof(float));
      at += v.size();
    }
    return PEAK_OK;
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
    std::unique_ptr<peak::runtime::Reranker> reranker;
    try {
      reranker = std::make_unique<peak::runtime::Reranker>(*embedder->encoder);
    } catch (const std::invalid_argument& e) {
      return fail(PEAK_ERR_INVALID_ARGUMENT, std::string("peak_rerank: ") + e.what());
    }
    if (query_length == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: the query is empty");
    const std::vector<int32_t> query_tokens = peak::capi::encode_user_text(
        *embedder->model, std::string_view(query, query_length), false, false, "peak_rerank: the query");
    std::vector<std::vector<int32_t>> document_tokens(n_documents);
    for (size_t i = 0; i < n_documents; ++i) {
      const std::string which = "peak_rerank: document " + std::to_string(i);
      if (!documents[i]) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is NULL");
      if (lengths[i] == 0) return fail(PEAK_ERR_INVALID_ARGUMENT, which + " is empty");
      document_tokens[i] = peak::capi::encode_user_text(*embedder->model, std::string_view(documents[i], lengths[i]),
                                                        false, false, which);
    }
    std::vector<float> logits;
    try {
      logits = reranker->score(query_tokens, document_tokens);
    } catch (const std::invalid_argument& e) {  // a pair too long for n_batch
      return fail(PEAK_ERR_INVALID_ARGUMENT, std::string("peak_rerank: ") + e.what());
    }
    for (size_t i = 0; i < logits.size(); ++i) {
      scores[i] = p.sigmoid ? static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logits[i])))) : logits[i];
    }
    return PEAK_OK;
  });
}

}  // extern "C"
