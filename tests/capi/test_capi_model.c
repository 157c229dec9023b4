/* Drives every model, token, context, sampler, generation and chat-template
   function of the C API from C on the real stories260K model, including misuse:
   NULL handles, bad paths, n_ctx 0, a prompt longer than the context and wrong
   struct sizes must give a status and a message, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";

/* The first reference greedy ids after BOS (shared/models/stories260K.greedy-ids.txt). */
static int32_t first_reference_ids[8];

static void read_reference_ids(void) {
  FILE* f = fopen(PEAK_SHARED_DIR "/models/stories260K.greedy-ids.txt", "r");
  CHECK(f != NULL);
  if (!f) return;
  for (int i = 0; i < 8; ++i) CHECK(fscanf(f, "%d", &first_reference_ids[i]) == 1);
  fclose(f);
}

static int progress_calls = 0;
static int count_progress(float p, void* user) {
  (void)user;
  CHECK(p >= 0.0f && p <= 1.0f);
  ++progress_calls;
  return 1;
}
static int cancel_progress(float p, void* user) {
  (void)p;
  (void)user;
  return 0;
}

typedef struct {
  char text[4096];
  size_t length;
  int calls;
  int unterminated;  /* calls whose text had no NUL at text[length] */
} collected_text;

static int collect(const char* text, size_t length, void* user) {
  collected_text* c = (collected_text*)user;
  if (text[length] != '\0') ++c->unterminated;
  if (c->length + length < sizeof c->text) {
    memcpy(c->text + c->length, text, length);
    c->length += length;
    c->text[c->length] = '\0';
  }
  ++c->calls;
  return 1;
}

static int stop_after_two(const char* text, size_t length, void* user) {
  (void)text;
  (void)length;
  return ++*(int*)user < 2;
}

static peak_model* load(void) {
  peak_model* m = NULL;
  peak_model_params mp = peak_model_default_params();
  mp.progress = count_progress;
  CHECK(peak_model_load(kStories, &mp, &m) == PEAK_OK);
  CHECK(progress_calls >= 2);
  return m;
}

static void test_model_info(peak_model* m) {
  peak_model_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(m, &info) == PEAK_OK);
  CHECK(strcmp(info.architecture, "llama") == 0);
  CHECK(info.n_vocab == 512 && info.n_embd == 64 && info.n_layer == 5);
  CHECK(info.n_head == 8 && info.n_head_kv == 4 && info.head_dim == 8 && info.n_ff == 172);
  CHECK(info.n_ctx_train == 2048);
  CHECK(info.n_params == 292800);
  CHECK(info.bos_token == 1 && info.eos_token == 2);
  CHECK(strcmp(info.chat_template, "chatml") == 0);       /* the model has no template: */
  CHECK(strcmp(info.chat_template_source, "fallback") == 0);
  CHECK(strlen(info.chat_template_warning) > 0);           /* ChatML with a warning */
  CHECK(strcmp(info.name, "llama") == 0 && info.name_length == 5);
  /* A caller built before name_length gets the fields it has, and no more. */
  memset(&info, 0xAB, sizeof info);
  info.struct_size = offsetof(peak_model_info, name_length);
  CHECK(peak_model_get_info(m, &info) == PEAK_OK);
  CHECK(info.n_vocab == 512 && info.decode_bytes_per_token > 0 &&
        info.struct_size == offsetof(peak_model_info, name_length));
  CHECK(info.name_length == (size_t)0xABABABABABABABABull);
  info.struct_size = 8;
  CHECK_ERROR(peak_model_get_info(m, &info), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
}

