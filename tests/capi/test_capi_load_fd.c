/* peak_model_load_fd: stories260K embedded in a larger file (junk before and
   after it, as an asset inside an APK) loads through a file descriptor with an
   offset and gives bit for bit the logits of the model loaded by path, mapped
   and read into memory, and the fd may be closed at once. Regions that are not
   the model, not in the file or not in a regular file are refused with a
   message; so is a mapped region whose offset would misalign the tensors. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capi_test.h"
#include "peak/peak.h"

static const char* kStories = PEAK_SHARED_DIR "/models/stories260K.gguf";

static unsigned char* read_whole(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* bytes = (unsigned char*)malloc(*size);
  CHECK(bytes && fread(bytes, 1, *size, f) == *size);
  fclose(f);
  return bytes;
}

/* Writes `before` bytes of junk, the model, then `after` bytes of junk. The
   junk looks like a GGUF header, so a region that starts in it is refused for
   what it holds, not for its first bytes alone. */
static void write_embedded(const char* path, const unsigned char* model, size_t size, size_t before, size_t after) {
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  for (size_t i = 0; i < before; ++i) fputc(i % 7 == 0 ? 'G' : (int)(i * 31 % 251), f);
  CHECK(fwrite(model, 1, size, f) == size);
  for (size_t i = 0; i < after; ++i) fputc((int)(i * 17 % 253), f);
  fclose(f);
}

/* The logits of every token of a prompt, from a new context on `m`. */
static float* prompt_logits(peak_model* m, size_t* n_floats) {
  const char* text = "Once upon a time, there was a little girl named Lily. She loved to play";
  int32_t ids[64];
  size_t n = 0;
  CHECK(peak_tokenize(m, text, strlen(text), 1, 0, ids, 64, &n) == PEAK_OK);
  peak_context_params cp = peak_context_default_params();
  cp.n_ctx = 128;
  cp.n_batch = 16;
  cp.n_threads = 2;
  cp.logits_all = 1;
  peak_context* ctx = NULL;
  CHECK(peak_context_create(m, &cp, &ctx) == PEAK_OK);
  *n_floats = n * 512;
  float* logits = (float*)malloc(*n_floats * sizeof(float));
  CHECK(peak_context_eval_all_logits(ctx, ids, n, logits) == PEAK_OK);
  peak_context_free(ctx);
  return logits;
}

static int same_logits(peak_model* a, peak_model* b) {
  size_t na = 0, nb = 0;
  float* la = prompt_logits(a, &na);
  float* lb = prompt_logits(b, &nb);
  const int same = na == nb && na > 0 && memcmp(la, lb, na * sizeof(float)) == 0;
  free(la);
  free(lb);
  return same;
}

static void check_same_info(peak_model* a, peak_model* b) {
  peak_model_info ia, ib;
  memset(&ia, 0, sizeof ia);
  memset(&ib, 0, sizeof ib);
  ia.struct_size = ib.struct_size = sizeof ia;
  CHECK(peak_model_get_info(a, &ia) == PEAK_OK && peak_model_get_info(b, &ib) == PEAK_OK);
  CHECK(ia.n_params == ib.n_params && ia.weight_bytes == ib.weight_bytes && ia.n_vocab == ib.n_vocab);
  CHECK(strcmp(ia.architecture, ib.architecture) == 0 && strcmp(ia.name, ib.name) == 0);
}

static peak_model* load_fd(const char* path, uint64_t offset, uint64_t length, int use_mmap) {
  const int fd = open(path, O_RDONLY);
  CHECK(fd >= 0);
  peak_model_params mp = peak_model_default_params();
  mp.use_mmap = use_mmap;
  mp.repack_weights = PEAK_REPACK_AT_LOAD;
  peak_model* m = NULL;
  const peak_status st = peak_model_load_fd(fd, offset, length, &mp, &m);
  if (st != PEAK_OK) fprintf(stderr, "  peak_model_load_fd: %s\n", peak_last_error());
  CHECK(st == PEAK_OK);
  close(fd); /* the model keeps no reference to it */
  return m;
}

