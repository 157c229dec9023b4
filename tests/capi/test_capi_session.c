/* Drives every peak_session_* function from C on stories260K, misuse included. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static int unterminated_pieces = 0;

static int count_text(const char* text, size_t length, void* user) {
  if (text[length] != '\0') ++unterminated_pieces;
  *(size_t*)user += length;
  return 1;
}

static peak_session_message message_at(const peak_session* s, size_t index) {
  peak_session_message m;
  memset(&m, 0, sizeof m);
  m.struct_size = sizeof m;
  CHECK(peak_session_get_message(s, index, &m) == PEAK_OK);
  return m;
}

static peak_session_params small_params(void) {
  peak_session_params p = peak_session_default_params();
  p.chat_template = "raw";
  p.system_prompt = "Lily and Tom play in the park.";
  p.recent_max = 96;
  p.summary_max = 48;
  p.trigger_discard = 40;
  p.headroom = 32;
  p.summary_n_ctx = 256;
  p.summary_max_new_tokens = 32;
  p.background_summary = 0;
  p.sampler.temperature = 0.0f;
  p.n_threads = 1;
  return p;
}

/* Each count refused is named as the header spells it, with its allowed range. */
static void check_count_refusals(peak_model* m) {
  static const struct {
    size_t offset;
    size_t value;
    const char* message;
  } cases[] = {
      {offsetof(peak_session_params, recent_max), 8, "recent_max is 8; it must be at least 32"},
      {offsetof(peak_session_params, recent_max), (size_t)INT32_MAX + 1, "recent_max is 2147483648, more than the"},
      {offsetof(peak_session_params, headroom), 0, "headroom is 0; it must be at least 24"},
      {offsetof(peak_session_params, summary_max), 15, "summary_max is 15; it must be at least 16"},
      {offsetof(peak_session_params, trigger_discard), 0, "trigger_discard is 0; it must be at least 1"},
      {offsetof(peak_session_params, n_batch), 0, "n_batch is 0; it must be at least 1"},
      {offsetof(peak_session_params, summary_max_new_tokens), 0, "summary_max_new_tokens is 0; it must be at least 1"},
      /* small_params' summary_max_new_tokens is 32 */
      {offsetof(peak_session_params, summary_n_ctx), 64,
       "summary_n_ctx is 64; it must be at least 4 x summary_max_new_tokens (32), 128"},
      /* 0 too: a context of n_ctx 0 would take the model's size */
      {offsetof(peak_session_params, summary_n_ctx), 0, "summary_n_ctx is 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    peak_session_params q = small_params();
    memcpy((char*)&q + cases[i].offset, &cases[i].value, sizeof(size_t));
    peak_session* refused = (peak_session*)0x1;
    CHECK_ERROR(peak_session_create(m, &q, &refused), PEAK_ERR_INVALID_ARGUMENT, cases[i].message);
    CHECK(refused == NULL);
  }
}

/* The warnings logged while collecting (peak_set_log_callback), the last kept. */
static char last_warning[1024];
static int warnings_seen = 0;

static void collect_warning(peak_log_level level, const char* message, void* user_data) {
  (void)user_data;
  if (level != PEAK_LOG_WARN) return;
  ++warnings_seen;
  snprintf(last_warning, sizeof last_warning, "%s", message);
}

/* The greedy answer of `s` to a line. */
static void answer_line(peak_session* s, struct text_buf* out) {
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 16;
  gp.on_text = collect_text;
  gp.user_data = out;
  memset(out, 0, sizeof *out);
  const char* line = "Then it rained.";
  CHECK(peak_session_chat(s, line, strlen(line), &gp, NULL) == PEAK_OK);
}

/* verify_kv_cells: a file whose cells were rewritten behind a right checksum
   is caught on restore, and the session answers as one that prefilled. */
static void check_kv_verification(peak_model* m) {
  CHECK(peak_session_default_params().verify_kv_cells == 0);
  peak_session_params p = small_params();
  p.type_k = p.type_v = PEAK_TYPE_F32;
  /* A caller built before verify_kv_cells declares the struct without it: never read. */
  peak_session_params older = p;
  older.struct_size = offsetof(peak_session_params, verify_kv_cells);
  older.verify_kv_cells = (size_t)INT32_MAX + 1;
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &older, &s) == PEAK_OK);
  peak_session_free(s);
  p.verify_kv_cells = (size_t)INT32_MAX + 1;
  s = (peak_session*)0x1;
  CHECK_ERROR(peak_session_create(m, &p, &s), PEAK_ERR_INVALID_ARGUMENT,
              "verify_kv_cells is 2147483648, more than the");
  CHECK(s == NULL);

  p.verify_kv_cells = 0;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 12;
  for (int i = 0; i < 3; ++i) CHECK(peak_session_chat(s, "Max liked to run in the sun.", 28, &gp, NULL) == PEAK_OK);
  const char* path = "capi_session_kv_verify.pkss";
  const char* plain = "capi_session_kv_verify_plain.pkss";
  CHECK(peak_session_save(s, path, 1) == PEAK_OK);
  CHECK(peak_session_save(s, plain, 0) == PEAK_OK);
  peak_session_free(s);

  /* The file ends with the cells (the last layer's V last, a cell's 8 heads of
     8 floats for stories260K) and the FNV-1a checksum of the payload after the
     16-byte header: the last cell's last V set to 1.0, the checksum made right. */
  static unsigned char file[1 << 20];
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  const size_t size = fread(file, 1, sizeof file, f);
  fclose(f);
  CHECK(size > 16 + 256 + 8 && size < sizeof file);
  const float one = 1.0f;
  for (size_t at = size - 8 - 256; at < size - 8; at += 4) memcpy(file + at, &one, 4);
  uint64_t sum = 0xcbf29ce484222325ull;
  for (size_t i = 16; i < size - 8; ++i) sum = (sum ^ file[i]) * 0x100000001b3ull;
  memcpy(file + size - 8, &sum, 8);
  f = fopen(path, "wb");
  CHECK(f != NULL && fwrite(file, 1, size, f) == size);
  fclose(f);

  peak_session* prefilled = NULL;
  CHECK(peak_session_create(m, &p, &prefilled) == PEAK_OK);
  CHECK(peak_session_restore(prefilled, plain) == PEAK_OK);
  p.verify_kv_cells = 100000;
  peak_session* checked = NULL;
  CHECK(peak_session_create(m, &p, &checked) == PEAK_OK);
  peak_set_log_callback(collect_warning, NULL);
  CHECK(peak_session_restore(checked, path) == PEAK_OK);
  peak_set_log_callback(NULL, NULL);
  CHECK(warnings_seen == 1);
  CHECK(strstr(last_warning,
               "capi_session_kv_verify.pkss: its KV cache differs from the cells computed again (layer 4 V") != NULL);
  if (warnings_seen != 1) fprintf(stderr, "  last warning: %s\n", last_warning);
  struct text_buf a, b;
  answer_line(checked, &a);
  answer_line(prefilled, &b);
  CHECK(a.length > 0 && strcmp(a.text, b.text) == 0);
  peak_session_free(checked);
  peak_session_free(prefilled);
  remove(path);
  remove(plain);
}

