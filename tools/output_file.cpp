#include "output_file.h"

#include <sys/stat.h>

#include "model_session.h"

namespace {

// Whether both paths (links followed) name one existing file.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

void refuse_inputs(const std::string& path, const std::vector<OutputFile::Input>& inputs) {
  for (const OutputFile::Input& input : inputs) {
    if (!input.first.empty() && same_file(path, input.first)) {
      throw CommandError("refusing to write '" + path + "': it is " + input.second + " ('" + input.first + "')");
    }
  }
}

OutputFile::OutputFile(const std::string& path, const std::vector<Input>& inputs) {
  refuse_inputs(path, inputs);
  check_status(peak_file_writer_open(path.c_str(), &writer_));
}

OutputFile::~OutputFile() { peak_file_writer_free(writer_); }

void OutputFile::write(const void* data, size_t n) { check_status(peak_file_writer_write(writer_, data, n)); }

void OutputFile::commit() { check_status(peak_file_writer_commit(writer_)); }
