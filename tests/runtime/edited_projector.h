// Projector files for refusal tests: the tiny projector of a row rewritten
// with its keys edited or a tensor left out, and the check that loading one
// fails naming what is wrong.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/projector.h"
#include "tiny_models.h"

namespace peak::test {

// The tiny projector of `arch` rewritten: its keys edited, the tensor `drop` left out.
inline std::string edited_projector(const std::function<void(gguf::GgufWriter&)>& edit_keys, const std::string& drop,
                                    model::Arch arch) {
  const auto file = gguf::GgufFile::open(write_tiny_model(arch, kernels::GgmlType::F32));
  gguf::GgufWriter w;
  for (size_t i = 0; i < file->n_kv(); ++i) w.copy_value(file->value(i));
  if (edit_keys) edit_keys(w);
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    if (t.name != drop) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data);
  }
  const std::string path = test_temp_path("edited_projector.gguf");
  w.write_file(path);
  return path;
}

// Loading `path` fails with a message holding `words`.
inline void expect_projector_refused(const std::string& path, const std::string& words) {
  try {
    model::Projector::load(path);
    ADD_FAILURE() << "loaded; expected a refusal naming: " << words;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace peak::test
