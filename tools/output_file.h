// A command's own output file (peak run --logits-out, peak perplexity
// --kl-divergence-base, peak bench --chat --csv), written as the library writes models and sessions
// (peak_file_writer): nothing at the path changes until commit() puts the
// whole file there, and a failure, an exception or a signal leaves the old
// file as it was and no temporary file behind.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "peak/peak.h"

class OutputFile {
 public:
  // A file the command reads and what it is ("the model"): never written over.
  using Input = std::pair<std::string, std::string>;

  // Opens the writer first, so that a path that cannot be written fails
  // before any work; CommandError for a path that is one of `inputs` (also
  // through a link) or that the library refuses (not a regular file ...).
  OutputFile(const std::string& path, const std::vector<Input>& inputs);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // CommandError with the library's message (a full disk ...).
  void write(const void* data, size_t n);
  void commit();

 private:
  peak_file_writer* writer_ = nullptr;
};

// CommandError when `path` is one of `inputs` (also through a link), for the
// commands whose output the library writes (peak synth --vocab-from, peak lora
// synth's base): a command never writes over a file it reads.
void refuse_inputs(const std::string& path, const std::vector<OutputFile::Input>& inputs);