static void test_embedded_model_gives_the_same_logits(const char* embedded, const char* unaligned, size_t size) {
  peak_model* by_path = NULL;
  CHECK(peak_model_load(kStories, NULL, &by_path) == PEAK_OK);
  peak_model* mapped = load_fd(embedded, 4096 + 1000, size, 1);
  peak_model* read = load_fd(embedded, 4096 + 1000, size, 0);
  peak_model* read_unaligned = load_fd(unaligned, 1001, size, 0);
  CHECK(by_path && mapped && read && read_unaligned);
  if (by_path && mapped && read && read_unaligned) {
    check_same_info(by_path, mapped);
    CHECK(same_logits(by_path, mapped));
    CHECK(same_logits(by_path, read));
    CHECK(same_logits(by_path, read_unaligned));
  }
  peak_model_free(by_path);
  peak_model_free(mapped);
  peak_model_free(read);
  peak_model_free(read_unaligned);

  /* The tokenizer alone, at any offset. */
  const int fd = open(unaligned, O_RDONLY);
  peak_model* vocab = NULL;
  CHECK(peak_model_load_vocab_fd(fd, 1001, size, &vocab) == PEAK_OK);
  close(fd);
  int32_t ids[16];
  size_t n = 0;
  CHECK(peak_tokenize(vocab, "Once upon a time", 16, 1, 0, ids, 16, &n) == PEAK_OK && n >= 3 && ids[0] == 1);
  peak_model_free(vocab);
}

static void test_refusals(const char* embedded, const char* unaligned, size_t size) {
  static char not_a_model;
  peak_model* m = (peak_model*)(void*)&not_a_model; /* must come back NULL */
  const int fd = open(embedded, O_RDONLY);
  const uint64_t at = 4096 + 1000, file_size = 4096 + 1000 + size + 555;

  CHECK_ERROR(peak_model_load_fd(-1, 0, 10, NULL, &m), PEAK_ERR_INVALID_ARGUMENT, "fd is -1, not an open file descriptor");
  CHECK(m == NULL);
  CHECK_ERROR(peak_model_load_fd(fd, at, size, NULL, NULL), PEAK_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERROR(peak_model_load_fd(fd, at, 0, NULL, &m), PEAK_ERR_INVALID_ARGUMENT, "the region is empty (length 0)");
  CHECK_ERROR(peak_model_load_fd(fd, at, size + 556, NULL, &m), PEAK_ERR_INVALID_ARGUMENT,
              "beyond the end of the file");
  CHECK_ERROR(peak_model_load_fd(fd, (file_size + 8) / 4 * 4, 4, NULL, &m), PEAK_ERR_INVALID_ARGUMENT,
              "beyond the end of the file");
  CHECK_ERROR(peak_model_load_fd(fd, 8, UINT64_MAX - 4, NULL, &m), PEAK_ERR_INVALID_ARGUMENT, "2^64 or later");
  /* The model less its last bytes: its tensor data ends past the region. */
  CHECK_ERROR(peak_model_load_fd(fd, at, size - 100, NULL, &m), PEAK_ERR_FORMAT, "fd ");
  /* A region starting in the junk before the model. */
  CHECK_ERROR(peak_model_load_fd(fd, at - 4, size, NULL, &m), PEAK_ERR_FORMAT, "fd ");
  CHECK(m == NULL);
  close(fd);

  /* Mapped, the tensors of a model at offset 1001 would be misaligned. */
  const int ufd = open(unaligned, O_RDONLY);
  CHECK_ERROR(peak_model_load_fd(ufd, 1001, size, NULL, &m), PEAK_ERR_INVALID_ARGUMENT, "multiple of 4");
  close(ufd);

  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0);
  CHECK(write(pipe_fds[1], "GGUF", 4) == 4);
  CHECK_ERROR(peak_model_load_fd(pipe_fds[0], 0, 4, NULL, &m), PEAK_ERR_IO, "not a regular file");
  CHECK_ERROR(peak_model_load_vocab_fd(pipe_fds[0], 0, 4, &m), PEAK_ERR_IO, "not a regular file");
  const int closed = pipe_fds[0];
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  CHECK_ERROR(peak_model_load_fd(closed, 0, 4, NULL, &m), PEAK_ERR_IO, "Bad file descriptor");
  CHECK_ERROR(peak_model_load_vocab_fd(-3, 0, 4, &m), PEAK_ERR_INVALID_ARGUMENT, "fd is -3");
  CHECK(m == NULL);
}

int main(void) {
  size_t size = 0;
  unsigned char* model = read_whole(kStories, &size);
  if (!model) return capi_test_summary("test_capi_load_fd");
  const char* embedded = "capi_load_fd_embedded.bin";
  const char* unaligned = "capi_load_fd_unaligned.bin";
  write_embedded(embedded, model, size, 4096 + 1000, 555); /* not at a page boundary, a multiple of 4 */
  write_embedded(unaligned, model, size, 1001, 3);
  free(model);
  test_embedded_model_gives_the_same_logits(embedded, unaligned, size);
  test_refusals(embedded, unaligned, size);
  remove(embedded);
  remove(unaligned);
  return capi_test_summary("test_capi_load_fd");
}
