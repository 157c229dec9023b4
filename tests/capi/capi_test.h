/* A minimal test harness for C: CHECK records a failure and continues; the
   summary line is printed in the "N passed, N failed" form. */
#ifndef PEAK_CAPI_TEST_H
#define PEAK_CAPI_TEST_H

#include <stdio.h>
#include <string.h>

static int capi_checks_passed = 0;
static int capi_checks_failed = 0;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (cond) {                                                           \
      ++capi_checks_passed;                                               \
    } else {                                                              \
      ++capi_checks_failed;                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                     \
  } while (0)

/* A failing call must carry a non-empty message that contains `fragment`. */
#define CHECK_ERROR(status_expr, expected_status, fragment)               \
  do {                                                                    \
    peak_status s_ = (status_expr);                                       \
    CHECK(s_ == (expected_status));                                       \
    CHECK(strstr(peak_last_error(), (fragment)) != NULL);                 \
    if (strstr(peak_last_error(), (fragment)) == NULL)                    \
      fprintf(stderr, "  message was: %s\n", peak_last_error());         \
  } while (0)

/* Appends streamed text to a buffer (struct text_buf): an on_text callback. */
struct text_buf {
  char text[4096];
  size_t length;
};

static inline int collect_text(const char* text, size_t length, void* user) {
  struct text_buf* b = (struct text_buf*)user;
  if (b->length + length < sizeof b->text) {
    memcpy(b->text + b->length, text, length);
    b->length += length;
    b->text[b->length] = '\0';
  }
  return 1;
}

/* Reads a whole text file into buf with a NUL after it; 0 when it cannot be read
   or does not fit. */
static inline int read_fixture_text(const char* path, char* buf, size_t capacity) {
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  const size_t n = fread(buf, 1, capacity - 1, f);
  const int whole = feof(f) != 0 || fgetc(f) == EOF;
  fclose(f);
  buf[n] = '\0';
  return whole;
}

static int capi_test_summary(const char* name) {
  printf("%s: %d passed, %d failed\n", name, capi_checks_passed, capi_checks_failed);
  return capi_checks_failed == 0 ? 0 : 1;
}

#endif
