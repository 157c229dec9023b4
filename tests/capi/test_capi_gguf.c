/* Drives every peak_gguf_* function of the C API from C, including misuse:
   NULL handles and pointers, bad paths, out-of-range indices, wrong types and
   a wrong struct_size must give a status and a message, never a crash. */
#include <stdint.h>
#include <stdlib.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* stories_path(void) { return PEAK_SHARED_DIR "/models/stories260K.gguf"; }

/* A lookup function's failures: an absent name is PEAK_ERR_NOT_FOUND naming it
   and leaves *index alone; NULL arguments are refused. */
typedef peak_status (*lookup_fn)(const peak_gguf*, const char*, size_t*);
static void check_lookup_failures(const peak_gguf* g, lookup_fn lookup, const char* present, const char* absent,
                                  const char* absent_message, const char* null_name_message) {
  size_t index = 7;
  CHECK_ERROR(lookup(g, absent, &index), PEAK_ERR_NOT_FOUND, absent_message);
  CHECK(index == 7);
  CHECK_ERROR(lookup(g, NULL, &index), PEAK_ERR_INVALID_ARGUMENT, null_name_message);
  CHECK_ERROR(lookup(g, present, NULL), PEAK_ERR_INVALID_ARGUMENT, "index is NULL");
  CHECK_ERROR(lookup(NULL, present, &index), PEAK_ERR_INVALID_ARGUMENT, "gguf is NULL");
}

/* The index of a key the file must have. */
static size_t key_index(const peak_gguf* g, const char* key) {
  size_t index = (size_t)-1;
  CHECK(peak_gguf_lookup_key(g, key, &index) == PEAK_OK);
  return index;
}

static void test_open_and_header(void) {
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(stories_path(), NULL, &g) == PEAK_OK);
  CHECK(g != NULL);
  CHECK(peak_gguf_version(g) == 3);
  CHECK(peak_gguf_alignment(g) == 32);
  CHECK(peak_gguf_data_offset(g) == 14176);
  CHECK(peak_gguf_file_size(g) == 1185376);
  CHECK(peak_gguf_n_kv(g) == 19);
  CHECK(peak_gguf_n_tensors(g) == 48);
  peak_gguf_free(g);

  peak_gguf_params params = peak_gguf_default_params();
  CHECK(params.struct_size == sizeof(peak_gguf_params));
  CHECK(params.use_mmap == 1);
  params.use_mmap = 0;
  CHECK(peak_gguf_open(stories_path(), &params, &g) == PEAK_OK);
  CHECK(peak_gguf_n_tensors(g) == 48);
  peak_gguf_free(g);
}