static void test_tokens(peak_model* m) {
  const char* text = "Once upon a time";
  int32_t ids[64];
  size_t n = 0;
  CHECK(peak_tokenize(m, text, strlen(text), 1, 0, ids, 64, &n) == PEAK_OK);
  CHECK(n >= 3 && ids[0] == 1);
  size_t needed = 0;
  CHECK_ERROR(peak_tokenize(m, text, strlen(text), 1, 0, ids, 1, &needed), PEAK_ERR_BUFFER_TOO_SMALL, "buffer");
  CHECK(needed == n);
  CHECK(peak_tokenize(m, text, strlen(text), 1, 0, NULL, 0, &needed) == PEAK_ERR_BUFFER_TOO_SMALL && needed == n);

  char buf[256];
  size_t len = 0;
  /* As llama.cpp: removing BOS keeps the space the SPM encoder put before the text. */
  CHECK(peak_detokenize(m, ids, n, 1, 0, buf, sizeof buf, &len) == PEAK_OK);
  CHECK(len == strlen(text) + 1 && buf[0] == ' ' && memcmp(buf + 1, text, len - 1) == 0);
  /* Without BOS the round trip is exact. */
  CHECK(peak_tokenize(m, text, strlen(text), 0, 0, ids, 64, &n) == PEAK_OK && ids[0] != 1);
  CHECK(peak_detokenize(m, ids, n, 0, 0, buf, sizeof buf, &len) == PEAK_OK);
  CHECK(len == strlen(text) && memcmp(buf, text, len) == 0);
  CHECK_ERROR(peak_detokenize(m, ids, n, 1, 0, buf, 3, &len), PEAK_ERR_BUFFER_TOO_SMALL, "buffer");
  CHECK(len == strlen(text));

  CHECK(peak_token_to_piece(m, ids[1], 0, buf, sizeof buf, &len) == PEAK_OK && len > 0);
  CHECK(peak_token_to_piece(m, 1, 0, buf, sizeof buf, &len) == PEAK_OK && len == 0);  /* BOS renders as nothing */
  CHECK(peak_token_to_piece(m, 1, 1, buf, sizeof buf, &len) == PEAK_OK && len == 3 && memcmp(buf, "<s>", 3) == 0);
  CHECK_ERROR(peak_token_to_piece(m, 512, 0, buf, sizeof buf, &len), PEAK_ERR_UNSUPPORTED, "512");
  CHECK(peak_token_is_eog(m, 2) == 1);
  CHECK(peak_token_is_eog(m, 100) == 0);
  CHECK(peak_token_is_eog(NULL, 2) == 0);

  /* Invalid UTF-8 and NUL bytes tokenize without error. */
  const char raw[] = {'a', '\xff', '\0', 'b'};
  CHECK(peak_tokenize(m, raw, sizeof raw, 0, 0, ids, 64, &n) == PEAK_OK && n >= 3);
}

/* Marks a buffer so that an untouched one can be told from a written one. */
static void fill_unwritten(char* buf, size_t n) { memset(buf, 'x', n); }
static int unwritten(const char* buf, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (buf[i] != 'x') return 0;
  return 1;
}

/* Text written into a caller's buffer is followed by a NUL that *length does not
   count: a buffer of *length bytes is too small (and left untouched, *length
   still reported), one of *length + 1 bytes is enough. */
static void test_text_buffers(peak_model* m) {
  char buf[64];
  size_t len = 99;
  /* "<s>" (BOS rendered as text): 3 bytes and the NUL. */
  fill_unwritten(buf, sizeof buf);
  CHECK_ERROR(peak_token_to_piece(m, 1, 1, buf, 3, &len), PEAK_ERR_BUFFER_TOO_SMALL, "needs 4 bytes");
  CHECK(len == 3 && unwritten(buf, sizeof buf));
  CHECK(peak_token_to_piece(m, 1, 1, NULL, 0, &len) == PEAK_ERR_BUFFER_TOO_SMALL && len == 3);
  CHECK(peak_token_to_piece(m, 1, 1, buf, 4, &len) == PEAK_OK && len == 3);
  CHECK(memcmp(buf, "<s>", 4) == 0 && buf[4] == 'x');
  /* Empty text still needs one byte, for its NUL. */
  fill_unwritten(buf, sizeof buf);
  CHECK(peak_token_to_piece(m, 1, 0, NULL, 0, &len) == PEAK_ERR_BUFFER_TOO_SMALL && len == 0);
  CHECK(peak_token_to_piece(m, 1, 0, buf, 1, &len) == PEAK_OK && len == 0 && buf[0] == '\0' && buf[1] == 'x');
  /* SentencePiece's byte-fallback pieces: id 3 + b is the byte b, NUL included. */
  CHECK(peak_token_to_piece(m, 3 + 0x00, 0, buf, 2, &len) == PEAK_OK && len == 1 && buf[0] == '\0' && buf[1] == '\0');
  CHECK(peak_token_to_piece(m, 3 + 'A', 0, buf, 2, &len) == PEAK_OK && len == 1 && strcmp(buf, "A") == 0);

  const char* text = "Once upon a time";
  int32_t ids[16];
  size_t n = 0;
  CHECK(peak_tokenize(m, text, strlen(text), 0, 0, ids, 16, &n) == PEAK_OK);
  fill_unwritten(buf, sizeof buf);
  CHECK_ERROR(peak_detokenize(m, ids, n, 0, 0, buf, strlen(text), &len), PEAK_ERR_BUFFER_TOO_SMALL, "buffer");
  CHECK(len == strlen(text) && unwritten(buf, sizeof buf));
  CHECK(peak_detokenize(m, ids, n, 0, 0, buf, strlen(text) + 1, &len) == PEAK_OK);
  CHECK(len == strlen(text) && strcmp(buf, text) == 0 && buf[len + 1] == 'x');
}

