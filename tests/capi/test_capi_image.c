/* Images from C on the tiny Gemma 3 image encoder that tests/runtime writes,
   with the naive double-precision reference's embeddings of the test picture
   beside it: peak_image_encode gives them from the picture's PNG (decoded and
   resized by peak) and from the resized pixels as RGB and as padded RGBA rows;
   peak_projector_get_info describes the encoder; a buffer too small reports
   the floats needed; a file that is no picture, bad pixel arguments, a
   language model given as a projector and a projector given as a language
   model are refused, naming why. peak_context_eval_embeddings on stories260K:
   rows equal to tokens' embeddings give the tokens' logits. A session on
   stories260K with the 64-wide projector takes the photo: the same answer
   twice, the message shows one picture, a saved session keeps it; the
   refusals of a session without a projector, rows of another length and a
   projector of another width. SmolVLM's tiles on a tiny idefics3 projector:
   the layout and texts of the photo, a session taking it by its size.
   Qwen2.5-VL's pictures, placed by row and column by a qwen2vl model. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

enum { kMaxFloats = 4096, kSide = 32 };

static float reference[kMaxFloats];
static size_t n_reference = 0;

static int read_reference(void) {
  FILE* f = fopen(PEAK_IMAGE_REFERENCE, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%zu", &n_reference) == 1 && n_reference <= kMaxFloats;
  for (size_t i = 0; ok && i < n_reference; ++i) ok = fscanf(f, "%f", &reference[i]) == 1;
  fclose(f);
  return ok;
}

/* The whole file in a malloc'd buffer (*size bytes); NULL when unreadable. */
static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* bytes = n > 0 ? (uint8_t*)malloc((size_t)n) : NULL;
  *size = bytes && fread(bytes, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
  fclose(f);
  return bytes;
}

/* The largest difference from the reference, relative to its largest value. */
static double relative_difference(const float* got, size_t n) {
  double diff = 0.0, largest = 1.0;
  for (size_t i = 0; i < n && i < n_reference; ++i) {
    diff = fmax(diff, fabs((double)got[i] - reference[i]));
    largest = fmax(largest, fabs((double)reference[i]));
  }
  return n == n_reference ? diff / largest : 1.0;
}

static void check_encodes_like_the_reference(peak_image_encoder* encoder, const peak_image* image) {
  static float out[kMaxFloats];
  size_t n = 0;
  CHECK(peak_image_encode(encoder, image, out, kMaxFloats, &n) == PEAK_OK);
  CHECK(n == n_reference);
  CHECK(relative_difference(out, n) < 1e-4);
}

/* Row `token` of stories260K's token_embd (F32), read from the file. */
static int read_embedding_row(const peak_gguf* gguf, FILE* f, size_t n_embd, int32_t token, float* row) {
  size_t index = 0;
  peak_gguf_tensor_info t;
  if (peak_gguf_lookup_tensor(gguf, "token_embd.weight", &index) != PEAK_OK ||
      peak_gguf_get_tensor(gguf, index, &t) != PEAK_OK || t.type != PEAK_TYPE_F32 || (size_t)t.ne[0] != n_embd) {
    return 0;
  }
  const long at = (long)(peak_gguf_data_offset(gguf) + t.offset + (uint64_t)token * n_embd * sizeof(float));
  return fseek(f, at, SEEK_SET) == 0 && fread(row, sizeof(float), n_embd, f) == n_embd;
}

/* peak_context_eval_embeddings on stories260K: rows equal to tokens'
   embeddings give the tokens' logits; attending both ways gives others; bad
   calls are refused. */
