/* Embeddings from C on the tiny bert model that tests/runtime writes, with
   runtime::Encoder's vectors for the same texts beside it: peak_embed gives
   those vectors (the model's pooling, normalised; CLS pooling, not
   normalised; every token's vector), normalised vectors have length 1, a
   buffer too small reports the floats needed, and an empty text, a NULL text,
   a text too long for n_batch, an unknown pooling and a chat model are refused
   with the text's index or the reason. The second version of
   peak_embed_params: `dimensions` keeps each vector's first floats, normalised
   after the cut (checked against the uncut, unnormalised vectors scaled here);
   `truncate` embeds a text too long as its first n_batch tokens (checked
   against those tokens given to peak_embed_tokens); the first version's
   struct_size still reads. peak_embed_tokens on peak_tokenize's ids gives the
   texts' reference vectors, and refuses an empty or NULL sequence, an id
   outside the vocabulary and a sequence too long, naming its index. */
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
static float other[kMaxFloats];

/* The reference texts' token ids as peak_tokenize gives them with add_special. */
static int32_t ids[kMaxTexts][128];
static size_t n_ids[kMaxTexts];
static const int32_t* id_lists[kMaxTexts];

static void tokenize_reference(const peak_model* model) {
  for (size_t i = 0; i < ref.n_texts; ++i) {
    CHECK(peak_tokenize(model, ref.texts[i], ref.lengths[i], 1, 0, ids[i], 128, &n_ids[i]) == PEAK_OK);
    id_lists[i] = ids[i];
  }
}

static double largest_difference(const float* a, const float* b, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]);
    if (d > worst) worst = d;
  }
  return worst;
}

/* dimensions d: without normalize the first d of each uncut vector exactly;
   with it, those floats divided by their own length. */
