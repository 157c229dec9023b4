/* peak_model_load_vocab from C: llama.cpp's vocabulary-only GGUF files (no
   tensors) open as tokenizers and give llama.cpp's ids for every test string
   beside them (add_special = 0, parse_special = 0); a model opened this way
   tokenizes as the loaded model does; everything that needs weights refuses
   the handle with a message; bad paths and arguments give a status. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_test.h"
#include "peak/peak.h"

#define VOCAB_DIR PEAK_SHARED_DIR "/fixtures/vocab/"

static char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)n + 1);
  CHECK(data != NULL && fread(data, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  data[n] = '\0';
  *size = (size_t)n;
  return data;
}

/* Every string of NAME.gguf.inp (separated by "\n__ggml_vocab_test__\n") must
   tokenize to the ids on the same line of NAME.gguf.out. Returns the cases run. */
static int check_fixture(const char* name) {
  char path[512];
  snprintf(path, sizeof path, VOCAB_DIR "ggml-vocab-%s.gguf", name);
  peak_model* vocab = NULL;
  CHECK(peak_model_load_vocab(path, &vocab) == PEAK_OK);
  if (!vocab) {
    fprintf(stderr, "  %s: %s\n", name, peak_last_error());
    return 0;
  }
  size_t inp_size = 0, out_size = 0;
  char inp_path[600], out_path[600];
  snprintf(inp_path, sizeof inp_path, "%s.inp", path);
  snprintf(out_path, sizeof out_path, "%s.out", path);
  char* inp = read_all(inp_path, &inp_size);
  char* out = read_all(out_path, &out_size);
  int cases = 0;
  if (inp && out) {
    const char* separator = "\n__ggml_vocab_test__\n";
    char* text = inp;
    char* line = out;
    int32_t ids[1024];
    while (text < inp + inp_size) {
      char* end = strstr(text, separator);
      if (!end) end = inp + inp_size;
      char* line_end = strchr(line, '\n');
      CHECK(line_end != NULL);
      if (!line_end) break;
      *line_end = '\0';
      size_t n = 0;
      CHECK(peak_tokenize(vocab, text, (size_t)(end - text), 0, 0, ids, 1024, &n) == PEAK_OK);
      /* The expected ids, one by one. */
      size_t k = 0;
      int same = 1;
      for (char* p = line; *p;) {
        char* next = NULL;
        const long id = strtol(p, &next, 10);
        if (next == p) break;
        same = same && k < n && ids[k] == id;
        ++k;
        p = next;
      }
      same = same && k == n;
      CHECK(same);
      if (!same) fprintf(stderr, "  %s case %d: '%.*s'\n", name, cases, (int)(end - text), text);
      ++cases;
      text = end + strlen(separator);
      line = line_end + 1;
    }
  }
  free(inp);
  free(out);
  peak_model_free(vocab);
  return cases;
}

static void test_fixtures(void) {
  const char* names[] = {"llama-spm", "llama-bpe", "gpt-4o", "qwen3", "phi-3", "bert-bge", "deepseek-coder"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) CHECK(check_fixture(names[i]) > 10);
}

