/* Embeddings from C on the tiny bert model that tests/runtime writes, with
   runtime::Encoder's vectors for the same texts beside it: peak_embed gives
   those vectors (the model's pooling, normalised; CLS pooling, not
   normalised; every token's vector), normalised vectors have length 1, a
   buffer too small reports the floats needed, and an empty text, a NULL text,
   a text too long for n_batch, an unknown pooling and a chat model are refused
   with the text's index or the reason. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

enum { kMaxTexts = 8, kMaxFloats = 65536 };

struct reference {
  size_t n_texts;
  char texts[kMaxTexts][256];
  size_t lengths[kMaxTexts];
  size_t n_floats;
  float floats[kMaxFloats];
};

static struct reference ref;

/* Reads the texts, then the case named `name` (write_embed_reference.cpp's format). */
static int read_reference(const char* name) {
  FILE* f = fopen(PEAK_EMBED_REFERENCE, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%zu\n", &ref.n_texts) == 1 && ref.n_texts <= kMaxTexts;
  for (size_t i = 0; ok && i < ref.n_texts; ++i) {
    ok = fgets(ref.texts[i], sizeof ref.texts[i], f) != NULL;
    if (ok) {
      ref.lengths[i] = strcspn(ref.texts[i], "\n");
      ref.texts[i][ref.lengths[i]] = '\0';
    }
  }
  char case_name[64];
  while (ok) {
    size_t n = 0;
    ok = fscanf(f, "%63s %zu", case_name, &n) == 2 && n <= kMaxFloats;
    for (size_t i = 0; ok && i < n; ++i) ok = fscanf(f, "%f", &ref.floats[i]) == 1;
    if (ok && strcmp(case_name, name) == 0) {
      ref.n_floats = n;
      break;
    }
  }
  fclose(f);
  return ok;
}

static float out[kMaxFloats];

/* Embeds the reference texts as `params` asks and compares with case `name`. */
static void check_case(peak_embedder* embedder, const char* name, const peak_embed_params* params) {
  CHECK(read_reference(name));
  const char* texts[kMaxTexts];
  for (size_t i = 0; i < ref.n_texts; ++i) texts[i] = ref.texts[i];
  size_t n_floats = 0;
  size_t n_vectors[kMaxTexts];
  CHECK(peak_embed(embedder, texts, ref.lengths, ref.n_texts, params, out, kMaxFloats, &n_floats, n_vectors) ==
        PEAK_OK);
  CHECK(n_floats == ref.n_floats);
  const size_t n_embd = peak_embedder_n_embd(embedder);
  size_t vectors = 0;
  for (size_t i = 0; i < ref.n_texts; ++i) vectors += n_vectors[i];
  CHECK(vectors * n_embd == n_floats);
  double worst = 0.0;
  for (size_t i = 0; i < n_floats && i < ref.n_floats; ++i) {
    const double d = fabs((double)out[i] - (double)ref.floats[i]);
    if (d > worst) worst = d;
  }
  CHECK(worst < 1e-5);
  if (worst >= 1e-5) fprintf(stderr, "  %s: largest difference %g\n", name, worst);
  if (params == NULL || params->normalize) {
    for (size_t v = 0; v < vectors; ++v) {
      double sum = 0.0;
      for (size_t j = 0; j < n_embd; ++j) sum += (double)out[v * n_embd + j] * out[v * n_embd + j];
      CHECK(fabs(sqrt(sum) - 1.0) < 1e-5);
    }
  }
}

int main(void) {
  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_EMBED_MODEL, NULL, &model) == PEAK_OK);
  if (!model) return capi_test_summary("test_capi_embed");

  peak_model_info info;
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(model, &info) == PEAK_OK);
  CHECK(strcmp(info.architecture, "bert") == 0);
  CHECK(info.is_encoder == 1);
  CHECK(info.pooling == PEAK_POOLING_MEAN);
  /* The second version of the struct ends before is_encoder: those bytes stay untouched. */
  peak_model_info older;
  memset(&older, 0x5a, sizeof older);
  older.struct_size = offsetof(peak_model_info, is_encoder);
  CHECK(peak_model_get_info(model, &older) == PEAK_OK);
  CHECK(older.n_embd == info.n_embd && older.is_encoder == 0x5a5a5a5a);

  peak_embedder* embedder = NULL;
  peak_embedder_params ep = peak_embedder_default_params();
  ep.n_threads = 2;
  CHECK(peak_embedder_create(model, &ep, &embedder) == PEAK_OK);
  CHECK(peak_embedder_n_embd(embedder) == info.n_embd);

  check_case(embedder, "mean_normalized", NULL);
  peak_embed_params cls = peak_embed_default_params();
  cls.pooling = PEAK_POOLING_CLS;
  cls.normalize = 0;
  check_case(embedder, "cls_raw", &cls);
  peak_embed_params none = peak_embed_default_params();
  none.pooling = PEAK_POOLING_NONE;
  check_case(embedder, "none_normalized", &none);

  /* Too small a buffer: the floats needed, nothing written; NULL with 0 asks. */
  const char* texts[3] = {ref.texts[0], "", ref.texts[1]};
  size_t lengths[3] = {ref.lengths[0], 0, ref.lengths[1]};
  size_t n_floats = 0;
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 1, NULL, NULL, 0, &n_floats, NULL), PEAK_ERR_BUFFER_TOO_SMALL,
              "need");
  CHECK(n_floats == info.n_embd);
  out[0] = 42.0f;
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 1, NULL, out, info.n_embd - 1, &n_floats, NULL),
              PEAK_ERR_BUFFER_TOO_SMALL, "holds");
  CHECK(out[0] == 42.0f);
  CHECK(peak_embed(embedder, texts, lengths, 0, NULL, NULL, 0, &n_floats, NULL) == PEAK_OK && n_floats == 0);

  /* Bad texts, named by index. */
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 3, NULL, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "text 1 is empty");
  texts[1] = NULL;
  lengths[1] = 3;
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 3, NULL, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "text 1 is NULL");
  peak_embed_params bad = peak_embed_default_params();
  bad.pooling = 5;
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 1, &bad, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "pooling 5 is not a peak_pooling");
  bad = peak_embed_default_params();
  bad.struct_size = 4;
  CHECK_ERROR(peak_embed(embedder, texts, lengths, 1, &bad, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "peak_embed_params.struct_size");
  peak_embedder_free(embedder);

  /* A text longer than a small n_batch: its index and token count. */
  ep.n_batch = 4;
  CHECK(peak_embedder_create(model, &ep, &embedder) == PEAK_OK);
  texts[1] = ref.texts[2];
  lengths[1] = ref.lengths[2];
  CHECK_ERROR(peak_embed(embedder, texts + 1, lengths + 1, 2, NULL, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "text 0 has");
  CHECK(strstr(peak_last_error(), "more than the embedder's n_batch of 4") != NULL);
  peak_embedder_free(embedder);
  ep.n_batch = info.n_ctx_train + 1;
  CHECK_ERROR(peak_embedder_create(model, &ep, &embedder), PEAK_ERR_INVALID_ARGUMENT, "n_batch");
  CHECK(embedder == NULL);
  peak_model_free(model);

  /* A chat model is no embedding model. */
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &model) == PEAK_OK);
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(model, &info) == PEAK_OK);
  CHECK(info.is_encoder == 0 && info.pooling == PEAK_POOLING_NONE);
  CHECK_ERROR(peak_embedder_create(model, NULL, &embedder), PEAK_ERR_INVALID_ARGUMENT, "is a decoder, not an encoder");
  CHECK(embedder == NULL);
  peak_model_free(model);
  peak_embedder_free(NULL);
  CHECK(peak_embedder_n_embd(NULL) == 0);
  return capi_test_summary("test_capi_embed");
}
