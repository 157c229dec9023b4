// An image encoder loaded from its projector file (llama.cpp's mmproj-*.gguf,
// general.architecture "clip"), the companion of a vision-language model's
// text weights: its hyper-parameters (model/hparams.h, read_projector_hparams)
// and weights, bound by the tensor manifest as a language model's are and
// mapped, not copied, but for the projector matrix, which the file stores
// transposed and the load turns into a product's layout (its own memory).
// Immutable after loading: any number of threads may encode with one.
#pragma once

#include <memory>
#include <string>

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/model.h"
#include "model/weights.h"

namespace peak::model {

class Projector {
 public:
  // Throws io::IoError, gguf::GgufError, InvalidModel or UnsupportedModel
  // naming the problem; a language model's file is refused as not a projector.
  // Uses options.use_mmap, use_mlock and check_tensors.
  static std::unique_ptr<Projector> load(const std::string& path, const LoadOptions& options = {});
  static std::unique_ptr<Projector> load(const io::FileSource& source, const LoadOptions& options = {});
  // The hyper-parameters and tensor layout alone, for estimates: the file is
  // mapped and its metadata read, no tensor data; the projector matrix's
  // transpose is a descriptor without data. Throws as load() for the metadata.
  static std::unique_ptr<Projector> load_layout(const io::FileSource& source);

  const gguf::GgufFile& file() const { return *file_; }
  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  uint64_t n_params() const { return n_params_; }
  uint64_t weight_bytes() const { return weight_bytes_; }  // the file's tensors
  // The transposed projector matrix's own memory (beside the mapped file).
  uint64_t transposed_bytes() const { return transposed_bytes_; }
  // "gemma3": the file's clip.projector_type.
  const char* projector_type() const { return hparams_.spec().projector_type; }

 private:
  Projector() = default;
  void read_layout(const io::FileSource& source, const io::MapOptions& map, bool check_values);
  // Replaces the projector matrix [n_embd_out, n_embd] by its transpose,
  // computed when `copy_values` (else a descriptor without data).
  void transpose_projector(bool copy_values);

  std::unique_ptr<gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  core::TensorArena transposed_descriptor_{1};
  core::AlignedBuffer transposed_;
  uint64_t n_params_ = 0;
  uint64_t weight_bytes_ = 0;
  uint64_t transposed_bytes_ = 0;
};

}  // namespace peak::model