static int32_t argmax(const float* v, int n) {
  int32_t best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

static void test_context_and_sampling(peak_model* m) {
  peak_context_params cp = peak_context_default_params();
  CHECK(cp.struct_size == sizeof cp && cp.n_ctx == 4096 && cp.type_k == PEAK_TYPE_F16);
  cp.n_ctx = 64;
  cp.n_threads = 2;
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  CHECK(peak_context_n_ctx(ctx) == 64);
  CHECK(peak_context_n_used(ctx) == 0);
  CHECK(peak_context_set_threads(ctx, 1) == PEAK_OK);
  CHECK_ERROR(peak_context_set_threads(ctx, 9), PEAK_ERR_INVALID_ARGUMENT, "exceeds");

  const int32_t bos = 1;
  CHECK(peak_context_eval(ctx, &bos, 1) == PEAK_OK);
  CHECK(peak_context_n_used(ctx) == 1);
  CHECK(argmax(peak_context_get_logits(ctx), 512) == first_reference_ids[0]);

  peak_sampler_params sp = peak_sampler_default_params();
  CHECK(sp.struct_size == sizeof sp && sp.top_k == 40);
  sp.temperature = 0.0f;
  peak_sampler* s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  int32_t tok = -1;
  CHECK(peak_sampler_sample(s, ctx, &tok) == PEAK_OK && tok == first_reference_ids[0]);
  CHECK(peak_sampler_accept(s, tok) == PEAK_OK);
  CHECK_ERROR(peak_sampler_accept(s, 512), PEAK_ERR_INVALID_ARGUMENT, "outside the vocabulary");
  peak_sampler_reset(s);

  /* KV editing: remove the BOS cell, evaluate it again, shift nothing. */
  CHECK(peak_context_kv_remove(ctx, 0, 1) == PEAK_OK && peak_context_n_used(ctx) == 0);
  CHECK_ERROR(peak_context_kv_remove(ctx, 0, 1), PEAK_ERR_INVALID_ARGUMENT, "outside");
  CHECK(peak_context_eval(ctx, &bos, 1) == PEAK_OK);
  CHECK(peak_context_kv_shift(ctx, 0, 1, 0) == PEAK_OK);
  CHECK_ERROR(peak_context_kv_shift(ctx, 0, 5, 1), PEAK_ERR_INVALID_ARGUMENT, "outside");
  /* Cells are counted in int32_t inside: a huge size_t (a caller's -1) is refused by name. */
  CHECK_ERROR(peak_context_kv_remove(ctx, SIZE_MAX, 1), PEAK_ERR_INVALID_ARGUMENT, "first is");
  CHECK_ERROR(peak_context_kv_shift(ctx, 0, (size_t)INT32_MAX + 1, 1), PEAK_ERR_INVALID_ARGUMENT, "n is");
  CHECK(peak_context_n_used(ctx) == 1);
  CHECK(peak_context_kv_clear(ctx) == PEAK_OK && peak_context_n_used(ctx) == 0);

  /* Generation: greedy from BOS writes llama2.c's documented story opening. */
  collected_text text;
  memset(&text, 0, sizeof text);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 8;
  gp.on_text = collect;
  gp.user_data = &text;
  peak_generate_result result;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  CHECK(peak_generate(ctx, s, "", 0, &gp, &result) == PEAK_OK);
  CHECK(result.n_prompt_tokens == 1 && result.n_generated_tokens == 8);
  CHECK(result.stop_reason == PEAK_STOP_MAX_TOKENS);
  CHECK(text.calls > 0 && text.unterminated == 0);
  /* The first piece after BOS is "\xe2\x96\x81Once": streamed text starts with its space. */
  CHECK(strncmp(text.text, " Once upon a time", 17) == 0);
  if (strncmp(text.text, " Once upon a time", 17) != 0) fprintf(stderr, "  generated: %s\n", text.text);

  int calls = 0;
  gp.on_text = stop_after_two;
  gp.user_data = &calls;
  CHECK(peak_generate(ctx, s, " The", 4, &gp, &result) == PEAK_OK);
  CHECK(result.stop_reason == PEAK_STOP_CALLBACK);

  /* Set before the call: the prompt is not evaluated (test_capi_cancel.c);
     an empty one continues, and generation stops before its first token. */
  volatile int abort_now = 1;
  gp.on_text = NULL;
  gp.abort_flag = &abort_now;
  const size_t used = peak_context_n_used(ctx);
  CHECK_ERROR(peak_generate(ctx, s, " and", 4, &gp, &result), PEAK_ERR_CANCELLED, "cancelled");
  CHECK(peak_context_n_used(ctx) == used);
  CHECK(peak_generate(ctx, s, "", 0, &gp, &result) == PEAK_OK);
  CHECK(result.stop_reason == PEAK_STOP_ABORTED && result.n_generated_tokens == 0);

  /* A prompt longer than the context. */
  int32_t many[100];
  for (int i = 0; i < 100; ++i) many[i] = 5;
  CHECK_ERROR(peak_context_eval(ctx, many, 100), PEAK_ERR_CONTEXT_FULL, "cannot fit");
  CHECK(peak_context_kv_clear(ctx) == PEAK_OK);
  CHECK_ERROR(peak_context_eval(ctx, many, 65), PEAK_ERR_CONTEXT_FULL, "cannot fit");
  CHECK(peak_context_eval(ctx, many, 60) == PEAK_OK);
  CHECK_ERROR(peak_context_eval(ctx, many, 10), PEAK_ERR_CONTEXT_FULL, "full");
  CHECK(peak_context_n_used(ctx) == 60);  /* a refused eval changes nothing */
  gp.abort_flag = NULL;
  gp.max_tokens = -1;
  CHECK(peak_generate(ctx, s, "", 0, &gp, &result) == PEAK_OK);
  CHECK(result.stop_reason == PEAK_STOP_CONTEXT_FULL || result.stop_reason == PEAK_STOP_EOG);
  CHECK_ERROR(peak_context_eval_all_logits(ctx, many, 1, NULL), PEAK_ERR_CONTEXT_FULL, "full");

  /* Per-token logits need logits_all. */
  peak_context_kv_clear(ctx);
  float* all = (float*)malloc(sizeof(float) * 512 * 3);
  CHECK_ERROR(peak_context_eval_all_logits(ctx, many, 3, all), PEAK_ERR_INVALID_ARGUMENT, "logits_all");
  peak_context* ctx_all = NULL;
  cp.logits_all = 1;
  CHECK(peak_context_create(m, &cp, &ctx_all) == PEAK_OK);
  CHECK(peak_context_eval_all_logits(ctx_all, many, 3, all) == PEAK_OK);
  CHECK(memcmp(all + 2 * 512, peak_context_get_logits(ctx_all), 512 * sizeof(float)) == 0);
  free(all);

  /* Bad token ids and bad struct sizes. */
  const int32_t bad = 600;
  CHECK_ERROR(peak_context_eval(ctx, &bad, 1), PEAK_ERR_INVALID_ARGUMENT, "outside the vocabulary");
  gp.struct_size = 3;
  CHECK_ERROR(peak_generate(ctx, s, "x", 1, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  sp.struct_size = 3;
  peak_sampler* s2 = NULL;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s2), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  CHECK(s2 == NULL);
  sp = peak_sampler_default_params();
  sp.top_p = 2.0f;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s2), PEAK_ERR_INVALID_ARGUMENT, "top_p");

  peak_sampler_free(s);
  peak_context_free(ctx_all);
  peak_context_free(ctx);
}