static void check_eval_embeddings(void) {
  const char* path = PEAK_SHARED_DIR "/models/stories260K.gguf";
  peak_model* model = NULL;
  CHECK(peak_model_load(path, NULL, &model) == PEAK_OK);
  peak_gguf* gguf = NULL;
  CHECK(peak_gguf_open(path, NULL, &gguf) == PEAK_OK);
  FILE* f = fopen(path, "rb");
  if (!model || !gguf || !f) return;
  peak_model_info info;
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(model, &info) == PEAK_OK);
  const size_t n_embd = info.n_embd, n_vocab = info.n_vocab;
  const int32_t tokens[] = {1, 403, 261, 320, 29};
  float* rows = (float*)malloc(4 * n_embd * sizeof(float));
  for (int i = 0; i < 4; ++i) CHECK(read_embedding_row(gguf, f, n_embd, tokens[i + 1], rows + i * n_embd));

  peak_context_params params = peak_context_default_params();
  params.n_ctx = 16;
  params.n_batch = 4;
  params.type_k = params.type_v = PEAK_TYPE_F32;
  peak_context *by_tokens = NULL, *by_rows = NULL, *both_ways = NULL;
  CHECK(peak_context_create(model, &params, &by_tokens) == PEAK_OK);
  CHECK(peak_context_create(model, &params, &by_rows) == PEAK_OK);
  CHECK(peak_context_create(model, &params, &both_ways) == PEAK_OK);
  CHECK(peak_context_eval(by_tokens, tokens, 5) == PEAK_OK);
  CHECK(peak_context_eval(by_rows, tokens, 1) == PEAK_OK);
  CHECK(peak_context_eval_embeddings(by_rows, rows, 4, 0) == PEAK_OK);
  CHECK(peak_context_eval(both_ways, tokens, 1) == PEAK_OK);
  CHECK(peak_context_eval_embeddings(both_ways, rows, 4, 1) == PEAK_OK);
  CHECK(peak_context_n_used(by_rows) == 5);
  double same = 0.0, other = 0.0;
  for (size_t v = 0; v < n_vocab; ++v) {
    same = fmax(same, fabs((double)peak_context_get_logits(by_tokens)[v] - peak_context_get_logits(by_rows)[v]));
    other = fmax(other, fabs((double)peak_context_get_logits(by_tokens)[v] - peak_context_get_logits(both_ways)[v]));
  }
  CHECK(same < 1e-5);
  CHECK(other > 1e-3);

  CHECK_ERROR(peak_context_eval_embeddings(by_rows, rows, 0, 0), PEAK_ERR_INVALID_ARGUMENT, "n_rows is 0");
  CHECK_ERROR(peak_context_eval_embeddings(by_rows, NULL, 1, 0), PEAK_ERR_INVALID_ARGUMENT, "rows is NULL");
  rows[n_embd + 2] = NAN;
  CHECK_ERROR(peak_context_eval_embeddings(by_rows, rows, 4, 0), PEAK_ERR_INVALID_ARGUMENT, "row 1 holds nan at 2");
  CHECK(peak_context_n_used(by_rows) == 5);
  float* many = (float*)calloc(12 * n_embd, sizeof(float));
  CHECK_ERROR(peak_context_eval_embeddings(by_rows, many, 12, 0), PEAK_ERR_CONTEXT_FULL, "12 rows do not fit");
  CHECK_ERROR(peak_context_eval_embeddings(by_rows, many, 5, 1), PEAK_ERR_INVALID_ARGUMENT,
              "must fit one batch of n_batch 4");
  CHECK(peak_context_n_used(by_rows) == 5);

  free(many);
  free(rows);
  fclose(f);
  peak_context_free(by_tokens);
  peak_context_free(by_rows);
  peak_context_free(both_ways);
  peak_gguf_free(gguf);
  peak_model_free(model);
}

/* The greedy answer to `text` with `rows` attached, written to `answer`. */
static int on_text(const char* text, size_t length, void* user) {
  strncat((char*)user, text, length);
  return 1;
}
static peak_status answer_with_picture(peak_session* session, const float* rows, size_t n_floats, const char* text,
                                       char* answer) {
  answer[0] = '\0';
  peak_status st = peak_session_attach_image(session, rows, n_floats);
  if (st != PEAK_OK) return st;
  peak_generate_params g = peak_generate_default_params();
  g.max_tokens = 12;
  g.on_text = on_text;
  g.user_data = answer;
  return peak_session_chat(session, text, strlen(text), &g, NULL);
}

