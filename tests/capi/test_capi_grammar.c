/* peak_grammar and the json_schema of peak_sampler_params, from C: verdicts on
   texts a reader of RFC 8259 and the GBNF Guide judges, the refusals and their
   messages, generation under a JSON Schema on the stories260K model, and
   preserved tokens. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

static peak_grammar_verdict verdict_of(const peak_grammar* g, const char* text) {
  peak_grammar_verdict v = (peak_grammar_verdict)-1;
  CHECK(peak_grammar_check(g, text, strlen(text), &v) == PEAK_OK);
  return v;
}

static void test_gbnf(void) {
  peak_grammar* g = NULL;
  CHECK(peak_grammar_create("answer ::= \"yes\" | \"no\"\n", "answer", &g) == PEAK_OK && g != NULL);
  CHECK(verdict_of(g, "yes") == PEAK_GRAMMAR_COMPLETE);
  CHECK(verdict_of(g, "n") == PEAK_GRAMMAR_PREFIX);
  CHECK(verdict_of(g, "") == PEAK_GRAMMAR_PREFIX);
  CHECK(verdict_of(g, "yes!") == PEAK_GRAMMAR_REJECTED);
  /* The length counts, not a NUL: "no" followed by a NUL byte is no string of it. */
  peak_grammar_verdict v = PEAK_GRAMMAR_COMPLETE;
  CHECK(peak_grammar_check(g, "no", 3, &v) == PEAK_OK && v == PEAK_GRAMMAR_REJECTED);
  CHECK(peak_grammar_check(g, NULL, 0, &v) == PEAK_OK && v == PEAK_GRAMMAR_PREFIX);
  CHECK_ERROR(peak_grammar_check(g, NULL, 1, &v), PEAK_ERR_INVALID_ARGUMENT, "text is NULL");
  CHECK_ERROR(peak_grammar_check(g, "x", 1, NULL), PEAK_ERR_INVALID_ARGUMENT, "verdict is NULL");
  CHECK_ERROR(peak_grammar_check(NULL, "x", 1, &v), PEAK_ERR_INVALID_ARGUMENT, "grammar is NULL");
  peak_grammar_free(g);
  peak_grammar_free(NULL);

  g = (peak_grammar*)&v;
  CHECK_ERROR(peak_grammar_create("root ::= \"a\" bogus\n", NULL, &g), PEAK_ERR_INVALID_ARGUMENT,
              "peak_grammar_create: line 1, column 14: undefined rule 'bogus'");
  CHECK(g == NULL);
  CHECK_ERROR(peak_grammar_create("answer ::= \"a\"\n", NULL, &g), PEAK_ERR_INVALID_ARGUMENT, "root");
  CHECK_ERROR(peak_grammar_create(NULL, NULL, &g), PEAK_ERR_INVALID_ARGUMENT, "gbnf is NULL");
  CHECK_ERROR(peak_grammar_create("root ::= \"a\"", NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "out is NULL");
}

static void test_json_schema(void) {
  peak_grammar* g = NULL;
  /* "{}": any JSON value; {"type": "object"}: OpenAI's json_object, any object. */
  CHECK(peak_grammar_from_json_schema("{}", &g) == PEAK_OK);
  CHECK(verdict_of(g, "[1,\"a\",null]") == PEAK_GRAMMAR_COMPLETE);
  CHECK(verdict_of(g, "tru") == PEAK_GRAMMAR_PREFIX);
  peak_grammar_free(g);
  CHECK(peak_grammar_from_json_schema("{\"type\": \"object\"}", &g) == PEAK_OK);
  CHECK(verdict_of(g, "{\"a\": [1, {\"b\": false}]}") == PEAK_GRAMMAR_COMPLETE);
  CHECK(verdict_of(g, "{\"a\": ") == PEAK_GRAMMAR_PREFIX);
  CHECK(verdict_of(g, "[]") == PEAK_GRAMMAR_REJECTED);
  CHECK(verdict_of(g, "\"{}\"") == PEAK_GRAMMAR_REJECTED);
  peak_grammar_free(g);

  CHECK_ERROR(peak_grammar_from_json_schema("{\"properties\": {\"a\": {\"type\": \"integr\"}}}", &g),
              PEAK_ERR_INVALID_ARGUMENT, "peak_grammar_from_json_schema: at /properties/a");
  CHECK(g == NULL);
  CHECK_ERROR(peak_grammar_from_json_schema("{\"type\": ", &g), PEAK_ERR_INVALID_ARGUMENT, "at the root");
  CHECK_ERROR(peak_grammar_from_json_schema(NULL, &g), PEAK_ERR_INVALID_ARGUMENT, "json_schema is NULL");
}

