/* The abort flag during a prompt's evaluation: set before peak_generate or
   peak_session_chat starts, the call fails with PEAK_ERR_CANCELLED having
   evaluated nothing (no graph node ran) and leaves the context (the session)
   as it was; set from another thread while a long prompt is evaluated, it stops
   the evaluation part-way, counted in batches, not time; in both cases the
   context then continues exactly as a fresh one would. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";
static const char* kStart = "Once upon a time";
static char long_prompt[8192];

static void build_long_prompt(peak_model* m) {
  long_prompt[0] = '\0';
  const char* sentence = " Lily saw a big red ball in the park and ran to get it.";
  while (strlen(long_prompt) + strlen(sentence) < 1000) strcat(long_prompt, sentence);
  size_t n = 0;
  CHECK(peak_tokenize(m, long_prompt, strlen(long_prompt), 0, 0, NULL, 0, &n) == PEAK_ERR_BUFFER_TOO_SMALL);
  CHECK(n > 250 && n < 480);
}

static peak_context* new_context(peak_model* m, size_t n_batch) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = n_batch;
  cp.n_threads = 2;
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  return ctx;
}

static peak_sampler* greedy(peak_model* m) {
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0.0f;
  peak_sampler* s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  return s;
}

typedef struct {
  char text[2048];
  size_t length;
} collected;

static int collect(const char* text, size_t length, void* user) {
  collected* c = (collected*)user;
  if (c->length + length < sizeof c->text) {
    memcpy(c->text + c->length, text, length);
    c->length += length;
    c->text[c->length] = '\0';
  }
  return 1;
}

/* Greedy text after `prompt`, 16 tokens. */
static void continue_with(peak_context* ctx, peak_sampler* s, const char* prompt, collected* out) {
  memset(out, 0, sizeof *out);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 16;
  gp.on_text = collect;
  gp.user_data = out;
  CHECK(peak_generate(ctx, s, prompt, strlen(prompt), &gp, NULL) == PEAK_OK);
}

static size_t mul_mat_calls(const peak_context* ctx) {
  peak_op_profile entries[32];
  size_t n = 0;
  CHECK(peak_context_get_profile(ctx, entries, 32, &n) == PEAK_OK);
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(entries[i].op, "mul_mat") == 0) return entries[i].calls;
  }
  return 0;
}

static void test_flag_set_before_the_call(peak_model* m) {
  peak_context* ctx = new_context(m, 32);
  peak_sampler* s = greedy(m);
  int32_t start[16];
  size_t n_start = 0;
  CHECK(peak_tokenize(m, kStart, strlen(kStart), 1, 0, start, 16, &n_start) == PEAK_OK);
  CHECK(peak_context_eval(ctx, start, n_start) == PEAK_OK);
  float before[512];
  memcpy(before, peak_context_get_logits(ctx), sizeof before);
  CHECK(peak_context_set_profiling(ctx, 1) == PEAK_OK);

  volatile int flag = 1;
  peak_generate_params gp = peak_generate_default_params();
  gp.abort_flag = &flag;
  peak_generate_result result;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  CHECK_ERROR(peak_generate(ctx, s, long_prompt, strlen(long_prompt), &gp, &result), PEAK_ERR_CANCELLED,
              "cancelled while the prompt was evaluated");
  CHECK(peak_context_n_used(ctx) == n_start);
  CHECK(memcmp(before, peak_context_get_logits(ctx), sizeof before) == 0);
  CHECK(mul_mat_calls(ctx) == 0); /* not one batch began */

  /* Nothing to evaluate: generation itself stops at once, as before. */
  CHECK(peak_generate(ctx, s, "", 0, &gp, &result) == PEAK_OK);
  CHECK(result.stop_reason == PEAK_STOP_ABORTED && result.n_generated_tokens == 0);
  CHECK(peak_context_n_used(ctx) == n_start);

  /* The context goes on as a fresh one with the same start. */
  collected live, control;
  continue_with(ctx, s, long_prompt, &live);
  peak_context* fresh = new_context(m, 32);
  peak_sampler* fresh_s = greedy(m);
  CHECK(peak_context_eval(fresh, start, n_start) == PEAK_OK);
  continue_with(fresh, fresh_s, long_prompt, &control);
  CHECK(live.length > 0 && strcmp(live.text, control.text) == 0);
  peak_sampler_free(fresh_s);
  peak_context_free(fresh);
  peak_sampler_free(s);
  peak_context_free(ctx);
}

typedef struct {
  volatile int flag;
  long delay_ns;
} stopper;