static void test_metadata(void) {
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(stories_path(), NULL, &g) == PEAK_OK);

  size_t arch = key_index(g, "general.architecture");
  CHECK(strcmp(peak_gguf_key(g, arch), "general.architecture") == 0);
  CHECK(peak_gguf_kv_type(g, arch) == PEAK_GGUF_STRING);
  CHECK(strcmp(peak_gguf_type_name(PEAK_GGUF_STRING), "string") == 0);
  CHECK(strcmp(peak_gguf_type_name((peak_gguf_type)99), "unknown") == 0);
  const char* s = NULL;
  size_t len = 0;
  CHECK(peak_gguf_get_string(g, arch, &s, &len) == PEAK_OK);
  CHECK(len == 5 && memcmp(s, "llama", 5) == 0);
  CHECK(s[len] == '\0');

  size_t blocks = key_index(g, "llama.block_count");
  uint64_t u = 0;
  int64_t i = 0;
  CHECK(peak_gguf_get_uint(g, blocks, &u) == PEAK_OK && u == 5);
  CHECK(peak_gguf_get_int(g, blocks, &i) == PEAK_OK && i == 5);

  size_t eps = key_index(g, "llama.attention.layer_norm_rms_epsilon");
  double d = 0;
  CHECK(peak_gguf_get_float(g, eps, &d) == PEAK_OK && d > 0.9e-5 && d < 1.1e-5);

  /* Asking for the wrong type is an error, not garbage. */
  CHECK_ERROR(peak_gguf_get_uint(g, arch, &u), PEAK_ERR_TYPE_MISMATCH, "holds string");
  CHECK_ERROR(peak_gguf_get_string(g, blocks, &s, &len), PEAK_ERR_TYPE_MISMATCH, "holds uint32");
  CHECK_ERROR(peak_gguf_get_float(g, blocks, &d), PEAK_ERR_TYPE_MISMATCH, "not a float");
  int b = 0;
  CHECK_ERROR(peak_gguf_get_bool(g, blocks, &b), PEAK_ERR_TYPE_MISMATCH, "not bool");

  size_t tokens = key_index(g, "tokenizer.ggml.tokens");
  peak_gguf_type elem = PEAK_GGUF_UINT8;
  size_t count = 0;
  CHECK(peak_gguf_kv_type(g, tokens) == PEAK_GGUF_ARRAY);
  CHECK(peak_gguf_get_array_info(g, tokens, &elem, &count) == PEAK_OK);
  CHECK(elem == PEAK_GGUF_STRING && count == 512);
  CHECK(peak_gguf_get_array_string(g, tokens, 1, &s, &len) == PEAK_OK);
  CHECK(len == 3 && memcmp(s, "<s>", 3) == 0);
  CHECK(s[len] == '\0');
  CHECK_ERROR(peak_gguf_get_array_string(g, tokens, 512, &s, &len), PEAK_ERR_INVALID_ARGUMENT, "past the end");
  CHECK_ERROR(peak_gguf_get_array_uint(g, tokens, 0, &u), PEAK_ERR_TYPE_MISMATCH, "not integers");
  CHECK_ERROR(peak_gguf_get_array_info(g, arch, &elem, &count), PEAK_ERR_TYPE_MISMATCH, "not array");

  size_t types = key_index(g, "tokenizer.ggml.token_type");
  CHECK(peak_gguf_get_array_int(g, types, 0, &i) == PEAK_OK && i == 2);
  CHECK(peak_gguf_get_array_uint(g, types, 3, &u) == PEAK_OK && u == 6);
  size_t scores = key_index(g, "tokenizer.ggml.scores");
  CHECK(peak_gguf_get_array_float(g, scores, 0, &d) == PEAK_OK);
  CHECK_ERROR(peak_gguf_get_array_bool(g, scores, 0, &b), PEAK_ERR_TYPE_MISMATCH, "not of bool");

  check_lookup_failures(g, peak_gguf_lookup_key, "general.architecture", "no.such.key", "no key 'no.such.key'",
                        "key is NULL");
  CHECK(peak_gguf_key(g, 19) == NULL);
  CHECK(strstr(peak_last_error(), "out of range") != NULL);
  CHECK(peak_gguf_key(g, -1) == NULL);
  CHECK_ERROR(peak_gguf_get_uint(g, 1000, &u), PEAK_ERR_INVALID_ARGUMENT, "out of range");
  CHECK(peak_gguf_kv_type(g, 1000) == PEAK_GGUF_TYPE_INVALID);
  CHECK(strstr(peak_last_error(), "out of range") != NULL);
  CHECK(strcmp(peak_gguf_type_name(PEAK_GGUF_TYPE_INVALID), "unknown") == 0);
  CHECK_ERROR(peak_gguf_get_uint(g, blocks, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_gguf_get_string(g, arch, &s, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_gguf_get_array_info(g, tokens, &elem, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_gguf_get_array_string(g, tokens, 0, &s, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_gguf_free(g);
}

static void test_tensors(void) {
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(stories_path(), NULL, &g) == PEAK_OK);
  size_t k = (size_t)-1;
  CHECK(peak_gguf_lookup_tensor(g, "blk.0.attn_k.weight", &k) == PEAK_OK);
  peak_gguf_tensor_info t;
  CHECK(peak_gguf_get_tensor(g, k, &t) == PEAK_OK);
  CHECK(strcmp(t.name, "blk.0.attn_k.weight") == 0);
  CHECK(t.type == 0 && strcmp(peak_type_name(t.type), "F32") == 0);
  CHECK(t.n_dims == 2 && t.ne[0] == 64 && t.ne[1] == 32 && t.ne[2] == 1 && t.ne[3] == 1);
  CHECK(t.n_bytes == 64 * 32 * 4);
  CHECK(t.offset % 32 == 0);
  check_lookup_failures(g, peak_gguf_lookup_tensor, "output.weight", "missing", "no tensor 'missing'", "name is NULL");
  size_t index = 0;
  /* The file's third and last tensors (in the order the file lists them). */
  CHECK(peak_gguf_lookup_tensor(g, "output.weight", &index) == PEAK_OK && index == 2);
  CHECK(peak_gguf_lookup_tensor(g, "blk.4.ffn_norm.weight", &index) == PEAK_OK && index == 47);
  CHECK_ERROR(peak_gguf_get_tensor(g, 48, &t), PEAK_ERR_INVALID_ARGUMENT, "out of range");
  CHECK_ERROR(peak_gguf_get_tensor(g, 0, NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK(strcmp(peak_type_name(12), "Q4_K") == 0);
  CHECK(strcmp(peak_type_name(4000), "unknown") == 0);
  peak_gguf_free(g);
}

/* String values come NUL-terminated. The expected strings are SentencePiece's
   layout of a llama2.c vocabulary: <unk>, <s>, </s>, then the 256 byte-fallback
   pieces <0x00> ... <0xFF>. */
static void test_strings_are_terminated(void) {
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(stories_path(), NULL, &g) == PEAK_OK);
  const size_t tokens = key_index(g, "tokenizer.ggml.tokens");
  size_t mismatched = 0, unterminated = 0;
  for (size_t i = 0; i < 512; ++i) {
    const char* s = "";
    size_t len = 0;
    CHECK(peak_gguf_get_array_string(g, tokens, i, &s, &len) == PEAK_OK);
    if (s[len] != '\0' || strlen(s) != len) ++unterminated;
    char expected[16] = "";
    if (i < 3) strcpy(expected, i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
    if (i >= 3 && i < 259) snprintf(expected, sizeof expected, "<0x%02X>", (unsigned)(i - 3));
    if (expected[0] && strcmp(s, expected) != 0) ++mismatched;
  }
  CHECK(unterminated == 0);
  CHECK(mismatched == 0);
  peak_gguf_free(g);
}

/* The same far into the largest arrays: Qwen3's vocabulary (151,936 tokens, its
   special tokens at 151643..151645 as Qwen documents them, the padding tokens
   llama.cpp's converter names [PAD<id>] last), its BPE merges, and its chat
   template, a 4116-byte string value. Read from the file's bytes (use_mmap 0) as
   well as from a mapping. */
static void test_large_vocabulary_strings(int use_mmap) {
  peak_gguf_params params = peak_gguf_default_params();
  params.use_mmap = use_mmap;
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(PEAK_SHARED_DIR "/fixtures/vocab/ggml-vocab-qwen3.gguf", &params, &g) == PEAK_OK);
  if (!g) return;
  const char* s = NULL;
  size_t len = 0;
  const size_t tokens = key_index(g, "tokenizer.ggml.tokens");
  const size_t merges = key_index(g, "tokenizer.ggml.merges");
  size_t count = 0, unterminated = 0;
  peak_gguf_type elem = PEAK_GGUF_UINT8;
  CHECK(peak_gguf_get_array_info(g, tokens, &elem, &count) == PEAK_OK && count == 151936);
  for (size_t i = 0; i < count; ++i) {
    if (peak_gguf_get_array_string(g, tokens, i, &s, &len) != PEAK_OK || s[len] != '\0') ++unterminated;
  }
  CHECK(peak_gguf_get_array_info(g, merges, &elem, &count) == PEAK_OK && count == 151387);
  for (size_t i = 0; i < count; ++i) {
    if (peak_gguf_get_array_string(g, merges, i, &s, &len) != PEAK_OK || s[len] != '\0') ++unterminated;
  }
  CHECK(unterminated == 0);
  const struct {
    size_t key, index;
    const char* text;
  } expected[] = {
      {tokens, 0, "!"},
      {tokens, 151643, "<|endoftext|>"},
      {tokens, 151644, "<|im_start|>"},
      {tokens, 151645, "<|im_end|>"},
      {tokens, 151935, "[PAD151935]"},
      {merges, 0, "\xc4\xa0 \xc4\xa0"}, /* "Ġ Ġ": two spaces of GPT-2's byte alphabet */
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
    CHECK(peak_gguf_get_array_string(g, expected[i].key, expected[i].index, &s, &len) == PEAK_OK);
    CHECK(len == strlen(expected[i].text) && strcmp(s, expected[i].text) == 0);
  }
  CHECK(peak_gguf_get_string(g, key_index(g, "tokenizer.chat_template"), &s, &len) == PEAK_OK);
  CHECK(len == 4116 && strlen(s) == len && strncmp(s, "{%- if tools %}", 15) == 0);
  peak_gguf_free(g);
}

static void test_misuse(void) {
  peak_gguf* g = (peak_gguf*)0x1;
  CHECK_ERROR(peak_gguf_open("/nonexistent/x.gguf", NULL, &g), PEAK_ERR_IO, "/nonexistent/x.gguf");
  CHECK(g == NULL);
  CHECK_ERROR(peak_gguf_open(NULL, NULL, &g), PEAK_ERR_INVALID_ARGUMENT, "path is NULL");
  CHECK_ERROR(peak_gguf_open(stories_path(), NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERROR(peak_gguf_open(PEAK_SHARED_DIR "/models/SOURCES.md", NULL, &g), PEAK_ERR_FORMAT, "bad magic");
  CHECK_ERROR(peak_gguf_open(PEAK_SHARED_DIR "/models", NULL, &g), PEAK_ERR_IO, "not a regular file");

  peak_gguf_params params = peak_gguf_default_params();
  params.struct_size = sizeof(params) + 8;
  CHECK_ERROR(peak_gguf_open(stories_path(), &params, &g), PEAK_ERR_INVALID_ARGUMENT, "struct_size");

  /* NULL handles: counts are 0, getters fail with a message, free is a no-op. */
  CHECK(peak_gguf_n_kv(NULL) == 0);
  CHECK(peak_gguf_n_tensors(NULL) == 0);
  CHECK(peak_gguf_version(NULL) == 0);
  CHECK(peak_gguf_alignment(NULL) == 0);
  CHECK(peak_gguf_data_offset(NULL) == 0);
  CHECK(peak_gguf_file_size(NULL) == 0);
  CHECK(peak_gguf_key(NULL, 0) == NULL);
  CHECK(peak_gguf_kv_type(NULL, 0) == PEAK_GGUF_TYPE_INVALID);
  uint64_t u = 0;
  CHECK_ERROR(peak_gguf_get_uint(NULL, 0, &u), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_gguf_tensor_info t;
  CHECK_ERROR(peak_gguf_get_tensor(NULL, 0, &t), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_gguf_free(NULL);

  CHECK(strcmp(peak_status_name(PEAK_ERR_FORMAT), "PEAK_ERR_FORMAT") == 0);
  CHECK(strcmp(peak_status_name(PEAK_OK), "PEAK_OK") == 0);
  CHECK(strcmp(peak_status_name((peak_status)1234), "PEAK_ERR_UNKNOWN") == 0);
  CHECK(strlen(peak_version()) >= 5);
  CHECK(strstr(peak_system_info(), "cpu paths:") == peak_system_info());
  CHECK(strstr(peak_synth_presets(), "qwen3-0.6b") != NULL);
}

int main(void) {
  test_open_and_header();
  test_metadata();
  test_tensors();
  test_strings_are_terminated();
  test_large_vocabulary_strings(1);
  test_large_vocabulary_strings(0);
  test_misuse();
  return capi_test_summary("capi_gguf_test");
}
