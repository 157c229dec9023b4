/* Prompt lookup (peak_generate_params.lookup_ngram) through the C API on the
   real stories260K model: the same text as without it, the acceptance in the
   result, callers built against the 0.5 header (shorter structs) served as
   before, a session's turns, and the refusals: a context or session without
   rows for the draft, bad counts. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";
static const char* kPrompt =
    "Lily saw a big red ball in the park. She ran to the ball and kicked it very high.\n"
    "Lily saw a big red ball";

struct text_buffer {
  char text[8192];
  size_t length;
};

static int collect(const char* piece, size_t length, void* user_data) {
  struct text_buffer* t = (struct text_buffer*)user_data;
  if (t->length + length >= sizeof t->text) return 0;
  memcpy(t->text + t->length, piece, length);
  t->length += length;
  t->text[t->length] = '\0';
  return 1;
}

/* Generates 120 tokens after kPrompt on a new context with `rows` rows of
   logits, at temperature 0.8 with seed 5. */
static peak_status generate(peak_model* m, size_t rows, const peak_generate_params* gp, struct text_buffer* out,
                            peak_generate_result* result) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 512;
  cp.n_threads = 1;
  cp.max_logit_rows = rows;
  peak_context* ctx = NULL;
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0.8f;
  sp.seed = 5;
  peak_sampler* s = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  out->length = 0;
  out->text[0] = '\0';
  peak_generate_params p = *gp;
  p.on_text = collect;
  p.user_data = out;
  const peak_status status = peak_generate(ctx, s, kPrompt, strlen(kPrompt), &p, result);
  peak_sampler_free(s);
  peak_context_free(ctx);
  return status;
}

int main(void) {
  peak_model* m = NULL;
  peak_model_params mp = peak_model_default_params();
  CHECK(peak_model_load(kStories, &mp, &m) == PEAK_OK);
  if (!m) return capi_test_summary("capi_lookup_test");

  peak_generate_params gp = peak_generate_default_params();
  CHECK(gp.lookup_ngram == 0 && gp.draft_max == 4);
  gp.max_tokens = 120;
  peak_generate_result plain, drafted;
  memset(&plain, 0, sizeof plain);
  plain.struct_size = sizeof plain;
  drafted = plain;
  static struct text_buffer plain_text, drafted_text;
  CHECK(generate(m, 1, &gp, &plain_text, &plain) == PEAK_OK);
  CHECK(plain.n_drafted_tokens == 0 && plain.n_accepted_tokens == 0);

  gp.lookup_ngram = 3;
  CHECK(generate(m, 5, &gp, &drafted_text, &drafted) == PEAK_OK);
  CHECK(strcmp(plain_text.text, drafted_text.text) == 0);
  CHECK(drafted.n_generated_tokens == plain.n_generated_tokens && drafted.stop_reason == plain.stop_reason);
  CHECK(drafted.n_accepted_tokens > 0 && drafted.n_accepted_tokens <= drafted.n_drafted_tokens);

  /* A result of the 0.5 header ends before the acceptance: nothing is written past it. */
  unsigned char old_result[sizeof(peak_generate_result) + 16];
  memset(old_result, 0xAB, sizeof old_result);
  const size_t old_result_size = offsetof(peak_generate_result, n_drafted_tokens);
  memcpy(old_result, &old_result_size, sizeof old_result_size);
  CHECK(generate(m, 5, &gp, &drafted_text, (peak_generate_result*)(void*)old_result) == PEAK_OK);
  CHECK(((peak_generate_result*)(void*)old_result)->n_generated_tokens == plain.n_generated_tokens);
  for (size_t i = old_result_size; i < sizeof old_result; ++i) CHECK(old_result[i] == 0xAB);

  /* Parameters of the 0.5 header: no lookup fields, so no drafts. */
  peak_generate_params old_params = gp;
  old_params.struct_size = offsetof(peak_generate_params, lookup_ngram);
  CHECK(generate(m, 5, &old_params, &drafted_text, &drafted) == PEAK_OK);
  CHECK(drafted.n_drafted_tokens == 0 && strcmp(plain_text.text, drafted_text.text) == 0);

  /* Refusals. */
  CHECK_ERROR(generate(m, 1, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT, "max_logit_rows");
  peak_context_params no_rows = peak_context_default_params();
  no_rows.max_logit_rows = 0;
  peak_context* refused = NULL;
  CHECK_ERROR(peak_context_create(m, &no_rows, &refused), PEAK_ERR_INVALID_ARGUMENT, "max_logit_rows");
  CHECK(refused == NULL);
  gp.draft_max = 0;
  CHECK_ERROR(generate(m, 5, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT, "draft_max");
  gp.draft_max = 4;
  gp.lookup_ngram = -1;
  CHECK_ERROR(generate(m, 5, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT, "lookup_ngram");

  /* A session's turns draft from the conversation too, once its context hands out the rows. */
  peak_session_params sp = peak_session_default_params();
  CHECK(sp.max_logit_rows == 1);
  sp.n_threads = 1;
  sp.sampler.temperature = 0.0f;
  peak_session* session = NULL;
  CHECK(peak_session_create(m, &sp, &session) == PEAK_OK);
  gp.lookup_ngram = 3;
  gp.max_tokens = 60;
  CHECK_ERROR(peak_session_chat(session, "Lily saw a ball.", 16, &gp, &drafted), PEAK_ERR_INVALID_ARGUMENT,
              "max_logit_rows");
  peak_session_free(session);
  static struct text_buffer answers[2];
  for (int with_lookup = 0; with_lookup < 2; ++with_lookup) {
    sp.max_logit_rows = 5;
    session = NULL;
    CHECK(peak_session_create(m, &sp, &session) == PEAK_OK);
    peak_generate_params turn = gp;
    turn.lookup_ngram = with_lookup ? 3 : 0;
    turn.on_text = collect;
    turn.user_data = &answers[with_lookup];
    CHECK(peak_session_chat(session, kPrompt, strlen(kPrompt), &turn, &drafted) == PEAK_OK);
    CHECK(peak_session_chat(session, kPrompt, strlen(kPrompt), &turn, &drafted) == PEAK_OK);
    if (with_lookup) CHECK(drafted.n_drafted_tokens > 0);
    peak_session_free(session);
  }
  CHECK(answers[0].length > 0 && strcmp(answers[0].text, answers[1].text) == 0);
  peak_model_free(m);
  return capi_test_summary("capi_lookup_test");
}