static void* stop_later(void* arg) {
  stopper* st = (stopper*)arg;
  const struct timespec delay = {st->delay_ns / 1000000000L, st->delay_ns % 1000000000L};
  nanosleep(&delay, NULL);
  __atomic_store_n(&st->flag, 1, __ATOMIC_RELAXED); /* the store peak.h documents */
  return NULL;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One token per batch: the prompt is ~400 batches. A delay that lands the
   store inside the prompt's evaluation is found from a timed full one; what is
   checked is how many batches ran, from the profile's matrix products. */
static void test_flag_set_from_another_thread(peak_model* m) {
  size_t n_prompt = 0;
  peak_tokenize(m, long_prompt, strlen(long_prompt), 1, 0, NULL, 0, &n_prompt);
  peak_sampler* s = greedy(m);

  peak_context* timed = new_context(m, 1);
  CHECK(peak_context_set_profiling(timed, 1) == PEAK_OK);
  const int32_t bos = 1;
  CHECK(peak_context_eval(timed, &bos, 1) == PEAK_OK);
  const size_t per_batch = mul_mat_calls(timed);
  CHECK(per_batch > 0);
  CHECK(peak_context_kv_clear(timed) == PEAK_OK);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 1;
  const double t0 = seconds_now();
  CHECK(peak_generate(timed, s, long_prompt, strlen(long_prompt), &gp, NULL) == PEAK_OK);
  const double full = seconds_now() - t0;
  peak_context_free(timed);

  int stopped_part_way = 0;
  for (int attempt = 0; attempt < 8 && !stopped_part_way; ++attempt) {
    peak_context* ctx = new_context(m, 1);
    CHECK(peak_context_set_profiling(ctx, 1) == PEAK_OK);
    stopper st = {0, (long)(full * 1e9 * (attempt % 2 ? 0.5 : 0.25))};
    gp = peak_generate_default_params();
    gp.max_tokens = SIZE_MAX;
    gp.abort_flag = &st.flag;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, stop_later, &st) == 0);
    peak_generate_result result;
    memset(&result, 0, sizeof result);
    result.struct_size = sizeof result;
    const peak_status status = peak_generate(ctx, s, long_prompt, strlen(long_prompt), &gp, &result);
    pthread_join(thread, NULL);
    const size_t batches = mul_mat_calls(ctx) / per_batch;
    if (status == PEAK_ERR_CANCELLED) {
      CHECK(peak_context_n_used(ctx) == 0);
      CHECK(batches < n_prompt);
      if (batches > 0) stopped_part_way = 1;
      printf("cancelled after %zu of %zu batches\n", batches, n_prompt);
    } else {
      CHECK(status == PEAK_OK);
      CHECK(result.stop_reason == PEAK_STOP_ABORTED || result.stop_reason == PEAK_STOP_CONTEXT_FULL ||
            result.stop_reason == PEAK_STOP_EOG);
    }
    /* Usable afterwards either way. */
    collected live, control;
    CHECK(peak_context_kv_clear(ctx) == PEAK_OK);
    peak_sampler_reset(s);
    continue_with(ctx, s, kStart, &live);
    peak_context* fresh = new_context(m, 1);
    peak_sampler_reset(s);
    continue_with(fresh, s, kStart, &control);
    CHECK(strcmp(live.text, control.text) == 0);
    peak_context_free(fresh);
    peak_context_free(ctx);
  }
  CHECK(stopped_part_way);
  peak_sampler_free(s);
}

static peak_session_params session_params(void) {
  peak_session_params p = peak_session_default_params();
  p.chat_template = "raw";
  p.system_prompt = "Lily and Tom play in the park.";
  p.mode = PEAK_MEMORY_WINDOW;
  p.recent_max = 400;
  p.headroom = 64;
  p.sampler.temperature = 0.0f;
  p.n_threads = 1;
  p.n_batch = 16;
  return p;
}

static void session_answer(peak_session* s, const char* text, collected* out) {
  memset(out, 0, sizeof *out);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 16;
  gp.on_text = collect;
  gp.user_data = out;
  CHECK(peak_session_chat(s, text, strlen(text), &gp, NULL) == PEAK_OK);
}

static void test_session_turn(peak_model* m) {
  const peak_session_params p = session_params();
  peak_session *live = NULL, *control = NULL;
  CHECK(peak_session_create(m, &p, &live) == PEAK_OK && peak_session_create(m, &p, &control) == PEAK_OK);
  collected a, b;
  session_answer(live, "Tom found a ball.", &a);
  session_answer(control, "Tom found a ball.", &b);

  char before[8192], after[8192];
  size_t n_before = 0, n_after = 0;
  CHECK(peak_session_preview_prompt(live, "Next.", 5, before, sizeof before, &n_before) == PEAK_OK);
  volatile int flag = 1;
  peak_generate_params gp = peak_generate_default_params();
  gp.abort_flag = &flag;
  CHECK_ERROR(peak_session_chat(live, long_prompt, 600, &gp, NULL), PEAK_ERR_CANCELLED, "cancelled");
  CHECK(peak_session_preview_prompt(live, "Next.", 5, after, sizeof after, &n_after) == PEAK_OK);
  CHECK(n_before == n_after && memcmp(before, after, n_before) == 0);
  peak_session_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  CHECK(peak_session_get_stats(live, &stats) == PEAK_OK && stats.turns == 1);

  session_answer(live, "Lily laughed.", &a);
  session_answer(control, "Lily laughed.", &b);
  CHECK(a.length > 0 && strcmp(a.text, b.text) == 0);
  peak_session_free(live);
  peak_session_free(control);
}

int main(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(kStories, NULL, &m) == PEAK_OK);
  if (!m) return capi_test_summary("test_capi_cancel");
  build_long_prompt(m);
  test_flag_set_before_the_call(m);
  test_flag_set_from_another_thread(m);
  test_session_turn(m);
  peak_model_free(m);
  return capi_test_summary("test_capi_cancel");
}
