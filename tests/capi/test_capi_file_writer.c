/* peak_file_writer: a file appears whole on commit, an abandoned or failed
   write leaves the old content and no temporary file, and what is not a
   regular file is refused before anything is written. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capi_test.h"
#include "peak/peak.h"

#define DIR_PATH PEAK_TEST_TMPDIR "/capi_file_writer"

/* The file's bytes into buf (NUL after them); -1 when it cannot be read. */
static long read_all(const char* path, char* buf, size_t capacity) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  const size_t n = fread(buf, 1, capacity - 1, f);
  fclose(f);
  buf[n] = '\0';
  return (long)n;
}

/* How many entries the test directory holds (. and .. not counted). */
static int entries(void) {
  DIR* d = opendir(DIR_PATH);
  int n = 0;
  if (!d) return -1;
  for (struct dirent* e = readdir(d); e; e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
  }
  closedir(d);
  return n;
}

int main(void) {
  char buf[256];
  const char* out = DIR_PATH "/out.txt";
  mkdir(DIR_PATH, 0755);
  unlink(out);
  unlink(DIR_PATH "/sub/x");
  rmdir(DIR_PATH "/sub");

  peak_file_writer* w = NULL;
  CHECK(peak_file_writer_open(out, &w) == PEAK_OK && w != NULL);
  CHECK(peak_file_writer_write(w, "old ", 4) == PEAK_OK);
  CHECK(peak_file_writer_write(w, "text", 4) == PEAK_OK);
  CHECK(peak_file_writer_write(w, NULL, 0) == PEAK_OK);
  CHECK(read_all(out, buf, sizeof buf) == -1); /* nothing at the path before the commit */
  CHECK(peak_file_writer_commit(w) == PEAK_OK);
  CHECK(read_all(out, buf, sizeof buf) == 8 && strcmp(buf, "old text") == 0);
  CHECK_ERROR(peak_file_writer_write(w, "x", 1), PEAK_ERR_INVALID_ARGUMENT, "already committed");
  CHECK_ERROR(peak_file_writer_commit(w), PEAK_ERR_INVALID_ARGUMENT, "already committed");
  peak_file_writer_free(w);
  CHECK(entries() == 1);

  /* Abandoned: the old content stays, the temporary file goes. */
  CHECK(peak_file_writer_open(out, &w) == PEAK_OK);
  CHECK(peak_file_writer_write(w, "new", 3) == PEAK_OK);
  CHECK(entries() == 2);
  peak_file_writer_free(w);
  CHECK(read_all(out, buf, sizeof buf) == 8 && strcmp(buf, "old text") == 0);
  CHECK(entries() == 1);

  /* Refused before anything is written. */
  CHECK(mkdir(DIR_PATH "/sub", 0755) == 0);
  w = (peak_file_writer*)&buf;
  CHECK_ERROR(peak_file_writer_open(DIR_PATH "/sub", &w), PEAK_ERR_IO, "sub");
  CHECK(w == NULL);
  CHECK_ERROR(peak_file_writer_open("/dev/null", &w), PEAK_ERR_IO, "/dev/null");
  CHECK_ERROR(peak_file_writer_open(DIR_PATH "/missing/x", &w), PEAK_ERR_IO, DIR_PATH "/missing/x'");
  CHECK(strstr(peak_last_error(), ".partial") == NULL);
  CHECK_ERROR(peak_file_writer_open(NULL, &w), PEAK_ERR_INVALID_ARGUMENT, "path");
  CHECK_ERROR(peak_file_writer_open(out, NULL), PEAK_ERR_INVALID_ARGUMENT, "out");
  CHECK_ERROR(peak_file_writer_write(NULL, "x", 1), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERROR(peak_file_writer_commit(NULL), PEAK_ERR_INVALID_ARGUMENT, "NULL");
  peak_file_writer_free(NULL);
  CHECK(rmdir(DIR_PATH "/sub") == 0);
  CHECK(entries() == 1);

  return capi_test_summary("test_capi_file_writer");
}