static void check_dimensions(peak_embedder* embedder, size_t d) {
  const size_t n_embd = peak_embedder_n_embd(embedder);
  const char* texts[kMaxTexts];
  for (size_t i = 0; i < ref.n_texts; ++i) texts[i] = ref.texts[i];
  peak_embed_params raw = peak_embed_default_params();
  raw.normalize = 0;
  size_t n_floats = 0;
  CHECK(peak_embed(embedder, texts, ref.lengths, ref.n_texts, &raw, other, kMaxFloats, &n_floats, NULL) == PEAK_OK);
  CHECK(n_floats == ref.n_texts * n_embd);
  peak_embed_params cut = raw;
  cut.dimensions = d;
  CHECK(peak_embed(embedder, texts, ref.lengths, ref.n_texts, &cut, out, kMaxFloats, &n_floats, NULL) == PEAK_OK);
  CHECK(n_floats == ref.n_texts * d);
  for (size_t i = 0; i < ref.n_texts; ++i) CHECK(memcmp(out + i * d, other + i * n_embd, d * sizeof(float)) == 0);
  cut.normalize = 1;
  CHECK(peak_embed(embedder, texts, ref.lengths, ref.n_texts, &cut, out, kMaxFloats, &n_floats, NULL) == PEAK_OK);
  CHECK(n_floats == ref.n_texts * d);
  for (size_t i = 0; i < ref.n_texts; ++i) {
    double sum = 0.0;
    for (size_t j = 0; j < d; ++j) sum += (double)other[i * n_embd + j] * other[i * n_embd + j];
    const double norm = sqrt(sum);
    for (size_t j = 0; j < d; ++j) CHECK(fabs(out[i * d + j] - other[i * n_embd + j] / norm) < 1e-6);
  }
}

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

  /* The first version of peak_embed_params: the defaults after normalize. */
  peak_embed_params first = peak_embed_default_params();
  first.struct_size = offsetof(peak_embed_params, dimensions);
  first.dimensions = 3; /* past the first version's end: not read */
  first.truncate = 1;
  check_case(embedder, "mean_normalized", &first);

  /* Token ids: peak_tokenize's for the texts give the texts' vectors. */
  tokenize_reference(model);
  CHECK(read_reference("mean_normalized"));
  size_t n_tok_floats = 0;
  CHECK(peak_embed_tokens(embedder, id_lists, n_ids, ref.n_texts, NULL, out, kMaxFloats, &n_tok_floats, NULL) ==
        PEAK_OK);
  CHECK(n_tok_floats == ref.n_floats);
  CHECK(largest_difference(out, ref.floats, ref.n_floats) < 1e-5);

  check_dimensions(embedder, 1);
  check_dimensions(embedder, 7);
  check_dimensions(embedder, info.n_embd);
  peak_embed_params wide = peak_embed_default_params();
  wide.dimensions = info.n_embd + 1;
  char expected[128];
  snprintf(expected, sizeof expected, "dimensions %zu is more than the model's n_embd of %zu", info.n_embd + 1,
           info.n_embd);
  CHECK_ERROR(peak_embed_tokens(embedder, id_lists, n_ids, 1, &wide, out, kMaxFloats, &n_tok_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, expected);

  /* Bad token lists, named by index. */
  const int32_t* lists[2] = {ids[0], ids[1]};
  size_t counts[2] = {n_ids[0], 0};
  CHECK_ERROR(peak_embed_tokens(embedder, lists, counts, 2, NULL, out, kMaxFloats, &n_tok_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "peak_embed_tokens: sequence 1 is empty");
  lists[1] = NULL;
  counts[1] = 2;
  CHECK_ERROR(peak_embed_tokens(embedder, lists, counts, 2, NULL, out, kMaxFloats, &n_tok_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "peak_embed_tokens: sequence 1 is NULL");
  int32_t outside[3] = {ids[0][0], ids[0][1], (int32_t)info.n_vocab};
  lists[1] = outside;
  counts[1] = 3;
  snprintf(expected, sizeof expected, "sequence 1: token id %zu at index 2 is outside the vocabulary of %zu",
           info.n_vocab, info.n_vocab);
  CHECK_ERROR(peak_embed_tokens(embedder, lists, counts, 2, NULL, out, kMaxFloats, &n_tok_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, expected);
  outside[2] = -1;
  CHECK_ERROR(peak_embed_tokens(embedder, lists, counts, 2, NULL, out, kMaxFloats, &n_tok_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "token id -1 at index 2");

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
  CHECK_ERROR(peak_embed_tokens(embedder, id_lists + 2, n_ids + 2, 1, NULL, out, kMaxFloats, &n_floats, NULL),
              PEAK_ERR_INVALID_ARGUMENT, "peak_embed_tokens: sequence 0 has");

  /* Truncated, the long text is its first 4 tokens (this vocabulary appends no
     end token: SentencePiece with BOS only), embedded whole by a wide embedder;
     with no pooling, 4 vectors. */
  CHECK(n_ids[2] > 4 && ids[2][n_ids[2] - 1] != info.eos_token);
  peak_embed_params cut = peak_embed_default_params();
  cut.truncate = 1;
  size_t n_vectors[2];
  CHECK(peak_embed(embedder, texts + 1, lengths + 1, 1, &cut, out, kMaxFloats, &n_floats, n_vectors) == PEAK_OK);
  CHECK(n_floats == info.n_embd && n_vectors[0] == 1);
  cut.pooling = PEAK_POOLING_NONE;
  CHECK(peak_embed_tokens(embedder, id_lists + 2, n_ids + 2, 1, &cut, NULL, 0, &n_floats, n_vectors) ==
        PEAK_ERR_BUFFER_TOO_SMALL);
  CHECK(n_floats == 4 * info.n_embd && n_vectors[0] == 4);
  peak_embedder_free(embedder);
  ep.n_batch = 0;
  CHECK(peak_embedder_create(model, &ep, &embedder) == PEAK_OK);
  const size_t four = 4;
  CHECK(peak_embed_tokens(embedder, id_lists + 2, &four, 1, NULL, other, kMaxFloats, &n_floats, NULL) == PEAK_OK);
  CHECK(largest_difference(out, other, info.n_embd) < 1e-6);
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
