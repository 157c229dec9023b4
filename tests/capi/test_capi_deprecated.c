/* The 0.1 spellings kept for one release: each must still be declared and
   exported, and behave as the function that replaced it (peak_gguf_find_key and
   peak_gguf_find_tensor exactly as in 0.1: -1 when absent, no error recorded).
   This file alone is built with the deprecation warning off. */
#include <stdint.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";

static void test_gguf_aliases(void) {
  const peak_gguf_open_params old_params = peak_gguf_default_open_params();
  const peak_gguf_params params = peak_gguf_default_params();
  CHECK(sizeof old_params == sizeof params && old_params.struct_size == params.struct_size);
  CHECK(old_params.use_mmap == params.use_mmap);
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(kStories, &old_params, &g) == PEAK_OK);

  size_t index = 0;
  CHECK(peak_gguf_lookup_key(g, "llama.block_count", &index) == PEAK_OK);
  CHECK(peak_gguf_find_key(g, "llama.block_count") == (int64_t)index);
  CHECK(peak_gguf_lookup_tensor(g, "blk.4.ffn_norm.weight", &index) == PEAK_OK);
  CHECK(peak_gguf_find_tensor(g, "blk.4.ffn_norm.weight") == (int64_t)index);

  /* Absent names and NULL arguments give -1 and leave the last error alone. */
  CHECK(peak_gguf_lookup_key(g, "earlier.failure", &index) == PEAK_ERR_NOT_FOUND);
  CHECK(peak_gguf_find_key(g, "no.such.key") == -1);
  CHECK(peak_gguf_find_key(g, NULL) == -1);
  CHECK(peak_gguf_find_key(NULL, "llama.block_count") == -1);
  CHECK(peak_gguf_find_tensor(g, "missing") == -1);
  CHECK(peak_gguf_find_tensor(g, NULL) == -1);
  CHECK(peak_gguf_find_tensor(NULL, "output.weight") == -1);
  CHECK(strstr(peak_last_error(), "earlier.failure") != NULL);
  peak_gguf_free(g);
}

static peak_context* new_context(peak_model* m, int logits_all) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 64;
  cp.n_threads = 1;
  cp.logits_all = logits_all;
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  return ctx;
}

static void test_context_aliases(peak_model* m) {
  const int32_t tokens[4] = {1, 403, 407, 261};
  peak_context* old_ctx = new_context(m, 1);
  peak_context* new_ctx = new_context(m, 1);
  float* old_all = (float*)malloc(sizeof(float) * 512 * 4);
  float* new_all = (float*)malloc(sizeof(float) * 512 * 4);

  /* Evaluation: the same logits through either name. */
  CHECK(peak_eval_all_logits(old_ctx, tokens, 4, old_all) == PEAK_OK);
  CHECK(peak_context_eval_all_logits(new_ctx, tokens, 4, new_all) == PEAK_OK);
  CHECK(memcmp(old_all, new_all, sizeof(float) * 512 * 4) == 0);
  CHECK(peak_eval(old_ctx, tokens, 1) == PEAK_OK);
  CHECK(peak_context_eval(new_ctx, tokens, 1) == PEAK_OK);
  CHECK(peak_get_logits(old_ctx) != NULL);
  CHECK(memcmp(peak_get_logits(old_ctx), peak_context_get_logits(new_ctx), sizeof(float) * 512) == 0);
  CHECK(peak_get_logits(NULL) == NULL);

  /* KV cache editing. */
  CHECK(peak_kv_remove(old_ctx, 1, 2) == PEAK_OK);
  CHECK(peak_context_kv_remove(new_ctx, 1, 2) == PEAK_OK);
  CHECK(peak_context_n_used(old_ctx) == 3 && peak_context_n_used(new_ctx) == 3);
  CHECK(peak_kv_shift(old_ctx, 1, 2, 5) == PEAK_OK);
  CHECK(peak_context_kv_shift(new_ctx, 1, 2, 5) == PEAK_OK);
  CHECK(peak_eval(old_ctx, tokens + 1, 1) == PEAK_OK);
  CHECK(peak_context_eval(new_ctx, tokens + 1, 1) == PEAK_OK);
  CHECK(memcmp(peak_get_logits(old_ctx), peak_context_get_logits(new_ctx), sizeof(float) * 512) == 0);
  CHECK_ERROR(peak_kv_remove(old_ctx, 0, 9), PEAK_ERR_INVALID_ARGUMENT, "outside");
  CHECK_ERROR(peak_kv_shift(old_ctx, 3, 9, 1), PEAK_ERR_INVALID_ARGUMENT, "outside");
  CHECK(peak_kv_clear(old_ctx) == PEAK_OK && peak_context_n_used(old_ctx) == 0);

  /* Misuse gives the new functions' statuses. */
  CHECK_ERROR(peak_eval(NULL, tokens, 1), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_eval_all_logits(old_ctx, NULL, 2, old_all), PEAK_ERR_INVALID_ARGUMENT, "tokens is NULL");
  CHECK_ERROR(peak_kv_clear(NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_kv_remove(NULL, 0, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_kv_shift(NULL, 0, 0, 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");

  free(old_all);
  free(new_all);
  peak_context_free(old_ctx);
  peak_context_free(new_ctx);
}

int main(void) {
  test_gguf_aliases();
  peak_model* m = NULL;
  CHECK(peak_model_load(kStories, NULL, &m) == PEAK_OK);
  if (m) test_context_aliases(m);
  peak_model_free(m);
  return capi_test_summary("capi_deprecated_test");
}