typedef struct {
  char text[256];
  size_t length;
} collected_text;

static int collect(const char* text, size_t length, void* user_data) {
  collected_text* c = (collected_text*)user_data;
  if (c->length + length < sizeof c->text) {
    memcpy(c->text + c->length, text, length);
    c->length += length;
  }
  return 1;
}

/* The sampler's json_schema: refusals, and a generation whose text the
   schema's grammar then calls complete. */
static void test_sampler_json_schema(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &m) == PEAK_OK);
  if (!m) return;
  const char* schema =
      "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}}, \"required\": [\"n\"]}";
  peak_sampler_params sp = peak_sampler_default_params();
  CHECK(sp.json_schema == NULL);
  peak_sampler* s = NULL;
  sp.json_schema = schema;
  sp.grammar = "root ::= \"a\"\n";
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "grammar and json_schema are both set");
  sp.grammar = NULL;
  sp.grammar_root = "root";
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "grammar_root and json_schema");
  sp.grammar_root = NULL;
  sp.json_schema = "{\"type\": \"object\", \"maxProperties\": 2}";
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_params.json_schema: at ");
  CHECK(s == NULL);

  sp.json_schema = schema;
  sp.seed = 7;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  peak_context* ctx = NULL;
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 128;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  collected_text text;
  memset(&text, 0, sizeof text);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 100;
  gp.on_text = collect;
  gp.user_data = &text;
  peak_generate_result result;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  CHECK(peak_generate(ctx, s, "Once upon a time", 16, &gp, &result) == PEAK_OK);
  peak_grammar* g = NULL;
  CHECK(peak_grammar_from_json_schema(schema, &g) == PEAK_OK);
  peak_grammar_verdict v = PEAK_GRAMMAR_REJECTED;
  CHECK(peak_grammar_check(g, text.text, text.length, &v) == PEAK_OK);
  /* Stopped at the grammar's end, the text is complete; at the token limit, a prefix. */
  CHECK(result.stop_reason == PEAK_STOP_EOG ? v == PEAK_GRAMMAR_COMPLETE : v == PEAK_GRAMMAR_PREFIX);
  CHECK(text.length > 0 && text.text[0] == '{');
  if (text.length == 0 || text.text[0] != '{') fprintf(stderr, "  generated: %.*s\n", (int)text.length, text.text);
  peak_grammar_free(g);
  peak_context_free(ctx);
  peak_sampler_free(s);
  peak_model_free(m);
}

/* Greedy text of stories260K after "Once upon a time", the sampler preserving
   `preserved` (n of them); the array is changed after the sampler is made,
   which must not matter. */
static struct text_buf greedy_text(peak_model* m, int32_t* preserved, size_t n) {
  struct text_buf text;
  memset(&text, 0, sizeof text);
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0.0f;
  sp.preserved_tokens = preserved;
  sp.n_preserved_tokens = n;
  peak_sampler* s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  for (size_t i = 0; i < n; ++i) preserved[i] = -1;
  peak_context* ctx = NULL;
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 512;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = 450;
  gp.on_text = collect_text;
  gp.user_data = &text;
  CHECK(peak_generate(ctx, s, "Once upon a time", 16, &gp, NULL) == PEAK_OK);
  peak_context_free(ctx);
  peak_sampler_free(s);
  return text;
}