/* The pieces of `ids` one after another, as on_text streams them. */
static void pieces_of(peak_model* m, const int32_t* ids, size_t n, char* out, size_t capacity) {
  size_t at = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; ++i) {
    size_t len = 0;
    CHECK(peak_token_to_piece(m, ids[i], 0, out + at, capacity - at, &len) == PEAK_OK);
    at += len;
  }
}

/* peak_generate starts only an empty context with BOS: a second call (with text,
   or empty to go on generating) appends its tokens after the first call's,
   without BOS. The reference is the sequence built here by hand: BOS, then each
   text tokenized alone without specials, evaluated at once, greedy by argmax. */
static void test_generate_continuation(peak_model* m) {
  const int n_vocab = 512;
  const int32_t bos = 1;
  int32_t sequence[48];
  size_t n_sequence = 0, n_first = 0, n_second = 0;
  sequence[n_sequence++] = bos;
  CHECK(peak_tokenize(m, "Once upon", 9, 0, 0, sequence + n_sequence, 16, &n_first) == PEAK_OK && n_first >= 2);
  n_sequence += n_first;
  CHECK(peak_tokenize(m, " a time", 7, 0, 0, sequence + n_sequence, 16, &n_second) == PEAK_OK && n_second >= 2);
  n_sequence += n_second;

  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 64;
  cp.n_threads = 1;
  peak_context* ctx = NULL;
  peak_context* reference = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  CHECK(peak_context_create(m, &cp, &reference) == PEAK_OK);
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0.0f;
  peak_sampler* s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  if (!ctx || !reference || !s) return;

  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 0;
  peak_generate_result result;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  CHECK(peak_generate(ctx, s, "Once upon", 9, &gp, &result) == PEAK_OK);
  CHECK(result.n_prompt_tokens == 1 + n_first);
  CHECK(peak_generate(ctx, s, " a time", 7, &gp, &result) == PEAK_OK);
  CHECK(result.n_prompt_tokens == n_second);  /* no second BOS */
  CHECK(peak_context_n_used(ctx) == n_sequence);

  CHECK(peak_context_eval(reference, sequence, n_sequence) == PEAK_OK);
  const float* logits = peak_context_get_logits(ctx);
  const float* expected = peak_context_get_logits(reference);
  float max_diff = 0.0f;
  for (int i = 0; i < n_vocab; ++i) {
    const float d = logits[i] > expected[i] ? logits[i] - expected[i] : expected[i] - logits[i];
    if (d > max_diff) max_diff = d;
  }
  CHECK(max_diff < 1e-4f);
  if (max_diff >= 1e-4f) fprintf(stderr, "  logits differ by up to %g\n", (double)max_diff);

  /* An empty prompt goes on generating from the context as it is. */
  collected_text text;
  memset(&text, 0, sizeof text);
  gp.max_tokens = 6;
  gp.on_text = collect;
  gp.user_data = &text;
  CHECK(peak_generate(ctx, s, "", 0, &gp, &result) == PEAK_OK);
  CHECK(result.n_prompt_tokens == 0 && result.n_generated_tokens == 6);
  CHECK(result.stop_reason == PEAK_STOP_MAX_TOKENS);
  CHECK(peak_context_n_used(ctx) == n_sequence + 6);
  int32_t greedy[6];
  for (int i = 0; i < 6; ++i) {
    greedy[i] = argmax(peak_context_get_logits(reference), n_vocab);
    CHECK(peak_context_eval(reference, &greedy[i], 1) == PEAK_OK);
  }
  char expected_text[256];
  pieces_of(m, greedy, 6, expected_text, sizeof expected_text);
  CHECK(strcmp(text.text, expected_text) == 0);
  if (strcmp(text.text, expected_text) != 0) fprintf(stderr, "  '%s' != '%s'\n", text.text, expected_text);

  /* A cleared context is empty again: the next prompt starts with BOS. */
  CHECK(peak_context_kv_clear(ctx) == PEAK_OK);
  gp.max_tokens = 0;
  CHECK(peak_generate(ctx, s, " a time", 7, &gp, &result) == PEAK_OK);
  CHECK(result.n_prompt_tokens == 1 + n_second && peak_context_n_used(ctx) == 1 + n_second);

  peak_sampler_free(s);
  peak_context_free(reference);
  peak_context_free(ctx);
}

