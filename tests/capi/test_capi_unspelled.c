/* Text a vocabulary without byte tokens cannot spell: stories260K with a
   byte-level BPE vocabulary that spells a, b, d, g, o and the space
   (tests/tools/write_edited_stories.cpp). peak_text_unspelled names what the
   model will not see; text of which nothing is left is refused, not run as an
   empty text. */
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char kRefusal[] = "the model's vocabulary can spell none of its characters ('h', 'i')";

static void test_unspelled(peak_model* m) {
  char buf[16];
  size_t length = 99;
  CHECK(peak_text_unspelled(m, "bad hi\x1b hi", 10, 0, buf, sizeof buf, &length) == PEAK_OK);
  CHECK(length == 3 && memcmp(buf, "hi\x1b", 4) == 0);
  CHECK(peak_text_unspelled(m, "bad", 3, 0, buf, sizeof buf, &length) == PEAK_OK && length == 0 && buf[0] == 0);
  CHECK(peak_text_unspelled(m, "hi", 2, 0, NULL, 0, &length) == PEAK_ERR_BUFFER_TOO_SMALL && length == 2);
  CHECK_ERROR(peak_text_unspelled(m, NULL, 2, 0, buf, sizeof buf, &length), PEAK_ERR_INVALID_ARGUMENT, "text is NULL");
}

static void test_tokenize(peak_model* m) {
  int32_t tokens[8];
  size_t n = 99;
  CHECK_ERROR(peak_tokenize(m, "hi", 2, 1, 0, tokens, 8, &n), PEAK_ERR_INVALID_ARGUMENT, kRefusal);
  CHECK(n == 0);
  CHECK(strstr(peak_last_error(), "peak_tokenize: the text") != NULL);
  CHECK(peak_tokenize(m, "", 0, 1, 0, tokens, 8, &n) == PEAK_OK && n == 0);       /* empty is not refused */
  CHECK(peak_tokenize(m, "hi bad", 6, 1, 0, tokens, 8, &n) == PEAK_OK && n == 4); /* Ġ b a d */
}

static void test_generate(peak_model* m) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 64;
  cp.n_threads = 1;
  peak_context* ctx = NULL;
  peak_sampler* s = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  CHECK(peak_sampler_create(m, NULL, &s) == PEAK_OK);
  if (!ctx || !s) return;
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 2;
  CHECK_ERROR(peak_generate(ctx, s, "hi", 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, kRefusal);
  CHECK(peak_context_n_used(ctx) == 0);
  CHECK(peak_generate(ctx, s, "bad", 3, &gp, NULL) == PEAK_OK);
  /* A continuation too: nothing is left of it, so it is not "continue as is". */
  const size_t used = peak_context_n_used(ctx);
  CHECK_ERROR(peak_generate(ctx, s, "hi", 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "peak_generate: the prompt");
  CHECK(peak_context_n_used(ctx) == used);
  peak_sampler_free(s);
  peak_context_free(ctx);
}

static void test_session(peak_model* m) {
  peak_session_params p = peak_session_default_params();
  p.chat_template = "raw";
  p.n_threads = 1;
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  if (!s) return;
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 2;
  CHECK_ERROR(peak_session_chat(s, "hi", 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, kRefusal);
  CHECK(peak_session_n_messages(s) == 0);
  CHECK(peak_session_chat(s, "bad", 3, &gp, NULL) == PEAK_OK);
  CHECK(peak_session_n_messages(s) == 2);
  CHECK_ERROR(peak_session_edit_last(s, "hi", 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT,
              "peak_session_edit_last: the message");
  CHECK(peak_session_n_messages(s) == 2);
  CHECK_ERROR(peak_session_append(s, PEAK_ROLE_USER, "hi", 2), PEAK_ERR_INVALID_ARGUMENT,
              "peak_session_append: the user message");
  CHECK(peak_session_n_messages(s) == 2);
  peak_session_free(s);
}

/* A vocabulary with byte tokens spells everything. */
static void test_byte_tokens(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load_vocab(PEAK_SHARED_DIR "/models/stories260K.gguf", &m) == PEAK_OK);
  char buf[8];
  size_t length = 99;
  CHECK(peak_text_unspelled(m, "h\xC3\xA9\x1b", 4, 0, buf, sizeof buf, &length) == PEAK_OK && length == 0);
  peak_model_free(m);
}

int main(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_NO_BYTE_TOKENS_MODEL, NULL, &m) == PEAK_OK);
  if (m) {
    test_unspelled(m);
    test_tokenize(m);
    test_generate(m);
    test_session(m);
    peak_model_free(m);
  }
  test_byte_tokens();
  return capi_test_summary("test_capi_unspelled");
}