/* `text` without any "<s>". */
static struct text_buf without_marker(const struct text_buf* text) {
  struct text_buf out;
  memset(&out, 0, sizeof out);
  for (size_t i = 0; i < text->length;) {
    if (strncmp(text->text + i, "<s>", 3) == 0) {
      i += 3;
      continue;
    }
    out.text[out.length++] = text->text[i++];
  }
  return out;
}

/* Preserved tokens: stories260K writes BOS (<s>, a control token) where a
   story ends, some hundreds of tokens in. Preserved, its text shows in the
   streamed text; else nothing: the same tokens either way (greedy). A grammar
   takes it only when preserved. */
static void test_sampler_preserved_tokens(void) {
  peak_model* m = NULL;
  CHECK(peak_model_load(PEAK_SHARED_DIR "/models/stories260K.gguf", NULL, &m) == PEAK_OK);
  if (!m) return;
  peak_sampler_params sp = peak_sampler_default_params();
  CHECK(sp.preserved_tokens == NULL && sp.n_preserved_tokens == 0);

  const struct text_buf plain = greedy_text(m, NULL, 0);
  int32_t bos[1] = {1};
  const struct text_buf preserved = greedy_text(m, bos, 1);
  CHECK(strstr(plain.text, "<s>") == NULL);
  CHECK(strstr(preserved.text, "<s>") != NULL);
  const struct text_buf stripped = without_marker(&preserved);
  CHECK(stripped.length == plain.length && memcmp(stripped.text, plain.text, plain.length) == 0);

  /* Refusals, each naming what is wrong. */
  peak_sampler* s = NULL;
  const int32_t eos = 2, text_token = 300, outside = 512, twice[2] = {1, 1}, unsorted[2] = {1, 0};
  sp.n_preserved_tokens = 1;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT,
              "peak_sampler_params.preserved_tokens is NULL with n_preserved_tokens 1");
  sp.preserved_tokens = &eos;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "preserved token 2 ends the generation");
  sp.preserved_tokens = &text_token;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "preserved token 300 is a text token");
  sp.preserved_tokens = &outside;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "outside the vocabulary of 512");
  sp.preserved_tokens = twice;
  sp.n_preserved_tokens = 2;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "preserved token 1 is listed twice");
  sp.n_preserved_tokens = (size_t)-1;
  CHECK_ERROR(peak_sampler_create(m, &sp, &s), PEAK_ERR_INVALID_ARGUMENT, "n_preserved_tokens");
  CHECK(s == NULL);
  sp.preserved_tokens = unsorted; /* any order: <s> and <unk> */
  sp.n_preserved_tokens = 2;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  peak_sampler_free(s);
  /* The first version of the struct ends at json_schema: what follows is not read. */
  sp.struct_size = offsetof(peak_sampler_params, preserved_tokens);
  sp.n_preserved_tokens = (size_t)-1;
  s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  peak_sampler_free(s);

  /* Under a grammar that spells <s>: the preserved token reads as its text. */
  sp = peak_sampler_default_params();
  sp.grammar = "root ::= \"<s>\" [a-z]+\n";
  s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  CHECK_ERROR(peak_sampler_accept(s, 1), PEAK_ERR_INVALID_ARGUMENT, "a control token is allowed only when preserved");
  peak_sampler_free(s);
  sp.preserved_tokens = bos;
  bos[0] = 1;
  sp.n_preserved_tokens = 1;
  s = NULL;
  CHECK(peak_sampler_create(m, &sp, &s) == PEAK_OK);
  CHECK(peak_sampler_accept(s, 1) == PEAK_OK);
  CHECK_ERROR(peak_sampler_accept(s, 1), PEAK_ERR_INVALID_ARGUMENT, "cannot continue the grammar");
  peak_sampler_free(s);
  peak_model_free(m);
}

int main(void) {
  test_gbnf();
  test_json_schema();
  test_sampler_json_schema();
  test_sampler_preserved_tokens();
  return capi_test_summary("test_capi_grammar");
}
