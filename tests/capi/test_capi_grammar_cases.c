/* Every case of tests/data/gbnf_cases.txt and json_schema_cases.txt (written
   from the GBNF Guide, RFC 8259 and the JSON Schema specification) through
   peak_grammar: each verdict as written, each broken grammar refused at its
   line and column. The cases come as one list that
   tests/sampling/write_grammar_case_list.cpp writes (format there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

/* The whole file, NUL-terminated (NULL if it cannot be read); *size its bytes. */
static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t capacity = 4096, n = 0;
  char* data = malloc(capacity);
  for (size_t got; data && (got = fread(data + n, 1, capacity - n - 1, f)) > 0;) {
    n += got;
    if (capacity - n - 1 == 0) {
      char* bigger = realloc(data, capacity *= 2);
      if (!bigger) free(data);
      data = bigger;
    }
  }
  fclose(f);
  if (data) data[n] = '\0';
  if (size) *size = n;
  return data;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Reads the list's escapes (\\ and \xHH) of `text` in place; returns its length. */
static size_t unescape(char* text) {
  size_t out = 0;
  for (size_t i = 0; text[i]; ++i) {
    if (text[i] == '\\' && text[i + 1] == '\\') {
      text[out++] = '\\';
      ++i;
    } else if (text[i] == '\\' && text[i + 1] == 'x' && hex_value(text[i + 2]) >= 0 && hex_value(text[i + 3]) >= 0) {
      text[out++] = (char)(hex_value(text[i + 2]) * 16 + hex_value(text[i + 3]));
      i += 3;
    } else {
      text[out++] = text[i];
    }
  }
  return out;
}

/* The next space-separated word of *rest, NUL-terminated in place. */
static char* next_word(char** rest) {
  char* word = *rest;
  char* space = strchr(word, ' ');
  if (space) {
    *space = '\0';
    *rest = space + 1;
  } else {
    *rest = word + strlen(word);
  }
  return word;
}

static const char* verdict_name(peak_grammar_verdict v) {
  return v == PEAK_GRAMMAR_COMPLETE ? "complete" : v == PEAK_GRAMMAR_PREFIX ? "prefix" : "rejected";
}

/* A refused grammar: the message names the line and column and holds the words. */
static void check_error(const char* gbnf, const char* root, char* rest, int line_number) {
  char* where = next_word(&rest);
  char expected[64];
  snprintf(expected, sizeof expected, "line %.*s, column %s", (int)strcspn(where, ":"), where,
           strchr(where, ':') ? strchr(where, ':') + 1 : "?");
  peak_grammar* grammar = NULL;
  const peak_status status = peak_grammar_create(gbnf, root, &grammar);
  const int ok = status == PEAK_ERR_INVALID_ARGUMENT && grammar == NULL && strstr(peak_last_error(), expected) &&
                 strstr(peak_last_error(), rest);
  CHECK(ok);
  if (!ok)
    fprintf(stderr, "  case %d: wanted '%s' and '%s', got: %s\n", line_number, expected, rest, peak_last_error());
  peak_grammar_free(grammar);
}

static void check_verdict(const peak_grammar* grammar, const char* expected, char* text, int line_number) {
  const size_t length = unescape(text);
  peak_grammar_verdict verdict = PEAK_GRAMMAR_REJECTED;
  const peak_status status = peak_grammar_check(grammar, text, length, &verdict);
  const int ok =
      status == PEAK_OK && (strcmp(expected, "incomplete") == 0 ? verdict != PEAK_GRAMMAR_COMPLETE
                                                                : strcmp(expected, verdict_name(verdict)) == 0);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "  case %d: expected %s, got %s (%s)\n", line_number, expected,
            status == PEAK_OK ? verdict_name(verdict) : peak_status_name(status), peak_last_error());
  }
}

/* The grammar or schema file `name` of the list's directory, NUL-terminated. */
static char* read_case_file(const char* name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", PEAK_GRAMMAR_CASE_DIR, name);
  char* source = read_file(path, NULL);
  CHECK(source != NULL);
  if (!source) fprintf(stderr, "  cannot read %s\n", path);
  return source;
}

/* Compiles the grammar or schema (.json) file `name`; NULL if it fails. */
static peak_grammar* compile(const char* name, const char* root) {
  char* source = read_case_file(name);
  peak_grammar* grammar = NULL;
  if (source) {
    const peak_status status = strstr(name, ".json") ? peak_grammar_from_json_schema(source, &grammar)
                                                     : peak_grammar_create(source, root, &grammar);
    CHECK(status == PEAK_OK);
    if (status != PEAK_OK) fprintf(stderr, "  %s: %s\n", name, peak_last_error());
  }
  free(source);
  return grammar;
}

/* One line of the list. Consecutive lines of one file share its grammar
   (*current, compiled from current_name). */
static void check_case(char* line, int line_number, peak_grammar** current, char current_name[64]) {
  char* rest = line;
  const char* name = next_word(&rest);
  const char* root = next_word(&rest);
  const char* expected = next_word(&rest);
  if (strcmp(expected, "error") == 0) {
    char* source = read_case_file(name);
    if (source) check_error(source, root, rest, line_number);
    free(source);
    return;
  }
  if (strcmp(name, current_name) != 0) {
    peak_grammar_free(*current);
    *current = compile(name, root);
    snprintf(current_name, 64, "%s", name);
  }
  if (*current) check_verdict(*current, expected, rest, line_number);
}

int main(void) {
  size_t size = 0;
  char* list = read_file(PEAK_GRAMMAR_CASE_DIR "/grammar_cases.txt", &size);
  CHECK(list != NULL);
  if (!list) return capi_test_summary("test_capi_grammar_cases");
  peak_grammar* current = NULL;
  char current_name[64] = "";
  int cases = 0;
  for (char* line = list; line < list + size;) {
    char* end = strchr(line, '\n');
    if (end) *end = '\0';
    check_case(line, ++cases, &current, current_name);
    line = end ? end + 1 : list + size;
  }
  peak_grammar_free(current);
  free(list);
  CHECK(cases >= 200);
  printf("%d cases\n", cases);
  return capi_test_summary("test_capi_grammar_cases");
}
