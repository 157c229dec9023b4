/* Reranking from C on the tiny rerankers that tests/runtime writes, with
   runtime::Reranker's scores for the same query and documents beside them.
   The bert cross-encoder: peak_rerank gives those scores (logits, or their
   sigmoid), peak_rerank_pair_tokens each pair's length, the model info says
   rank pooling, and an empty, NULL or too long document is refused by index,
   as are an empty query, a bad params struct, a model that is not a reranker
   and peak_embed on a reranker. The Qwen3-Reranker: the same scores, which
   are probabilities (the sigmoid leaves them), and its prompts' lengths. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

enum { kMaxDocuments = 8 };

struct reference {
  char query[256];
  size_t n_documents;
  char documents[kMaxDocuments][256];
  size_t lengths[kMaxDocuments];
  float scores[kMaxDocuments];
  size_t pair_tokens[kMaxDocuments];
};

static struct reference ref;
static struct reference qwen3_ref;

/* Reads one line without its newline; its length to *length. */
static int read_line(FILE* f, char* line, size_t size, size_t* length) {
  if (!fgets(line, (int)size, f)) return 0;
  *length = strcspn(line, "\n");
  line[*length] = '\0';
  return 1;
}

/* write_rerank_reference.cpp's format. */
static int read_reference(const char* path, struct reference* r) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t query_length = 0;
  int ok = read_line(f, r->query, sizeof r->query, &query_length) && fscanf(f, "%zu\n", &r->n_documents) == 1 &&
           r->n_documents <= kMaxDocuments;
  for (size_t i = 0; ok && i < r->n_documents; ++i) {
    ok = read_line(f, r->documents[i], sizeof r->documents[i], &r->lengths[i]);
  }
  for (size_t i = 0; ok && i < r->n_documents; ++i) ok = fscanf(f, "%f", &r->scores[i]) == 1;
  for (size_t i = 0; ok && i < r->n_documents; ++i) ok = fscanf(f, "%zu", &r->pair_tokens[i]) == 1;
  fclose(f);
  return ok;
}

/* The Qwen3-Reranker: runtime::Reranker's probabilities, with or without the
   sigmoid, and the prompts' lengths. */
static void check_qwen3_reranker(void) {
  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_RERANK_QWEN3_MODEL, NULL, &model) == PEAK_OK);
  if (!model) return;
  peak_embedder* embedder = NULL;
  CHECK(peak_embedder_create(model, NULL, &embedder) == PEAK_OK);
  const char* documents[kMaxDocuments];
  for (size_t i = 0; i < qwen3_ref.n_documents; ++i) documents[i] = qwen3_ref.documents[i];
  const size_t query_length = strlen(qwen3_ref.query);
  float scores[kMaxDocuments];
  peak_rerank_params sigmoid = peak_rerank_default_params();
  sigmoid.sigmoid = 1;
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(peak_rerank(embedder, qwen3_ref.query, query_length, documents, qwen3_ref.lengths, qwen3_ref.n_documents,
                      pass ? &sigmoid : NULL, scores) == PEAK_OK);
    for (size_t i = 0; i < qwen3_ref.n_documents; ++i) {
      CHECK(fabs((double)scores[i] - (double)qwen3_ref.scores[i]) < 1e-6);
      CHECK(scores[i] > 0.0f && scores[i] < 1.0f);
    }
  }
  size_t pair_tokens[kMaxDocuments];
  CHECK(peak_rerank_pair_tokens(embedder, qwen3_ref.query, query_length, documents, qwen3_ref.lengths,
                                qwen3_ref.n_documents, pair_tokens) == PEAK_OK);
  for (size_t i = 0; i < qwen3_ref.n_documents; ++i) CHECK(pair_tokens[i] == qwen3_ref.pair_tokens[i]);
  peak_embedder_free(embedder);
  peak_model_free(model);
}

