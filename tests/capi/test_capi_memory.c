/* peak_model_estimate_memory(_fd), before loading: the weights are the file's
   tensor bytes (summed here through peak_gguf), the KV cache is the model's
   shape times the cells (computed here from peak_model_info), and weights,
   cache and compute buffers are what the loaded model and
   peak_context_memory_needed then report. Also peak_default_threads and
   the estimate's refusals. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";

static uint64_t tensor_bytes(const char* path) {
  peak_gguf* g = NULL;
  CHECK(peak_gguf_open(path, NULL, &g) == PEAK_OK);
  uint64_t total = 0;
  for (size_t i = 0; g && i < peak_gguf_n_tensors(g); ++i) {
    peak_gguf_tensor_info t;
    CHECK(peak_gguf_get_tensor(g, i, &t) == PEAK_OK);
    total += t.n_bytes;
  }
  peak_gguf_free(g);
  return total;
}

static peak_memory_estimate new_estimate(void) {
  peak_memory_estimate e;
  memset(&e, 0xab, sizeof e);
  e.struct_size = sizeof e;
  return e;
}

static void test_estimate_matches_the_loaded_model(void) {
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 1024;
  cp.n_batch = 128;
  cp.n_threads = 2;
  peak_memory_estimate e = new_estimate();
  CHECK(peak_model_estimate_memory(kStories, NULL, &cp, &e) == PEAK_OK);

  CHECK(e.weight_bytes == tensor_bytes(kStories));
  CHECK(e.repacked_bytes == 0); /* F32: nothing is repacked */
  CHECK(e.total_bytes == e.weight_bytes + e.repacked_bytes + e.kv_bytes + e.compute_bytes);
  CHECK(e.compute_bytes > 0);

  peak_model* m = NULL;
  CHECK(peak_model_load(kStories, NULL, &m) == PEAK_OK);
  peak_model_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(peak_model_get_info(m, &info) == PEAK_OK);
  CHECK(e.weight_bytes == info.weight_bytes);
  /* K and V per layer and cell (F16, the default), and an int32 position per cell. */
  CHECK(e.kv_bytes == 2 * info.n_layer * cp.n_ctx * info.n_head_kv * info.head_dim * 2 + cp.n_ctx * 4);
  size_t needed = 0;
  CHECK(peak_context_memory_needed(m, &cp, &needed) == PEAK_OK);
  CHECK(needed == e.kv_bytes + e.compute_bytes);
  peak_model_free(m);

  /* Read into memory, the weights are the whole file. */
  peak_model_params mp = peak_model_default_params();
  mp.use_mmap = 0;
  CHECK(peak_model_estimate_memory(kStories, &mp, &cp, &e) == PEAK_OK);
  FILE* f = fopen(kStories, "rb");
  fseek(f, 0, SEEK_END);
  CHECK(e.weight_bytes == (uint64_t)ftell(f));
  fclose(f);

  /* Through a file descriptor: the same numbers. */
  peak_memory_estimate by_fd = new_estimate();
  peak_memory_estimate by_path = new_estimate();
  CHECK(peak_model_estimate_memory(kStories, NULL, NULL, &by_path) == PEAK_OK);
  const int fd = open(kStories, O_RDONLY);
  f = fopen(kStories, "rb");
  fseek(f, 0, SEEK_END);
  const uint64_t size = (uint64_t)ftell(f);
  fclose(f);
  CHECK(peak_model_estimate_memory_fd(fd, 0, size, NULL, NULL, &by_fd) == PEAK_OK);
  CHECK(memcmp(&by_fd, &by_path, sizeof by_fd) == 0);
  CHECK_ERROR(peak_model_estimate_memory_fd(fd, 2, size - 2, NULL, NULL, &by_fd), PEAK_ERR_INVALID_ARGUMENT,
              "multiple of 4");
  CHECK_ERROR(peak_model_estimate_memory_fd(fd, 0, size + 1, NULL, NULL, &by_fd), PEAK_ERR_INVALID_ARGUMENT,
              "beyond the end of the file");
  CHECK_ERROR(peak_model_estimate_memory_fd(-1, 0, size, NULL, NULL, &by_fd), PEAK_ERR_INVALID_ARGUMENT, "fd is -1");
  close(fd);
}

static void test_estimate_refusals(void) {
  peak_memory_estimate e = new_estimate();
  CHECK_ERROR(peak_model_estimate_memory(NULL, NULL, NULL, &e), PEAK_ERR_INVALID_ARGUMENT, "path is NULL");
  CHECK_ERROR(peak_model_estimate_memory(kStories, NULL, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "estimate is NULL");
  CHECK_ERROR(peak_model_estimate_memory("/nonexistent/model.gguf", NULL, NULL, &e), PEAK_ERR_IO, "cannot open");
  /* A tokenizer-only file has no weights to size. */
  CHECK_ERROR(peak_model_estimate_memory(PEAK_SHARED_DIR "/fixtures/vocab/ggml-vocab-llama-spm.gguf", NULL, NULL, &e),
              PEAK_ERR_FORMAT, "");
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 0;
  CHECK_ERROR(peak_model_estimate_memory(kStories, NULL, &cp, &e), PEAK_ERR_INVALID_ARGUMENT, "n_ctx must be at least 1");
  cp = peak_context_default_params();
  cp.type_k = PEAK_TYPE_Q8_0; /* stories260K's head size is 8 */
  CHECK_ERROR(peak_model_estimate_memory(kStories, NULL, &cp, &e), PEAK_ERR_INVALID_ARGUMENT, "multiple of 32");
  peak_model_params mp = peak_model_default_params();
  mp.struct_size = 4;
  CHECK_ERROR(peak_model_estimate_memory(kStories, &mp, NULL, &e), PEAK_ERR_INVALID_ARGUMENT, "struct_size");
  e.struct_size = 8;
  CHECK_ERROR(peak_model_estimate_memory(kStories, NULL, NULL, &e), PEAK_ERR_INVALID_ARGUMENT,
              "peak_memory_estimate.struct_size");
}

static void test_default_threads(void) {
  const size_t n = peak_default_threads();
  CHECK(n >= 1);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  CHECK(online < 1 || n <= (size_t)online);
  peak_model* m = NULL;
  CHECK(peak_model_load(kStories, NULL, &m) == PEAK_OK);
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 64;
  CHECK(cp.n_threads == 0);
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  const int32_t bos = 1;
  CHECK(peak_context_eval(ctx, &bos, 1) == PEAK_OK);
  peak_context_free(ctx);
  peak_model_free(m);
}

int main(void) {
  test_estimate_matches_the_loaded_model();
  test_estimate_refusals();
  test_default_threads();
  return capi_test_summary("test_capi_memory");
}
