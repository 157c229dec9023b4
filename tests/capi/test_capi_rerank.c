/* Reranking from C on the tiny bert reranker that tests/runtime writes, with
   runtime::Reranker's scores for the same query and documents beside it:
   peak_rerank gives those scores (logits, or their sigmoid), the model info
   says rank pooling, and an empty, NULL or too long document is refused by
   index, as are an empty query, a bad params struct, a model that is not a
   reranker and peak_embed on a reranker. */
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
};

static struct reference ref;

/* Reads one line without its newline; its length to *length. */
static int read_line(FILE* f, char* line, size_t size, size_t* length) {
  if (!fgets(line, (int)size, f)) return 0;
  *length = strcspn(line, "\n");
  line[*length] = '\0';
  return 1;
}

/* write_rerank_reference.cpp's format. */
static int read_reference(void) {
  FILE* f = fopen(PEAK_RERANK_REFERENCE, "r");
  if (!f) return 0;
  size_t query_length = 0;
  int ok = read_line(f, ref.query, sizeof ref.query, &query_length) && fscanf(f, "%zu\n", &ref.n_documents) == 1 &&
           ref.n_documents <= kMaxDocuments;
  for (size_t i = 0; ok && i < ref.n_documents; ++i) {
    ok = read_line(f, ref.documents[i], sizeof ref.documents[i], &ref.lengths[i]);
  }
  for (size_t i = 0; ok && i < ref.n_documents; ++i) ok = fscanf(f, "%f", &ref.scores[i]) == 1;
  fclose(f);
  return ok;
}

int main(void) {
  CHECK(read_reference());
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

  /* Bad input, named. */
  const char* bad_documents[3] = {ref.documents[0], "", ref.documents[1]};
  size_t bad_lengths[3] = {ref.lengths[0], 0, ref.lengths[1]};
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, bad_documents, bad_lengths, 3, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: document 1 is empty");
  bad_documents[1] = NULL;
  bad_lengths[1] = 4;
  CHECK_ERROR(peak_rerank(embedder, ref.query, query_length, bad_documents, bad_lengths, 3, NULL, scores),
              PEAK_ERR_INVALID_ARGUMENT, "peak_rerank: document 1 is NULL");
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
  return capi_test_summary("test_capi_rerank");
}