/* A vocabulary-only handle: info, special tokens, and refusals. */
static void test_vocab_handle(void) {
  peak_model* vocab = NULL;
  CHECK(peak_model_load_vocab(VOCAB_DIR "ggml-vocab-qwen3.gguf", &vocab) == PEAK_OK);
  if (!vocab) return;
  peak_model_info info;
  memset(&info, 0xff, sizeof info);
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(vocab, &info) == PEAK_OK);
  CHECK(info.n_vocab == 151936 || info.n_vocab == 151669);
  CHECK(info.n_params == 0 && info.weight_bytes == 0 && info.n_layer == 0 && info.n_ctx_train == 0);
  CHECK(info.architecture != NULL && info.name != NULL && strcmp(info.chat_template, "") == 0);

  /* Control tokens: parsed when asked, spelled out as text otherwise. */
  int32_t ids[64];
  size_t n = 0;
  const char* text = "<|im_end|>";
  CHECK(peak_tokenize(vocab, text, strlen(text), 0, 1, ids, 64, &n) == PEAK_OK);
  CHECK(n == 1);
  CHECK(peak_tokenize(vocab, text, strlen(text), 0, 0, ids, 64, &n) == PEAK_OK);
  CHECK(n > 1);
  char piece[64];
  size_t length = 0;
  CHECK(peak_token_to_piece(vocab, 151645, 1, piece, sizeof piece, &length) == PEAK_OK);
  CHECK(length == strlen("<|im_end|>") && strcmp(piece, "<|im_end|>") == 0);
  CHECK(peak_token_is_eog(vocab, 151645) == 1);

  peak_context* ctx = NULL;
  CHECK_ERROR(peak_context_create(vocab, NULL, &ctx), PEAK_ERR_INVALID_ARGUMENT, "peak_model_load_vocab");
  CHECK(ctx == NULL);
  size_t bytes = 1;
  CHECK_ERROR(peak_context_memory_needed(vocab, NULL, &bytes), PEAK_ERR_INVALID_ARGUMENT, "without weights");
  CHECK(bytes == 0);
  peak_sampler* sampler = NULL;
  CHECK_ERROR(peak_sampler_create(vocab, NULL, &sampler), PEAK_ERR_INVALID_ARGUMENT, "peak_sampler_create");
  peak_session* session = NULL;
  CHECK_ERROR(peak_session_create(vocab, NULL, &session), PEAK_ERR_INVALID_ARGUMENT, "peak_session_create");
  peak_chat_message message = {"user", "hi"};
  char buf[256];
  CHECK_ERROR(peak_chat_apply_template(vocab, NULL, &message, 1, buf, sizeof buf, &length),
              PEAK_ERR_INVALID_ARGUMENT, "peak_chat_apply_template");
  peak_model_free(vocab);
}

/* A whole model opened as a tokenizer gives what the loaded model gives. */
static void test_model_as_vocab(void) {
  const char* path = PEAK_SHARED_DIR "/models/stories260K.gguf";
  peak_model* vocab = NULL;
  peak_model* model = NULL;
  CHECK(peak_model_load_vocab(path, &vocab) == PEAK_OK);
  CHECK(peak_model_load(path, NULL, &model) == PEAK_OK);
  if (!vocab || !model) return;
  const char* text = "Once upon a time, there was a little girl named Lily.";
  int32_t a[64], b[64];
  size_t na = 0, nb = 0;
  CHECK(peak_tokenize(vocab, text, strlen(text), 1, 1, a, 64, &na) == PEAK_OK);
  CHECK(peak_tokenize(model, text, strlen(text), 1, 1, b, 64, &nb) == PEAK_OK);
  CHECK(na == nb && na > 10 && memcmp(a, b, na * sizeof a[0]) == 0);
  peak_model_info vi, mi;
  vi.struct_size = mi.struct_size = sizeof vi;
  CHECK(peak_model_get_info(vocab, &vi) == PEAK_OK && peak_model_get_info(model, &mi) == PEAK_OK);
  CHECK(vi.n_vocab == mi.n_vocab && vi.bos_token == mi.bos_token && vi.eos_token == mi.eos_token);
  CHECK(strcmp(vi.architecture, "llama") == 0);
  peak_model_free(vocab);
  peak_model_free(model);
}

static void test_errors(void) {
  peak_model* vocab = (peak_model*)&vocab; /* must be reset to NULL on failure */
  CHECK_ERROR(peak_model_load_vocab("/nonexistent/v.gguf", &vocab), PEAK_ERR_IO, "/nonexistent/v.gguf");
  CHECK(vocab == NULL);
  CHECK_ERROR(peak_model_load_vocab(PEAK_SHARED_DIR "/models/SOURCES.md", &vocab), PEAK_ERR_FORMAT, "not a GGUF file");
  CHECK(vocab == NULL);
  CHECK_ERROR(peak_model_load_vocab(NULL, &vocab), PEAK_ERR_INVALID_ARGUMENT, "path");
  CHECK_ERROR(peak_model_load_vocab(VOCAB_DIR "ggml-vocab-qwen3.gguf", NULL), PEAK_ERR_INVALID_ARGUMENT, "out");
}

int main(void) {
  test_fixtures();
  test_vocab_handle();
  test_model_as_vocab();
  test_errors();
  return capi_test_summary("test_capi_vocab");
}