static void check_session_pictures(const peak_image* photo) {
  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &model) == PEAK_OK);
  peak_projector *projector = NULL, *other_width = NULL;
  CHECK(peak_projector_load(PEAK_IMAGE_PROJECTOR_64, NULL, &projector) == PEAK_OK);
  CHECK(peak_projector_load(PEAK_IMAGE_PROJECTOR, NULL, &other_width) == PEAK_OK);
  peak_image_encoder* encoder = NULL;
  CHECK(peak_image_encoder_create(projector, NULL, &encoder) == PEAK_OK);
  if (!model || !encoder || !other_width) return;
  static float rows[kMaxFloats];
  size_t n_floats = 0;
  CHECK(peak_image_encode(encoder, photo, rows, kMaxFloats, &n_floats) == PEAK_OK);

  peak_session_params params = peak_session_default_params();
  params.chat_template = "raw";
  params.sampler.temperature = 0.0f;
  params.n_threads = 1;
  params.projector = projector;
  peak_session *session = NULL, *twin = NULL, *restored = NULL;
  CHECK(peak_session_create(model, &params, &session) == PEAK_OK);
  CHECK(peak_session_create(model, &params, &twin) == PEAK_OK);
  CHECK(peak_session_create(model, &params, &restored) == PEAK_OK);
  static char first[4096], second[4096], again[4096];
  CHECK(answer_with_picture(session, rows, n_floats, "Once upon a time", first) == PEAK_OK);
  CHECK(answer_with_picture(twin, rows, n_floats, "Once upon a time", second) == PEAK_OK);
  CHECK(first[0] != '\0' && strcmp(first, second) == 0);
  CHECK(peak_session_n_attached_images(session) == 0);
  peak_session_message message;
  message.struct_size = sizeof message;
  CHECK(peak_session_get_message(session, 0, &message) == PEAK_OK);
  CHECK(message.role == PEAK_ROLE_USER && message.n_images == 1);
  CHECK(strcmp(message.text, PEAK_IMAGE_MARKER "Once upon a time") == 0);

  /* Saved and restored without the picture: the next turns agree. */
  const char* path = "test_capi_image_session.pkss";
  CHECK(peak_session_save(session, path, 1) == PEAK_OK);
  CHECK(peak_session_restore(restored, path) == PEAK_OK);
  CHECK(answer_with_picture(session, rows, n_floats, "The end", again) == PEAK_OK);
  CHECK(answer_with_picture(restored, rows, n_floats, "The end", second) == PEAK_OK);
  CHECK(strcmp(again, second) == 0);

  /* Refusals: rows of another length, a marker count that differs (the
     picture stays attached), no projector, another model's projector. */
  CHECK_ERROR(peak_session_attach_image(session, rows, n_floats - 1), PEAK_ERR_INVALID_ARGUMENT,
              "not a whole number of rows");
  CHECK(peak_session_attach_image(session, rows, n_floats) == PEAK_OK);
  peak_generate_params g = peak_generate_default_params();
  g.max_tokens = 2;
  const char* two = PEAK_IMAGE_MARKER " and " PEAK_IMAGE_MARKER;
  CHECK_ERROR(peak_session_chat(session, two, strlen(two), &g, NULL), PEAK_ERR_INVALID_ARGUMENT, "are attached");
  CHECK(peak_session_n_attached_images(session) == 1);
  CHECK(peak_session_clear_images(session) == PEAK_OK);
  CHECK(peak_session_n_attached_images(session) == 0);
  peak_session *text_only = NULL, *refused = NULL;
  peak_session_params plain = params;
  plain.projector = NULL;
  CHECK(peak_session_create(model, &plain, &text_only) == PEAK_OK);
  CHECK_ERROR(peak_session_attach_image(text_only, rows, n_floats), PEAK_ERR_INVALID_ARGUMENT, "takes no images");
  CHECK_ERROR(peak_session_restore(text_only, path), PEAK_ERR_UNSUPPORTED, "takes none");
  params.projector = other_width;
  CHECK_ERROR(peak_session_create(model, &params, &refused), PEAK_ERR_INVALID_ARGUMENT,
              "writes embeddings of 48 floats, but the model's width is 64");
  CHECK(refused == NULL);
  remove(path);

  peak_session_free(text_only);
  peak_session_free(restored);
  peak_session_free(twin);
  peak_session_free(session);
  peak_image_encoder_free(encoder);
  peak_projector_free(other_width);
  peak_projector_free(projector);
  peak_model_free(model);
}

