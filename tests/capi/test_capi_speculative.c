/* Speculative decoding through the C API on the real stories260K model.
   Prompt lookup (peak_generate_params.lookup_ngram): the same text as without
   it, the acceptance in the result, callers built against the 0.5 header
   (shorter structs) served as before, a session's turns, and the refusals: a
   context or session without rows for the draft, bad counts. A draft model
   (peak_draft_model, peak_generate_params.draft_model): greedy, the same text
   as without a draft, in peak_generate and in a session's turns; sampled, a
   text of the length asked for with most drafts kept (the draft is the target
   itself); callers built against the 0.7 header served as before; and the
   refusals: another vocabulary, a draft with prompt lookup, a probability out
   of range, missing arguments. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";
static const char* kOtherVocabulary = PEAK_SHARED_DIR "/models/llama-2-tiny-random.gguf";
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

/* Generates gp->max_tokens after `prompt` on a new context with `rows` rows
   of logits, at `temperature` with seed 5. */
static peak_status generate_after(peak_model* m, const char* prompt, size_t rows, float temperature,
                                  const peak_generate_params* gp, struct text_buffer* out,
                                  peak_generate_result* result) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 512;
  cp.n_threads = 1;
  cp.max_logit_rows = rows;
  peak_context* ctx = NULL;
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = temperature;
  sp.seed = 5;
  peak_sampler* s = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  out->length = 0;
  out->text[0] = '\0';
  peak_generate_params p = *gp;
  p.on_text = collect;
  p.user_data = out;
  const peak_status status = peak_generate(ctx, s, prompt, strlen(prompt), &p, result);
  peak_sampler_free(s);
  peak_context_free(ctx);
  return status;
}

/* Prompt lookup's case: kPrompt, temperature 0.8. */
static peak_status generate(peak_model* m, size_t rows, const peak_generate_params* gp, struct text_buffer* out,
                            peak_generate_result* result) {
  return generate_after(m, kPrompt, rows, 0.8f, gp, out, result);
}

/* A draft model: the target drafting for itself, and one of another vocabulary. */
static void check_draft_model(peak_model* m, peak_model* other) {
  static const char* kDraftPrompt = "Lily saw a big red ball in the park.";
  peak_generate_params gp = peak_generate_default_params();
  peak_context_params dp = peak_context_default_params();
  dp.n_ctx = 256;
  dp.n_threads = 1;
  peak_draft_model* draft = NULL;
  CHECK(peak_draft_model_create(m, &dp, &draft) == PEAK_OK && draft != NULL);

  CHECK(gp.draft_model == NULL && gp.draft_p_min == 0.75f);
  gp.max_tokens = 100;
  gp.draft_p_min = 0.0f;
  peak_generate_result plain, drafted;
  memset(&plain, 0, sizeof plain);
  plain.struct_size = sizeof plain;
  drafted = plain;
  static struct text_buffer plain_text, drafted_text;
  CHECK(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &plain_text, &plain) == PEAK_OK);
  gp.draft_model = draft;
  CHECK(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &drafted_text, &drafted) == PEAK_OK);
  CHECK(plain_text.length > 0 && strcmp(plain_text.text, drafted_text.text) == 0);
  CHECK(drafted.n_drafted_tokens > 0 && drafted.n_accepted_tokens > 0);
  CHECK(drafted.n_accepted_tokens <= drafted.n_drafted_tokens);

  /* Sampled: the target drafting for itself has its drafts kept (p equals q up to float sums). */
  CHECK(generate_after(m, kDraftPrompt, 5, 0.8f, &gp, &drafted_text, &drafted) == PEAK_OK);
  CHECK(drafted.n_generated_tokens == 100 || drafted.stop_reason == PEAK_STOP_EOG);
  CHECK(drafted.n_accepted_tokens * 10 >= drafted.n_drafted_tokens * 9);

  /* Parameters of the 0.7 header end before draft_model: no draft. */
  peak_generate_params old_params = gp;
  old_params.struct_size = offsetof(peak_generate_params, draft_model);
  CHECK(generate_after(m, kDraftPrompt, 5, 0.0f, &old_params, &drafted_text, &drafted) == PEAK_OK);
  CHECK(drafted.n_drafted_tokens == 0 && strcmp(plain_text.text, drafted_text.text) == 0);

  /* Refusals. */
  peak_draft_model* foreign = NULL;
  CHECK(peak_draft_model_create(other, &dp, &foreign) == PEAK_OK);
  gp.draft_model = foreign;
  CHECK_ERROR(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT,
              "vocabulary");
  gp.draft_model = draft;
  gp.lookup_ngram = 3;
  CHECK_ERROR(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT,
              "lookup_ngram");
  gp.lookup_ngram = 0;
  gp.draft_p_min = 1.5f;
  CHECK_ERROR(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT,
              "draft_p_min");
  gp.draft_p_min = 0.0f;
  gp.draft_max = 0;
  CHECK_ERROR(generate_after(m, kDraftPrompt, 5, 0.0f, &gp, &drafted_text, &drafted), PEAK_ERR_INVALID_ARGUMENT,
              "draft_max");
  gp.draft_max = 4;
  peak_draft_model* none = NULL;
  CHECK_ERROR(peak_draft_model_create(NULL, &dp, &none), PEAK_ERR_INVALID_ARGUMENT, "model");
  CHECK_ERROR(peak_draft_model_create(m, &dp, NULL), PEAK_ERR_INVALID_ARGUMENT, "out");
  peak_draft_model_free(NULL);

  /* A session's turns: the draft follows the conversation; greedy answers as without it. */
  peak_session_params sp = peak_session_default_params();
  sp.n_threads = 1;
  sp.max_logit_rows = 5;
  sp.sampler.temperature = 0.0f;
  static struct text_buffer answers[2];
  size_t drafted_in_turns = 0;
  for (int with_draft = 0; with_draft < 2; ++with_draft) {
    peak_session* session = NULL;
    CHECK(peak_session_create(m, &sp, &session) == PEAK_OK);
    if (!session) break;
    peak_generate_params turn = gp;
    turn.max_tokens = 40;
    turn.draft_model = with_draft ? draft : NULL;
    turn.on_text = collect;
    turn.user_data = &answers[with_draft];
    CHECK(peak_session_chat(session, kDraftPrompt, strlen(kDraftPrompt), &turn, &drafted) == PEAK_OK);
    drafted_in_turns += drafted.n_drafted_tokens;
    CHECK(peak_session_chat(session, "Then what?", 10, &turn, &drafted) == PEAK_OK);
    drafted_in_turns += drafted.n_drafted_tokens;
    peak_session_free(session);
  }
  CHECK(answers[0].length > 0 && strcmp(answers[0].text, answers[1].text) == 0);
  CHECK(drafted_in_turns > 0);

  peak_draft_model_free(foreign);
  peak_draft_model_free(draft);
}

int main(void) {
  peak_model* m = NULL;
  peak_model_params mp = peak_model_default_params();
  CHECK(peak_model_load(kStories, &mp, &m) == PEAK_OK);
  if (!m) return capi_test_summary("capi_speculative_test");

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

  peak_model* other = NULL;
  CHECK(peak_model_load(kOtherVocabulary, &mp, &other) == PEAK_OK);
  if (other) check_draft_model(m, other);
  peak_model_free(other);
  peak_model_free(m);
  return capi_test_summary("capi_speculative_test");
}