/* An imported history, answered again, edited, with other sampling. */
static void check_editing(peak_model* m) {
  peak_session_params p = small_params();
  p.mode = PEAK_MEMORY_WINDOW;
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);
  const char* question = "Once upon a time there was a dog named Max.";
  const char* answer = "Max ran to the park.";
  CHECK_ERROR(peak_session_append(s, PEAK_ROLE_ASSISTANT, answer, strlen(answer)), PEAK_ERR_INVALID_ARGUMENT,
              "cannot open the conversation");
  CHECK_ERROR(peak_session_append(s, PEAK_ROLE_SYSTEM, "x", 1), PEAK_ERR_INVALID_ARGUMENT,
              "role is 0; it must be PEAK_ROLE_USER (1) or PEAK_ROLE_ASSISTANT (2)");
  CHECK_ERROR(peak_session_append(s, (peak_role)9, "x", 1), PEAK_ERR_INVALID_ARGUMENT, "role is 9");
  CHECK_ERROR(peak_session_append(s, PEAK_ROLE_USER, NULL, 3), PEAK_ERR_INVALID_ARGUMENT, "text is NULL");
  CHECK_ERROR(peak_session_append(NULL, PEAK_ROLE_USER, "x", 1), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_regenerate(s, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "no user message to answer again");
  CHECK(peak_session_append(s, PEAK_ROLE_USER, question, strlen(question)) == PEAK_OK);
  CHECK_ERROR(peak_session_append(s, PEAK_ROLE_USER, question, strlen(question)), PEAK_ERR_INVALID_ARGUMENT,
              "already ends with a user message");
  CHECK_ERROR(peak_session_chat(s, "Hi.", 3, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "has no answer yet");
  CHECK(peak_session_append(s, PEAK_ROLE_ASSISTANT, answer, strlen(answer)) == PEAK_OK);
  CHECK(peak_session_n_messages(s) == 3);
  CHECK(strcmp(message_at(s, 2).text, answer) == 0 && message_at(s, 2).state == PEAK_MESSAGE_IN_CONTEXT);

  /* Greedy: answering again gives the same answer. */
  struct text_buf first, again;
  memset(&first, 0, sizeof first);
  memset(&again, 0, sizeof again);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 16;
  gp.on_text = collect_text;
  gp.user_data = &first;
  const char* next = "Max found a red ball.";
  CHECK(peak_session_chat(s, next, strlen(next), &gp, NULL) == PEAK_OK);
  gp.user_data = &again;
  CHECK(peak_session_regenerate(s, &gp, NULL) == PEAK_OK);
  CHECK(first.length > 0 && strcmp(first.text, again.text) == 0);
  CHECK(peak_session_n_messages(s) == 5 && strcmp(message_at(s, 4).text, first.text) == 0);

  /* Another temperature takes effect; a sampled answer written again differs. */
  peak_sampler_params hot = peak_sampler_default_params();
  hot.temperature = 1.5f;
  hot.top_k = 0;
  hot.top_p = 1.0f;
  hot.min_p = 0.0f;
  hot.seed = 7;
  CHECK(peak_session_set_sampler(s, &hot) == PEAK_OK);
  struct text_buf sampled, resampled;
  memset(&sampled, 0, sizeof sampled);
  memset(&resampled, 0, sizeof resampled);
  gp.user_data = &sampled;
  CHECK(peak_session_regenerate(s, &gp, NULL) == PEAK_OK);
  gp.user_data = &resampled;
  CHECK(peak_session_regenerate(s, &gp, NULL) == PEAK_OK);
  CHECK(strcmp(sampled.text, first.text) != 0 && strcmp(resampled.text, sampled.text) != 0);
  hot.temperature = -1.0f;
  CHECK_ERROR(peak_session_set_sampler(s, &hot), PEAK_ERR_INVALID_ARGUMENT, "temperature");
  hot.struct_size = 4;
  CHECK_ERROR(peak_session_set_sampler(s, &hot), PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_params.struct_size");
  CHECK_ERROR(peak_session_set_sampler(s, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");

  /* Editing the last user message replaces it and its answer. */
  peak_sampler_params greedy = peak_sampler_default_params();
  greedy.temperature = 0.0f;
  CHECK(peak_session_set_sampler(s, &greedy) == PEAK_OK);
  const char* edited = "Max found a blue kite.";
  gp.user_data = &again;
  again.length = 0;
  CHECK(peak_session_edit_last(s, edited, strlen(edited), &gp, NULL) == PEAK_OK);
  CHECK(peak_session_n_messages(s) == 5 && strcmp(message_at(s, 3).text, edited) == 0);
  CHECK(strcmp(message_at(s, 4).text, again.text) == 0);
  CHECK_ERROR(peak_session_edit_last(s, NULL, 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "user_text is NULL");
  CHECK_ERROR(peak_session_edit_last(NULL, edited, 2, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_regenerate(NULL, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  gp.struct_size = 2;
  CHECK_ERROR(peak_session_regenerate(s, &gp, NULL), PEAK_ERR_INVALID_ARGUMENT, "peak_generate_params.struct_size");
  peak_session_free(s);
}

int main(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &m) == PEAK_OK);

  peak_session_params d = peak_session_default_params();
  CHECK(d.struct_size == sizeof d && d.recent_max == 4096 && d.summary_max == 256 && d.trigger_discard == 2048);
  CHECK(d.type_k == PEAK_TYPE_Q8_0 && d.summary_type_kv == PEAK_TYPE_Q4_0 && d.mode == PEAK_MEMORY_SSSKV);
  CHECK(d.rebuild == PEAK_REBUILD_BACKGROUND && d.background_summary == 1);

  peak_session_params p = small_params();
  peak_session* s = NULL;
  CHECK(peak_session_create(m, &p, &s) == PEAK_OK);

  peak_generate_params gp = peak_generate_default_params();
  size_t streamed = 0;
  gp.max_tokens = 12;
  gp.on_text = count_text;
  gp.user_data = &streamed;
  peak_generate_result r;
  memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  peak_session_stats st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  /* The default rebuild: summaries written before the turn returns are rebuilt
     into a staging cache there too, which lives until the next turn swaps it in. */
  size_t staging_seen = 0;
  for (int i = 0; i < 20; ++i) {
    const char* line = "Once upon a time there was a dog named Max.";
    CHECK(peak_session_chat(s, line, strlen(line), &gp, &r) == PEAK_OK);
    CHECK(peak_session_get_stats(s, &st) == PEAK_OK);
    if (st.staging_kv_bytes > staging_seen) staging_seen = st.staging_kv_bytes;
  }
  CHECK(streamed > 0 && unterminated_pieces == 0);
  CHECK(r.n_generated_tokens > 0 && r.n_generated_tokens <= 12);
  CHECK(peak_session_wait_summary(s) == PEAK_OK);

  CHECK(peak_session_get_stats(s, &st) == PEAK_OK);
  CHECK(st.turns == 20 && st.dropped_total > 0 && st.summaries >= 1);
  /* A staging cache has the main cache's size; the main one is part of kv_bytes. */
  CHECK(staging_seen > 0 && staging_seen < st.kv_bytes && st.staging_kv_bytes == 0);
  CHECK(st.worker_rebuild_seconds > 0 && st.summary_running == 0);
  CHECK(st.prefix_tokens + st.summary_tokens + st.recent_tokens <= st.n_ctx);
  CHECK(st.summary_tokens <= 48 && st.kv_bytes > 0);
  CHECK(st.summary_failures == 0);

  /* The last turn's times: it evaluated a message and generated an answer. */
  peak_session_turn_stats ts;
  memset(&ts, 0, sizeof ts);
  ts.struct_size = sizeof ts;
  CHECK(peak_session_get_turn_stats(s, &ts) == PEAK_OK);
  CHECK(ts.prefill_seconds > 0 && ts.generation_seconds > 0 && ts.catch_up_seconds >= 0 && ts.rebuild_seconds >= 0);
  ts.struct_size = 5;
  CHECK_ERROR(peak_session_get_turn_stats(s, &ts), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  CHECK_ERROR(peak_session_get_turn_stats(NULL, &ts), PEAK_ERR_INVALID_ARGUMENT, "NULL");

  char buf[1024];
  size_t len = 0;
  CHECK(peak_session_get_summary(s, buf, sizeof buf, &len) == PEAK_OK && len > 0);
  CHECK(len < sizeof buf && buf[len] == '\0');
  const size_t summary_length = len;
  CHECK_ERROR(peak_session_get_summary(s, buf, 1, &len), PEAK_ERR_BUFFER_TOO_SMALL, "summary needs");
  /* The NUL needs a byte of its own: a buffer of exactly the text's length is too small. */
  CHECK_ERROR(peak_session_get_summary(s, buf, summary_length, &len), PEAK_ERR_BUFFER_TOO_SMALL, "summary needs");
  CHECK(len == summary_length);
  buf[summary_length] = 'x';
  CHECK(peak_session_get_summary(s, buf, summary_length + 1, &len) == PEAK_OK && len == summary_length);
  CHECK(buf[len] == '\0');

  /* The conversation as an app shows it: the system prompt, then 20 turns;
     the oldest summarized, Recent's in context. */
  const size_t n_messages = peak_session_n_messages(s);
  CHECK(n_messages == 41);
  peak_session_message msg = message_at(s, 0);
  CHECK(msg.role == PEAK_ROLE_SYSTEM && msg.state == PEAK_MESSAGE_IN_CONTEXT);
  CHECK(msg.length == strlen(p.system_prompt) && strcmp(msg.text, p.system_prompt) == 0);
  size_t summarized = 0, in_context = 0;
  for (size_t i = 1; i < n_messages; ++i) {
    msg = message_at(s, i);
    CHECK(msg.role == (i % 2 == 1 ? PEAK_ROLE_USER : PEAK_ROLE_ASSISTANT));
    CHECK(msg.text[msg.length] == '\0');
    if (msg.role == PEAK_ROLE_USER) CHECK(strcmp(msg.text, "Once upon a time there was a dog named Max.") == 0);
    if (msg.state == PEAK_MESSAGE_SUMMARIZED) {
      CHECK(in_context == 0);
      ++summarized;
    }
    if (msg.state == PEAK_MESSAGE_IN_CONTEXT) ++in_context;
  }
  CHECK(summarized > 0 && in_context == st.recent_messages);
  CHECK(message_at(s, n_messages - 1).state == PEAK_MESSAGE_IN_CONTEXT);

  const char* path = "capi_session_test.pkss";
  CHECK(peak_session_save(s, path, 1) == PEAK_OK);
  peak_session* t = NULL;
  CHECK(peak_session_create(m, &p, &t) == PEAK_OK);
  CHECK(peak_session_restore(t, path) == PEAK_OK);
  peak_session_stats st2;
  memset(&st2, 0, sizeof st2);
  st2.struct_size = sizeof st2;
  CHECK(peak_session_get_stats(t, &st2) == PEAK_OK && st2.turns == 20 && st2.recent_tokens == st.recent_tokens);
  /* Restored, every message reads back the same: role, state and text. */
  CHECK(peak_session_n_messages(t) == n_messages);
  for (size_t i = 0; i < n_messages; ++i) {
    const peak_session_message a = message_at(s, i), b = message_at(t, i);
    CHECK(a.role == b.role && a.state == b.state && a.length == b.length);
    CHECK(a.length == 0 || memcmp(a.text, b.text, a.length) == 0);
  }
  /* Into a session of a smaller window: re-fitted, its oldest Recent messages dropped. */
  peak_session_params narrow = p;
  narrow.recent_max = 40;
  peak_session* refit = NULL;
  CHECK(peak_session_create(m, &narrow, &refit) == PEAK_OK);
  CHECK(peak_session_restore(refit, path) == PEAK_OK);
  CHECK(peak_session_n_messages(refit) == n_messages);
  CHECK(peak_session_get_stats(refit, &st2) == PEAK_OK && st2.recent_tokens <= 40 + 32 && st2.recent_tokens < st.recent_tokens);
  peak_session_free(refit);
  /* Into a window session: a summary has no place there. */
  peak_session_params window = p;
  window.mode = PEAK_MEMORY_WINDOW;
  peak_session* w = NULL;
  CHECK(peak_session_create(m, &window, &w) == PEAK_OK);
  CHECK_ERROR(peak_session_restore(w, path), PEAK_ERR_UNSUPPORTED,
              "memory mode: it was saved in mode ssskv, this session's is window");
  CHECK(peak_session_n_messages(w) == 1);
  peak_session_free(w);
  CHECK_ERROR(peak_session_get_message(s, n_messages, &msg), PEAK_ERR_INVALID_ARGUMENT, "index 41 of a conversation of 41");
  CHECK_ERROR(peak_session_get_message(NULL, 0, &msg), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_get_message(s, 0, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  msg.struct_size = 8;
  CHECK_ERROR(peak_session_get_message(s, 0, &msg), PEAK_ERR_INVALID_ARGUMENT, "peak_session_message.struct_size");
  CHECK(peak_session_n_messages(NULL) == 0);
  CHECK_ERROR(peak_session_restore(t, PEAK_SHARED_DIR "/models/stories260K.gguf"), PEAK_ERR_FORMAT, "not a peak session");
  CHECK_ERROR(peak_session_restore(t, "/nonexistent/s.pkss"), PEAK_ERR_IO, "cannot open");
  CHECK(peak_session_reset(t) == PEAK_OK);
  CHECK(peak_session_get_stats(t, &st2) == PEAK_OK && st2.turns == 0 && st2.recent_tokens == 0);
  remove(path);

  /* Mode none: grows, then a clear error. */
  p.mode = PEAK_MEMORY_NONE;
  peak_session* n = NULL;
  CHECK(peak_session_create(m, &p, &n) == PEAK_OK);
  peak_status last = PEAK_OK;
  for (int i = 0; i < 30 && last == PEAK_OK; ++i) {
    last = peak_session_chat(n, "The cat sat on the mat.", 23, &gp, NULL);
  }
  CHECK(last == PEAK_ERR_CONTEXT_FULL);
  CHECK(strstr(peak_last_error(), "mode none never drops history") != NULL);

  /* Misuse. */
  peak_session* bad = (peak_session*)0x1;
  CHECK_ERROR(peak_session_create(NULL, NULL, &bad), PEAK_ERR_INVALID_ARGUMENT, "model is NULL");
  CHECK(bad == NULL);
  peak_session_params q = small_params();
  q.struct_size = 4;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  q = small_params();
  q.mode = (peak_memory_mode)7;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "mode is 7; it must be PEAK_MEMORY_SSSKV (0)");
  q = small_params();
  q.rebuild = (peak_rebuild_strategy)3;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "rebuild is 3; it must be");
  q = small_params();
  q.type_k = 12;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "not a KV cache type");
  q = small_params();
  q.chat_template = "chatml"; /* its markers are plain text to stories260K: a long framing */
  q.summary_max = 16;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT,
              "summary_max is 16; with this chat template it must be at least");
  q = small_params();
  q.sampler.top_k = SIZE_MAX;
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "sampler.top_k");
  check_count_refusals(m);
  check_kv_verification(m);
  q = small_params();
  q.chat_template = "klingon";
  CHECK_ERROR(peak_session_create(m, &q, &bad), PEAK_ERR_INVALID_ARGUMENT, "klingon");
  CHECK_ERROR(peak_session_chat(NULL, "x", 1, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_chat(s, NULL, 3, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_get_stats(NULL, &st), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  st.struct_size = 3;
  CHECK_ERROR(peak_session_get_stats(s, &st), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  CHECK_ERROR(peak_session_save(s, "/nonexistent-dir/x.pkss", 0), PEAK_ERR_IO,
              "cannot write '/nonexistent-dir/x.pkss'");
  CHECK_ERROR(peak_session_save(NULL, "x", 0), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_reset(NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_session_wait_summary(NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_session_free(NULL);

  check_editing(m);

  /* Summary jobs that fail (a summary context too small for the request) fail
     no turn; the session counts them and tells why. */
  peak_session_params failing = small_params();
  failing.summary_n_ctx = 64;
  failing.summary_max_new_tokens = 16;
  peak_session* f = NULL;
  CHECK(peak_session_create(m, &failing, &f) == PEAK_OK);
  CHECK(peak_session_get_summary_error(f, buf, sizeof buf, &len) == PEAK_OK && len == 0 && buf[0] == '\0');
  for (int i = 0; i < 20; ++i) {
    const char* line = "Sue and Max played until the sky was dark.";
    CHECK(peak_session_chat(f, line, strlen(line), &gp, &r) == PEAK_OK);
  }
  CHECK(peak_session_wait_summary(f) == PEAK_OK);
  st.struct_size = sizeof st;
  CHECK(peak_session_get_stats(f, &st) == PEAK_OK && st.summary_failures >= 1 && st.summaries == 0);
  CHECK(st.dropped_since_summary == st.dropped_total && st.dropped_total > 0);
  CHECK(peak_session_get_summary_error(f, buf, sizeof buf, &len) == PEAK_OK && strstr(buf, "summary_n_ctx is 64, too small") != NULL);
  CHECK_ERROR(peak_session_get_summary_error(f, buf, 1, &len), PEAK_ERR_BUFFER_TOO_SMALL, "summary error needs");
  CHECK_ERROR(peak_session_get_summary_error(NULL, buf, sizeof buf, &len), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_session_free(f);

  peak_session_free(n);
  peak_session_free(t);
  peak_session_free(s);
  peak_model_free(m);
  return capi_test_summary("capi_session_test");
}