/* The text before frame `index` of the photo is `expected`. */
static void check_frame_text(const peak_projector* projector, uint32_t index, const char* expected) {
  char text[128];
  size_t length = 0;
  CHECK(peak_projector_frame_text(projector, 256, 192, index, text, sizeof text, &length) == PEAK_OK);
  CHECK(length == strlen(expected) && strcmp(text, expected) == 0);
  if (strcmp(text, expected) != 0) fprintf(stderr, "  frame %u: '%s'\n", index, text);
}

/* SmolVLM's tiles on the tiny 64-wide idefics3 projector (tiles of 32 pixels,
   the longest edge 96): the 256 x 192 photo becomes 96 x 72, then 96 x 96, so
   3 x 3 tiles and the overview, with the texts Hugging Face's Idefics3
   processor writes; a session takes the picture by its size only. */
static void check_tiled_pictures(const peak_image* photo) {
  peak_projector* projector = NULL;
  CHECK(peak_projector_load(PEAK_IMAGE_TILED_PROJECTOR_64, NULL, &projector) == PEAK_OK);
  if (!projector) return;
  peak_picture_layout layout;
  layout.struct_size = sizeof layout;
  CHECK(peak_projector_picture_layout(projector, 256, 192, &layout) == PEAK_OK);
  CHECK(layout.n_frames == 10 && layout.grid_rows == 3 && layout.grid_cols == 3);
  peak_projector_info info;
  info.struct_size = sizeof info;
  CHECK(peak_projector_get_info(projector, &info) == PEAK_OK);
  CHECK(layout.tokens_per_frame == info.n_image_tokens && info.n_embd == 64);
  check_frame_text(projector, 0, "<fake_token_around_image><row_1_col_1>");
  check_frame_text(projector, 2, "<fake_token_around_image><row_1_col_3>");
  check_frame_text(projector, 3, "\n<fake_token_around_image><row_2_col_1>");
  check_frame_text(projector, 9, "\n\n<fake_token_around_image><global-img>");
  check_frame_text(projector, 10, "<fake_token_around_image>");
  size_t length = 0;
  CHECK_ERROR(peak_projector_frame_text(projector, 256, 192, 11, NULL, 0, &length), PEAK_ERR_INVALID_ARGUMENT,
              "index 11 past the picture's 10 frames");
  CHECK_ERROR(peak_projector_frame_text(projector, 256, 192, 0, NULL, 0, &length), PEAK_ERR_BUFFER_TOO_SMALL,
              "needs 39 bytes");
  CHECK(length == 38);
  /* A small picture is enlarged to the longest edge first, as the processor does. */
  CHECK(peak_projector_picture_layout(projector, 20, 20, &layout) == PEAK_OK);
  CHECK(layout.n_frames == 10 && layout.grid_rows == 3 && layout.grid_cols == 3);
  CHECK_ERROR(peak_projector_picture_layout(projector, 0, 20, &layout), PEAK_ERR_INVALID_ARGUMENT, "0 x 20 pixels");

  peak_image_encoder* encoder = NULL;
  CHECK(peak_image_encoder_create(projector, NULL, &encoder) == PEAK_OK);
  const size_t n_floats = (size_t)10 * info.n_image_tokens * 64;
  float* rows = (float*)malloc(n_floats * sizeof(float));
  size_t written = 0;
  CHECK(rows && encoder && peak_image_encode(encoder, photo, rows, n_floats, &written) == PEAK_OK);
  CHECK(written == n_floats);

  peak_model* model = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &model) == PEAK_OK);
  peak_session_params params = peak_session_default_params();
  params.chat_template = "raw";
  params.sampler.temperature = 0.0f;
  params.n_threads = 1;
  params.projector = projector;
  peak_session *session = NULL, *restored = NULL;
  CHECK(peak_session_create(model, &params, &session) == PEAK_OK);
  CHECK(peak_session_create(model, &params, &restored) == PEAK_OK);
  if (!rows || !session || !restored) return;
  CHECK_ERROR(peak_session_attach_image(session, rows, n_floats), PEAK_ERR_INVALID_ARGUMENT,
              "peak_session_attach_picture");
  CHECK_ERROR(peak_session_attach_picture(session, rows, n_floats, 300, 20), PEAK_ERR_INVALID_ARGUMENT,
              "a picture of 300 x 20 pixels encodes to 64 (4 frames of 16)");
  CHECK(peak_session_n_attached_images(session) == 0);
  CHECK(peak_session_attach_picture(session, rows, n_floats, 256, 192) == PEAK_OK);
  static char first[4096], again[4096], second[4096];
  peak_generate_params g = peak_generate_default_params();
  g.max_tokens = 12;
  g.on_text = on_text;
  g.user_data = first;
  const char* text = "Once upon a time";
  CHECK(peak_session_chat(session, text, strlen(text), &g, NULL) == PEAK_OK);
  CHECK(first[0] != '\0');

  /* Saved and restored: the next turns agree. */
  const char* path = "test_capi_image_tiles.pkss";
  CHECK(peak_session_save(session, path, 0) == PEAK_OK);
  CHECK(peak_session_restore(restored, path) == PEAK_OK);
  g.user_data = again;
  CHECK(peak_session_chat(session, "The end", 7, &g, NULL) == PEAK_OK);
  g.user_data = second;
  CHECK(peak_session_chat(restored, "The end", 7, &g, NULL) == PEAK_OK);
  CHECK(strcmp(again, second) == 0);
  remove(path);

  peak_session_free(restored);
  peak_session_free(session);
  peak_model_free(model);
  free(rows);
  peak_image_encoder_free(encoder);
  peak_projector_free(projector);
}