int main(void) {
  CHECK(read_reference(PEAK_RERANK_REFERENCE, &ref));
  CHECK(read_reference(PEAK_RERANK_QWEN3_REFERENCE, &qwen3_ref));
  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_RERANK_MODEL, NULL, &model) == PEAK_OK);
  if (!model) return capi_test_summary("test_capi_rerank");

  peak_model_info info;
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(model, &info) == PEAK_OK);
  CHECK(info.is_encoder == 1);
  CHECK(info.pooling == PEAK_POOLING_RANK);

  peak_embedder* embedder = NULL;
  peak_embedder_params ep = peak_embedder_default_params();
  ep.n_threads = 2;
  CHECK(peak_embedder_create(model, &ep, &embedder) == PEAK_OK);

  const char* documents[kMaxDocuments];
  for (size_t i = 0; i < ref.n_documents; ++i) documents[i] = ref.documents[i];
  const size_t query_length = strlen(ref.query);
  float scores[kMaxDocuments];
  CHECK(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, ref.n_documents, NULL, scores) ==
        PEAK_OK);
  for (size_t i = 0; i < ref.n_documents; ++i) CHECK(fabs((double)scores[i] - (double)ref.scores[i]) < 1e-6);
  peak_rerank_params sigmoid = peak_rerank_default_params();
  sigmoid.sigmoid = 1;
  CHECK(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, ref.n_documents, &sigmoid, scores) ==
        PEAK_OK);
  for (size_t i = 0; i < ref.n_documents; ++i) {
    CHECK(fabs((double)scores[i] - 1.0 / (1.0 + exp(-(double)ref.scores[i]))) < 1e-6);
  }
  CHECK(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, 0, NULL, NULL) == PEAK_OK);

  /* Each pair's length as peak_rerank reads it: [CLS] query [SEP] document [SEP]. */
  size_t pair_tokens[kMaxDocuments];
  CHECK(peak_rerank_pair_tokens(embedder, ref.query, query_length, documents, ref.lengths, ref.n_documents,
                                pair_tokens) == PEAK_OK);
  size_t n_query = 0;
  CHECK(peak_tokenize(model, ref.query, query_length, 0, 0, NULL, 0, &n_query) == PEAK_ERR_BUFFER_TOO_SMALL);
  for (size_t i = 0; i < ref.n_documents; ++i) {
    size_t n_document = 0;
    CHECK(peak_tokenize(model, documents[i], ref.lengths[i], 0, 0, NULL, 0, &n_document) == PEAK_ERR_BUFFER_TOO_SMALL);
    CHECK(pair_tokens[i] == n_query + n_document + 3);
    CHECK(pair_tokens[i] == ref.pair_tokens[i]);
  }

  /* Bad input, named. */
  const char* bad_documents[3] = {ref.documents[0], "", ref.documents[1]};
  size_t bad_lengths[3] = {ref.lengths[0], 0, ref.lengths[1]};
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, bad_documents, bad_lengths, 3, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: document 1 is empty");
  bad_documents[1] = NULL;
  bad_lengths[1] = 4;
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, bad_documents, bad_lengths, 3, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: document 1 is NULL");
  CHECK_ERROR(peak_rerank_pair_tokens(embedder, ref.query, query_length, bad_documents, bad_lengths, 3, pair_tokens),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank_pair_tokens: document 1 is NULL");
  CHECK_ERROR(peak_rerank(embedder, ref.query, 0, documents, ref.lengths, 1, NULL, scores), PEAK_ERR_INVALID_ARGUMENT,
              "peak_rerank: the query is empty");
  CHECK_ERROR(peak_rerank(embedder, NULL, 3, documents, ref.lengths, 1, NULL, scores), PEAK_ERR_INVALID_ARGUMENT,
              "query");
  peak_rerank_params bad = peak_rerank_default_params();
  bad.struct_size = 4;
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, 1, &bad, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank_params.struct_size");
  /* A reranker gives scores, not vectors. */
  float vector[1024];
  size_t n_floats = 0;
  CHECK_ERROR(peak_embed(embedder, documents, ref.lengths, 1, NULL, vector, 1024, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "score documents with peak_rerank");
  peak_embedder_free(embedder);

  /* A pair longer than a small n_batch: the document's index. */
  ep.n_batch = 24;
  CHECK(peak_embedder_create(model, &ep, &embedder) == PEAK_OK);
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, ref.n_documents, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: document 2 with the query makes");
  peak_embedder_free(embedder);
  peak_model_free(model);

  /* An embedding model is no reranker, and peak_embed will not rank. */
  CHECK(peak_model_load(PEAK_EMBED_MODEL, NULL, &model) == PEAK_OK);
  CHECK(peak_embedder_create(model, NULL, &embedder) == PEAK_OK);
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, documents, ref.lengths, 1, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: the model is not a reranker: its pooling is mean");
  peak_embed_params rank = peak_embed_default_params();
  rank.pooling = PEAK_POOLING_RANK;
  CHECK_ERROR(peak_embed(embedder, documents, ref.lengths, 1, &rank, vector, 1024, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "come from peak_rerank");
  peak_embedder_free(embedder);
  peak_model_free(model);

  check_qwen3_reranker();
  return capi_test_summary("test_capi_rerank");
}
