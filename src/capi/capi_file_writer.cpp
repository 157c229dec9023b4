// peak_file_writer: io::AtomicFile for the C API's callers.
#include <memory>

#include "capi/capi_guard.h"
#include "io/atomic_file.h"
#include "peak/peak.h"

struct peak_file_writer {
  std::unique_ptr<peak::io::AtomicFile> file;
  bool failed = false;  // a write failed: the file is abandoned
  bool committed = false;
};

namespace {

using peak::capi::fail;
using peak::capi::guarded;

// A writer that may still write: not committed, no failed write.
peak_status check_open(const peak_file_writer* w, const char* what) {
  if (!w) return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(what) + ": writer is NULL");
  if (w->committed) return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(what) + ": the file was already committed");
  if (w->failed) return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(what) + ": an earlier write failed");
  return PEAK_OK;
}

}  // namespace

extern "C" {

peak_status peak_file_writer_open(const char* path, peak_file_writer** out) {
  PEAK_CHECK_ARG(out, "peak_file_writer_open: out");
  *out = nullptr;
  PEAK_CHECK_ARG(path, "peak_file_writer_open: path");
  return guarded([&] {
    auto writer = std::make_unique<peak_file_writer>();
    writer->file = std::make_unique<peak::io::AtomicFile>(path);
    *out = writer.release();
    return PEAK_OK;
  });
}

peak_status peak_file_writer_write(peak_file_writer* writer, const void* data, size_t n) {
  if (const peak_status s = check_open(writer, "peak_file_writer_write"); s != PEAK_OK) return s;
  if (n == 0) return PEAK_OK;
  PEAK_CHECK_ARG(data, "peak_file_writer_write: data");
  const peak_status status = guarded([&] {
    writer->file->write(data, n);
    return PEAK_OK;
  });
  writer->failed = status != PEAK_OK;
  return status;
}

peak_status peak_file_writer_commit(peak_file_writer* writer) {
  if (const peak_status s = check_open(writer, "peak_file_writer_commit"); s != PEAK_OK) return s;
  const peak_status status = guarded([&] {
    writer->file->commit();
    return PEAK_OK;
  });
  writer->committed = status == PEAK_OK;
  writer->failed = status != PEAK_OK;
  return status;
}

void peak_file_writer_free(peak_file_writer* writer) { delete writer; }

}  // extern "C"
