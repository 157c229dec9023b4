// A loaded model: the mapped GGUF file, its hyper-parameters, its weights
// (descriptors pointing into the mapping, or into the model's own memory for
// matrices repacked at load time: model/weight_repack.h) and its tokenizer.
// Immutable after loading, so any number of contexts may share one model from
// any threads.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf_reader.h"
#include "io/page_memory.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace peak::model {

constexpr int kMaxLoadThreads = 64;

struct LoadOptions {
  bool use_mmap = true;
  bool use_mlock = false;
  // Store matrices in the kernels' faster layout where there is one (see
  // model/weight_repack.h); results do not change.
  bool repack_weights = true;
  // Read every tensor once and refuse the model at the first value that is not
  // a finite number (model/tensor_check.h); vectors are always checked.
  bool check_tensors = false;
  // Threads that repack (0: one per hardware thread, at most kMaxLoadThreads).
  int n_threads = 0;
  // Called with the fraction of weights prepared (0..1); returning false cancels
  // the load, which then throws LoadCancelled.
  std::function<bool(float)> progress;
};

class LoadCancelled : public std::runtime_error {
 public:
  LoadCancelled() : std::runtime_error("cancelled by the progress callback") {}
};

class Model {
 public:
  // Throws io::IoError, gguf::GgufError or std::runtime_error naming the problem
  // (std::invalid_argument for options out of range).
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options = {});

  const gguf::GgufFile& file() const { return *file_; }
  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  // general.name, or "" when absent.
  std::string name() const;
  // tokenizer.chat_template, or "" when absent.
  std::string chat_template() const;
  uint64_t n_params() const { return n_params_; }
  uint64_t weight_bytes() const { return weight_bytes_; }

 private:
  Model() = default;
  std::unique_ptr<gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<io::PageMemory> repacked_;  // repacked weights, when any
  uint64_t n_params_ = 0;
  uint64_t weight_bytes_ = 0;
};

}  // namespace peak::model
