/* peak_set_log_callback and peak_set_log_level: a model load's message at the
   info level reaches the callback with its level and user_data (and nothing
   below the minimum level does); without a callback, messages go to stderr as
   "peak: <message>"; a callback may call both functions itself. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";

typedef struct {
  int calls;
  peak_log_level last_level;
  char last[1024];
  int unterminated_or_newline;
} received;

static void collect(peak_log_level level, const char* message, void* user_data) {
  received* r = (received*)user_data;
  ++r->calls;
  r->last_level = level;
  const size_t n = strlen(message);
  if (n > 0 && message[n - 1] == '\n') ++r->unterminated_or_newline;
  snprintf(r->last, sizeof r->last, "%s", message);
}

static void load_and_free(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(kStories, NULL, &m) == PEAK_OK);
  peak_model_free(m);
}

static void test_callback_and_levels(void) {
  received r;
  memset(&r, 0, sizeof r);
  peak_set_log_callback(collect, &r);
  load_and_free(); /* its message is info: below the default minimum, warn */
  CHECK(r.calls == 0);
  CHECK(peak_set_log_level(PEAK_LOG_INFO) == PEAK_OK);
  load_and_free();
  CHECK(r.calls == 1);
  CHECK(r.last_level == PEAK_LOG_INFO);
  CHECK(strstr(r.last, "stories260K.gguf: llama, ") != NULL);
  CHECK(strstr(r.last, " bytes mapped") != NULL);
  CHECK(strncmp(r.last, "peak: ", 6) != 0 && r.unterminated_or_newline == 0);
  if (strstr(r.last, "stories260K.gguf: llama, ") == NULL) fprintf(stderr, "  message was: %s\n", r.last);
  CHECK(peak_set_log_level(PEAK_LOG_ERROR) == PEAK_OK);
  load_and_free();
  CHECK(r.calls == 1);
  CHECK_ERROR(peak_set_log_level((peak_log_level)4), PEAK_ERR_INVALID_ARGUMENT, "level 4 is not a peak_log_level");
  CHECK_ERROR(peak_set_log_level((peak_log_level)-1), PEAK_ERR_INVALID_ARGUMENT, "level -1");
  peak_set_log_callback(NULL, NULL);
  CHECK(peak_set_log_level(PEAK_LOG_WARN) == PEAK_OK);
}

/* A callback that replaces itself and lowers the level: no lock is held. */
static int reentrant_calls = 0;
static void reentrant(peak_log_level level, const char* message, void* user_data) {
  (void)level;
  (void)message;
  (void)user_data;
  ++reentrant_calls;
  peak_set_log_level(PEAK_LOG_WARN);
  peak_set_log_callback(NULL, NULL);
}

static void test_callback_may_call_back(void) {
  peak_set_log_callback(reentrant, NULL);
  CHECK(peak_set_log_level(PEAK_LOG_DEBUG) == PEAK_OK);
  load_and_free();
  CHECK(reentrant_calls == 1);
}

/* Without a callback: stderr, "peak: " and a newline. */
static void test_default_is_stderr(void) {
  const char* path = "capi_log_stderr.txt";
  fflush(stderr);
  const int saved = dup(2);
  const int file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(saved >= 0 && file >= 0);
  dup2(file, 2);
  close(file);
  CHECK(peak_set_log_level(PEAK_LOG_INFO) == PEAK_OK);
  load_and_free();
  CHECK(peak_set_log_level(PEAK_LOG_WARN) == PEAK_OK);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char text[1024] = {0};
  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  if (f) {
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
  }
  CHECK(strncmp(text, "peak: ", 6) == 0);
  CHECK(strstr(text, "stories260K.gguf: llama, ") != NULL);
  CHECK(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
  remove(path);
}

int main(void) {
  /* The kernel path is chosen (and a PEAK_ISA request warned about) first. */
  CHECK(strlen(peak_system_info()) > 0);
  test_callback_and_levels();
  test_callback_may_call_back();
  test_default_is_stderr();
  return capi_test_summary("test_capi_log");
}