/* Qwen2.5-VL on the tiny pair tests/runtime writes: the photo's layout (its
   own size, 72 x 48 pixels: 9 x 6 tokens, placed by row and column), the
   frame evaluated by peak_context_eval_picture (placed: other logits than
   the same rows one after another; on stories260K, which places nothing, the
   same), a picture attached to a session by its size only, and refusals. */
static void check_placed_pictures(const peak_image* photo) {
  peak_model *model = NULL, *stories = NULL;
  peak_projector* projector = NULL;
  CHECK(peak_model_load(PEAK_QWEN2VL_MODEL, NULL, &model) == PEAK_OK);
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &stories) == PEAK_OK);
  CHECK(peak_projector_load(PEAK_QWEN2VL_PROJECTOR, NULL, &projector) == PEAK_OK);
  peak_image_encoder* encoder = NULL;
  CHECK(peak_image_encoder_create(projector, NULL, &encoder) == PEAK_OK);
  if (!model || !stories || !encoder) return;
  peak_picture_layout layout;
  memset(&layout, 0, sizeof layout);
  layout.struct_size = sizeof layout;
  CHECK(peak_projector_picture_layout(projector, 256, 192, &layout) == PEAK_OK);
  CHECK(layout.n_frames == 1 && layout.tokens_per_frame == 54 && layout.token_cols == 9);
  /* 0.10.0's struct, without token_cols: filled as far as it goes. */
  peak_picture_layout old;
  memset(&old, 0xff, sizeof old);
  old.struct_size = offsetof(peak_picture_layout, token_cols);
  CHECK(peak_projector_picture_layout(projector, 256, 192, &old) == PEAK_OK);
  CHECK(old.tokens_per_frame == 54 && old.token_cols == 0xffffffffu);

  static float rows[kMaxFloats];
  size_t n_floats = 0;
  CHECK(peak_image_encode(encoder, photo, rows, kMaxFloats, &n_floats) == PEAK_OK);
  CHECK(n_floats == 54 * 64);
  peak_context_params params = peak_context_default_params();
  params.n_ctx = 128;
  params.type_k = params.type_v = PEAK_TYPE_F32;
  const int32_t bos = 1;
  peak_context *placed = NULL, *in_line = NULL, *plain = NULL, *plain_rows = NULL;
  CHECK(peak_context_create(model, &params, &placed) == PEAK_OK);
  CHECK(peak_context_create(model, &params, &in_line) == PEAK_OK);
  CHECK(peak_context_create(stories, &params, &plain) == PEAK_OK);
  CHECK(peak_context_create(stories, &params, &plain_rows) == PEAK_OK);
  if (!placed || !in_line || !plain || !plain_rows) return;
  peak_model_info info, stories_info;
  info.struct_size = stories_info.struct_size = sizeof info;
  CHECK(peak_model_get_info(model, &info) == PEAK_OK);
  CHECK(peak_model_get_info(stories, &stories_info) == PEAK_OK);
  CHECK(peak_context_eval(placed, &bos, 1) == PEAK_OK);
  CHECK(peak_context_eval(in_line, &bos, 1) == PEAK_OK);
  CHECK(peak_context_eval_picture(placed, rows, 54, 9) == PEAK_OK);
  CHECK(peak_context_eval_embeddings(in_line, rows, 54, 0) == PEAK_OK);
  CHECK(peak_context_n_used(placed) == 55);
  double placed_diff = 0.0;
  for (size_t v = 0; v < info.n_vocab; ++v) {
    placed_diff =
        fmax(placed_diff, fabs((double)peak_context_get_logits(placed)[v] - peak_context_get_logits(in_line)[v]));
  }
  CHECK(placed_diff > 1e-4);
  CHECK(peak_context_eval(plain, &bos, 1) == PEAK_OK);
  CHECK(peak_context_eval(plain_rows, &bos, 1) == PEAK_OK);
  CHECK(peak_context_eval_picture(plain, rows, 54, 9) == PEAK_OK);
  CHECK(peak_context_eval_embeddings(plain_rows, rows, 54, 0) == PEAK_OK);
  CHECK(memcmp(peak_context_get_logits(plain), peak_context_get_logits(plain_rows),
               stories_info.n_vocab * sizeof(float)) == 0);
  CHECK_ERROR(peak_context_eval_picture(placed, rows, 54, 5), PEAK_ERR_INVALID_ARGUMENT,
              "54 rows are not whole rows of a picture 5 tokens across");
  CHECK_ERROR(peak_context_eval_picture(placed, rows, 54, 0), PEAK_ERR_INVALID_ARGUMENT, "0 tokens across");
  CHECK(peak_context_n_used(placed) == 55);

  peak_session_params session_params = peak_session_default_params();
  session_params.chat_template = "raw";
  session_params.sampler.temperature = 0.0f;
  session_params.n_threads = 1;
  session_params.projector = projector;
  peak_session* session = NULL;
  CHECK(peak_session_create(model, &session_params, &session) == PEAK_OK);
  if (session) {
    CHECK_ERROR(peak_session_attach_image(session, rows, n_floats), PEAK_ERR_INVALID_ARGUMENT,
                "attach them with peak_session_attach_picture");
    CHECK(peak_session_attach_picture(session, rows, n_floats, 256, 192) == PEAK_OK);
    static char answer[4096];
    peak_generate_params g = peak_generate_default_params();
    g.max_tokens = 6;
    g.on_text = on_text;
    g.user_data = answer;
    CHECK(peak_session_chat(session, "Once upon a time", 16, &g, NULL) == PEAK_OK);
    peak_session_free(session);
  }
  peak_context_free(placed);
  peak_context_free(in_line);
  peak_context_free(plain);
  peak_context_free(plain_rows);
  peak_image_encoder_free(encoder);
  peak_projector_free(projector);
  peak_model_free(stories);
  peak_model_free(model);
}