/* Per-op profile: one entry per op that ran, named by a string that outlives
   the context; a matrix multiplication runs in every layer. */
static void test_profile(peak_model* m) {
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, NULL, &ctx) == PEAK_OK);
  CHECK(peak_context_set_profiling(ctx, 1) == PEAK_OK);
  const int32_t bos = 1;
  CHECK(peak_context_eval(ctx, &bos, 1) == PEAK_OK);
  size_t n = 0;
  CHECK(peak_context_get_profile(ctx, NULL, 0, &n) == PEAK_ERR_BUFFER_TOO_SMALL && n > 0);
  peak_op_profile entries[32];
  CHECK(n <= 32 && peak_context_get_profile(ctx, entries, 32, &n) == PEAK_OK);
  peak_context_free(ctx);
  size_t mul_mat_calls = 0;
  for (size_t i = 0; i < n && i < 32; ++i) {
    CHECK(entries[i].op != NULL && strlen(entries[i].op) > 0);
    if (strcmp(entries[i].op, "mul_mat") == 0) mul_mat_calls = entries[i].calls;
  }
  CHECK(mul_mat_calls >= 5);
}

static void test_context_misuse(peak_model* m) {
  peak_context* ctx = NULL;
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 0;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "n_ctx must be at least 1");
  CHECK(ctx == NULL);
  cp = peak_context_default_params();
  cp.type_k = 12;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "Q4_K");
  cp.type_k = PEAK_TYPE_Q8_0; /* head size 8 cannot hold 32-element blocks */
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT,
              "type_k Q8_0 needs a head size that is a multiple of 32");
  cp = peak_context_default_params();
  cp.struct_size = 1;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  cp = peak_context_default_params();
  cp.n_threads = -3;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "n_threads");
  cp = peak_context_default_params();
  cp.n_ctx = (size_t)INT32_MAX + 1;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "n_ctx is 2147483648");
  cp = peak_context_default_params();
  cp.n_batch = SIZE_MAX;
  CHECK_ERROR(peak_context_create(m, &cp, &ctx), PEAK_ERR_INVALID_ARGUMENT, "n_batch is");
  CHECK(ctx == NULL);
  peak_sampler_params sp = peak_sampler_default_params();
  sp.top_k = SIZE_MAX;
  peak_sampler* refused = NULL;
  CHECK_ERROR(peak_sampler_create(m, &sp, &refused), PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_params.top_k");
  sp = peak_sampler_default_params();
  sp.penalty_last_n = (size_t)INT32_MAX + 1;
  CHECK_ERROR(peak_sampler_create(m, &sp, &refused), PEAK_ERR_INVALID_ARGUMENT, "penalty_last_n");
  CHECK(refused == NULL);
  peak_quantize_params qp = peak_quantize_default_params();
  qp.n_threads = SIZE_MAX;
  CHECK_ERROR(peak_quantize(kStories, "capi_model_test_never_written.gguf", &qp), PEAK_ERR_INVALID_ARGUMENT,
              "n_threads");
  CHECK_ERROR(peak_context_create(NULL, NULL, &ctx), PEAK_ERR_INVALID_ARGUMENT, "model is NULL");
  CHECK_ERROR(peak_context_create(m, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "out is NULL");

  CHECK(peak_context_n_ctx(NULL) == 0 && peak_context_n_used(NULL) == 0);
  CHECK(peak_context_get_logits(NULL) == NULL);
  CHECK_ERROR(peak_context_eval(NULL, NULL, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_context_kv_clear(NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_context_kv_remove(NULL, 0, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_context_kv_shift(NULL, 0, 0, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_context_set_threads(NULL, 1), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  int32_t t;
  CHECK_ERROR(peak_sampler_sample(NULL, NULL, &t), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_sampler_accept(NULL, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_sampler_create(NULL, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_generate(NULL, NULL, "x", 1, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  size_t n;
  CHECK_ERROR(peak_tokenize(NULL, "x", 1, 0, 0, NULL, 0, &n), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_tokenize(m, NULL, 5, 0, 0, NULL, 0, &n), PEAK_ERR_INVALID_ARGUMENT, "text is NULL");
  CHECK_ERROR(peak_detokenize(m, NULL, 2, 0, 0, NULL, 0, &n), PEAK_ERR_INVALID_ARGUMENT, "tokens is NULL");
  CHECK_ERROR(peak_token_to_piece(m, 5, 0, NULL, 10, &n), PEAK_ERR_INVALID_ARGUMENT, "buf is NULL");
  peak_sampler_reset(NULL);
  peak_sampler_free(NULL);
  peak_context_free(NULL);

  /* The sampler's logits come from a context of the same model. */
  peak_sampler* s = NULL;
  CHECK(peak_sampler_create(m, NULL, &s) == PEAK_OK);
  CHECK(peak_context_create(m, NULL, &ctx) == PEAK_OK);
  CHECK_ERROR(peak_sampler_sample(s, ctx, &t), PEAK_ERR_INVALID_ARGUMENT, "no logits yet");
  peak_generate_params no_bos = peak_generate_default_params();
  no_bos.add_special = 0;
  CHECK_ERROR(peak_generate(ctx, s, "", 0, &no_bos, NULL), PEAK_ERR_INVALID_ARGUMENT,
              "the prompt is empty and the context holds no tokens");
  peak_context_free(ctx);
  peak_sampler_free(s);
}

static void test_model_load_errors(void) {
  peak_model* m = (peak_model*)0x1;
  CHECK_ERROR(peak_model_load("/nonexistent/model.gguf", NULL, &m), PEAK_ERR_IO, "/nonexistent/model.gguf");
  CHECK(m == NULL);
  CHECK_ERROR(peak_model_load(PEAK_SHARED_DIR "/fixtures/vocab/ggml-vocab-gpt-2.gguf", NULL, &m), PEAK_ERR_UNSUPPORTED,
              "unsupported architecture 'gpt2'");
  CHECK_ERROR(peak_model_load(PEAK_SHARED_DIR "/fixtures/vocab/ggml-vocab-qwen3.gguf", NULL, &m), PEAK_ERR_FORMAT,
              "lacks tensor 'token_embd.weight'");
  CHECK_ERROR(peak_model_load(PEAK_SHARED_DIR "/models/SOURCES.md", NULL, &m), PEAK_ERR_FORMAT, "bad magic");
  CHECK_ERROR(peak_model_load(NULL, NULL, &m), PEAK_ERR_INVALID_ARGUMENT, "path is NULL");
  CHECK_ERROR(peak_model_load(kStories, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "out is NULL");
  peak_model_params mp = peak_model_default_params();
  mp.progress = cancel_progress;
  CHECK_ERROR(peak_model_load(kStories, &mp, &m), PEAK_ERR_CANCELLED, "cancelled");
  mp = peak_model_default_params();
  mp.struct_size = 2;
  CHECK_ERROR(peak_model_load(kStories, &mp, &m), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  mp = peak_model_default_params();
  CHECK(mp.repack_weights == PEAK_REPACK_BACKGROUND);
  mp.repack_weights = 3;
  CHECK_ERROR(peak_model_load(kStories, &mp, &m), PEAK_ERR_INVALID_ARGUMENT, "peak_repack");
  mp.repack_weights = -1;
  CHECK_ERROR(peak_model_load(kStories, &mp, &m), PEAK_ERR_INVALID_ARGUMENT, "peak_repack");
  mp.repack_weights = PEAK_REPACK_AT_LOAD;
  CHECK(peak_model_load(kStories, &mp, &m) == PEAK_OK);
  peak_model_free(m);
  mp.use_mmap = 0;
  mp.use_mlock = 1;
  mp.repack_weights = 0;
  CHECK(peak_model_load(kStories, &mp, &m) == PEAK_OK);
  peak_model_free(m);
  peak_model_free(NULL);
  peak_model_info info;
  info.struct_size = sizeof info;
  CHECK_ERROR(peak_model_get_info(NULL, &info), PEAK_ERR_INVALID_ARGUMENT, "NULL");
}

/* peak_chat_apply_template with a built-in family (or the model's own when name is NULL). */
static peak_status apply_named(const peak_model* m, const char* name, const peak_chat_message* msgs, size_t n,
                               char* buf, size_t capacity, size_t* len) {
  peak_chat_template_params p = peak_chat_template_default_params();
  p.template_name = name;
  return peak_chat_apply_template(m, &p, msgs, n, buf, capacity, len);
}

static void test_chat_templates(peak_model* m) {
  peak_chat_message msgs[2] = {{"system", "Be brief."}, {"user", "Hi"}};
  char buf[512];
  size_t len = 0;
  CHECK(apply_named(m, NULL, msgs, 2, buf, sizeof buf, &len) == PEAK_OK);
  const char* chatml = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  CHECK(len == strlen(chatml) && memcmp(buf, chatml, len) == 0);
  CHECK(buf[len] == '\0');
  CHECK_ERROR(apply_named(m, NULL, msgs, 2, buf, strlen(chatml), &len), PEAK_ERR_BUFFER_TOO_SMALL, "buffer");
  CHECK(len == strlen(chatml));
  CHECK(apply_named(m, NULL, msgs, 2, buf, strlen(chatml) + 1, &len) == PEAK_OK);
  CHECK(len == strlen(chatml) && strcmp(buf, chatml) == 0);
  CHECK(apply_named(NULL, "llama3", msgs, 2, buf, sizeof buf, &len) == PEAK_OK);
  const char* llama3 =
      "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi"
      "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  CHECK(len == strlen(llama3) && memcmp(buf, llama3, len) == 0);
  CHECK_ERROR(apply_named(m, "llama3", msgs, 2, buf, 10, &len), PEAK_ERR_BUFFER_TOO_SMALL, "buffer");
  CHECK(len == strlen(llama3));
  CHECK_ERROR(apply_named(NULL, NULL, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "a template name or a template source");
  CHECK_ERROR(apply_named(m, "nonsense", msgs, 2, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT, "chatml");
  peak_chat_message bad[1] = {{"wizard", "x"}};
  CHECK_ERROR(apply_named(m, NULL, bad, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT, "wizard");
  peak_chat_message null_content[1] = {{"user", NULL}};
  CHECK_ERROR(apply_named(m, NULL, null_content, 1, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_chat_template_params p = peak_chat_template_default_params();
  p.enable_thinking = 2;
  CHECK_ERROR(peak_chat_apply_template(m, &p, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT,
              "enable_thinking");
  p = peak_chat_template_default_params();
  p.struct_size = 8;
  CHECK_ERROR(peak_chat_apply_template(m, &p, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
}

/* A Jinja template given as source, rendered as Hugging Face renders it; the
   expected texts are Jinja2's renders in ../shared/fixtures/templates/expected.json. */
static void test_jinja_templates(void) {
  static char gemma[4096];
  CHECK(read_fixture_text(PEAK_SHARED_DIR "/fixtures/templates/google-gemma-2-2b-it.jinja", gemma, sizeof gemma));
  peak_chat_message msgs[2] = {{"system", "You are a helpful assistant."}, {"user", "Hello!"}};
  char buf[512];
  size_t len = 0;
  peak_chat_template_params p = peak_chat_template_default_params();
  p.template_source = gemma;
  p.bos_token = "<bos>";
  CHECK(peak_chat_apply_template(NULL, &p, msgs + 1, 1, buf, sizeof buf, &len) == PEAK_OK);
  const char* expected = "<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n";
  CHECK(len == strlen(expected) && strcmp(buf, expected) == 0);
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_TEMPLATE,
              "System role not supported");
  p.template_source = "{% for m in messages %}{{ m.content }";
  CHECK_ERROR(peak_chat_apply_template(NULL, &p, msgs, 2, buf, sizeof buf, &len), PEAK_ERR_TEMPLATE, "line 1");
}

int main(void) {
  read_reference_ids();
  test_model_load_errors();
  peak_model* m = load();
  test_model_info(m);
  test_tokens(m);
  test_text_buffers(m);
  test_context_and_sampling(m);
  test_generate_continuation(m);
  test_profile(m);
  test_context_misuse(m);
  test_chat_templates(m);
  test_jinja_templates();
  peak_model_free(m);
  return capi_test_summary("capi_model_test");
}