/* The estimate from the file's metadata: what the load and the encoder hold
   (the transposed projector matrix as many bytes as the file's). */
static void check_memory_estimate(const peak_image_encoder* encoder, const peak_projector_info* info) {
  peak_memory_estimate estimate;
  estimate.struct_size = sizeof estimate;
  CHECK(peak_projector_estimate_memory(PEAK_IMAGE_PROJECTOR, NULL, NULL, &estimate) == PEAK_OK);
  peak_gguf* gguf = NULL;
  CHECK(peak_gguf_open(PEAK_IMAGE_PROJECTOR, NULL, &gguf) == PEAK_OK);
  size_t index = 0;
  peak_gguf_tensor_info projection;
  CHECK(gguf && peak_gguf_lookup_tensor(gguf, "mm.input_projection.weight", &index) == PEAK_OK);
  CHECK(gguf && peak_gguf_get_tensor(gguf, index, &projection) == PEAK_OK);
  CHECK(estimate.weight_bytes == info->size_bytes);
  CHECK(estimate.repacked_bytes == projection.n_bytes);
  CHECK(estimate.kv_bytes == 0);
  CHECK(peak_image_encoder_compute_bytes(encoder) > 0);
  CHECK(estimate.compute_bytes ==
        peak_image_encoder_compute_bytes(encoder) + (size_t)info->n_image_tokens * info->n_embd * sizeof(float));
  CHECK(estimate.total_bytes == estimate.weight_bytes + estimate.repacked_bytes + estimate.compute_bytes);
  CHECK_ERROR(peak_projector_estimate_memory(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, NULL, &estimate),
              PEAK_ERR_FORMAT, "not a vision projector");
  peak_gguf_free(gguf);
}

int main(void) {
  check_eval_embeddings();
  CHECK(read_reference());
  CHECK(n_reference == 4 * 48);

  peak_projector* projector = NULL;
  CHECK(peak_projector_load(PEAK_IMAGE_PROJECTOR, NULL, &projector) == PEAK_OK);
  if (!projector) return capi_test_summary("test_capi_image");
  peak_projector_info info;
  info.struct_size = sizeof info;
  CHECK(peak_projector_get_info(projector, &info) == PEAK_OK);
  CHECK(strcmp(info.projector_type, "gemma3") == 0);
  CHECK(info.image_size == kSide && info.patch_size == 4 && info.n_image_tokens == 4 && info.n_embd == 48);
  CHECK(info.n_params > 0 && info.size_bytes >= 4 * info.n_params); /* F32 */
  CHECK(strcmp(info.image_prefix, "\n\n<start_of_image>") == 0);
  CHECK(strcmp(info.image_suffix, "<end_of_image>\n\n") == 0);
  CHECK(info.bidirectional == 1);

  peak_image_encoder* encoder = NULL;
  CHECK(peak_image_encoder_create(projector, NULL, &encoder) == PEAK_OK);
  check_memory_estimate(encoder, &info);

  /* The PNG, resized by peak as PIL resizes it. */
  size_t png_size = 0;
  uint8_t* png = read_file(PEAK_TEST_DATA_DIR "/images/png/photo_256x192.png", &png_size);
  CHECK(png != NULL);
  peak_image* photo = NULL;
  CHECK(peak_image_decode(png, png_size, &photo) == PEAK_OK);
  uint32_t width = 0, height = 0, channels = 0;
  CHECK(peak_image_get_size(photo, &width, &height, &channels) == PEAK_OK);
  CHECK(width == 256 && height == 192 && channels == 3);
  size_t needed = 0;
  CHECK_ERROR(peak_image_encode(encoder, photo, NULL, 0, &needed), PEAK_ERR_BUFFER_TOO_SMALL, "need 192 floats");
  CHECK(needed == 192);
  check_encodes_like_the_reference(encoder, photo);
  if (photo) check_session_pictures(photo);
  if (photo) check_tiled_pictures(photo);
  if (photo) check_placed_pictures(photo);

  /* PIL's resized pixels as RGB rows, then as RGBA rows 4 bytes apart more than a row. */
  size_t ppm_size = 0;
  uint8_t* ppm = read_file(PEAK_TEST_DATA_DIR "/images/vision/gemma3_32.ppm", &ppm_size);
  const char* header = "P6\n32 32\n255\n";
  CHECK(ppm != NULL && ppm_size == strlen(header) + kSide * kSide * 3);
  if (ppm && ppm_size == strlen(header) + kSide * kSide * 3) {
    const uint8_t* rgb = ppm + strlen(header);
    peak_image* resized = NULL;
    CHECK(peak_image_from_pixels(rgb, kSide, kSide, 3, 0, &resized) == PEAK_OK);
    check_encodes_like_the_reference(encoder, resized);
    peak_image_free(resized);

    enum { kStride = kSide * 4 + 4 };
    static uint8_t rgba[kSide * kStride];
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        memcpy(&rgba[y * kStride + x * 4], &rgb[(y * kSide + x) * 3], 3);
        rgba[y * kStride + x * 4 + 3] = (uint8_t)(x * 7); /* transparency, which the encoder drops */
      }
    }
    peak_image* with_alpha = NULL;
    CHECK(peak_image_from_pixels(rgba, kSide, kSide, 4, kStride, &with_alpha) == PEAK_OK);
    check_encodes_like_the_reference(encoder, with_alpha);
    peak_image_free(with_alpha);

    peak_image* refused = NULL;
    CHECK_ERROR(peak_image_from_pixels(rgb, kSide, kSide, 2, 0, &refused), PEAK_ERR_INVALID_ARGUMENT, "channels is 2");
    CHECK_ERROR(peak_image_from_pixels(rgb, kSide, kSide, 3, 90, &refused), PEAK_ERR_INVALID_ARGUMENT,
                "stride 90 is shorter than a row of 96 bytes");
    CHECK_ERROR(peak_image_from_pixels(rgb, 0, kSide, 3, 0, &refused), PEAK_ERR_INVALID_ARGUMENT, "0 x 32 pixels");
    CHECK(refused == NULL);
  }

  /* A file that is no picture; a truncated PNG. */
  peak_image* refused = NULL;
  CHECK_ERROR(peak_image_decode((const uint8_t*)"GIF89a", 6, &refused), PEAK_ERR_FORMAT, "not a PNG or JPEG file");
  if (png) CHECK_ERROR(peak_image_decode(png, png_size / 2, &refused), PEAK_ERR_FORMAT, "PNG: ");
  CHECK(refused == NULL);

  /* Each file where the other belongs. */
  peak_projector* not_projector = NULL;
  CHECK_ERROR(peak_projector_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &not_projector), PEAK_ERR_FORMAT,
              "not a vision projector");
  peak_model* not_model = NULL;
  CHECK_ERROR(peak_model_load(PEAK_IMAGE_PROJECTOR, NULL, &not_model), PEAK_ERR_FORMAT, "a vision projector");

  free(png);
  free(ppm);
  peak_image_free(photo);
  peak_image_encoder_free(encoder);
  peak_projector_free(projector);
  return capi_test_summary("test_capi_image");
}
