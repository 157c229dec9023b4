// A loaded model: the mapped GGUF file, its hyper-parameters, its weights
// (descriptors pointing into the mapping, or into the model's own memory for
// matrices repacked at load time: model/weight_repack.h) and its tokenizer.
// Immutable after loading, but for matrices a background repacking publishes
// (atomically), so any number of contexts may share one model from any threads.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace peak::model {

class WeightRepacker;

constexpr int kMaxLoadThreads = 64;

struct LoadOptions {
  bool use_mmap = true;
  bool use_mlock = false;
  // Store matrices in the kernels' faster layout where there is one (see
  // model/weight_repack.h); results do not change.
  bool repack_weights = true;
  // Repack after load returns, on one thread of the lowest priority, instead
  // of during the load: the first tokens are then computed, at the stored
  // layout's speed, while most of the repacking's cost (mapping in its new
  // memory) is paid. Model::wait_for_repack waits for the end.
  bool repack_in_background = false;
  // Read every tensor once and refuse the model at the first value that is not
  // a finite number (model/tensor_check.h); vectors are always checked.
  bool check_tensors = false;
  // Threads that repack during the load (0: one per hardware thread, at most
  // kMaxLoadThreads).
  int n_threads = 0;
  // Called with the fraction of weights prepared (0..1); returning false cancels
  // the load, which then throws LoadCancelled. A background repacking is not
  // part of it.
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
  // Stops a background repacking (after its current pieces) first.
  ~Model();

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

  // Whether every matrix to repack is in its repacked layout (always true after
  // a load that repacked, or chose none, before returning).
  bool repack_finished() const;
  // Blocks until repack_finished(): for measurements of the steady state.
  void wait_for_repack() const;

  // Held for the duration of every forward pass over the weights (a
  // runtime::Context does it), so that a background repacking knows when the
  // stored rows of the matrices it replaced are no longer read. Two atomic
  // operations, no lock.
  class ForwardPass {
   public:
    explicit ForwardPass(const Model& m);
    ~ForwardPass();
    ForwardPass(const ForwardPass&) = delete;
    ForwardPass& operator=(const ForwardPass&) = delete;

   private:
    WeightRepacker* repacker_;
  };

 private:
  Model() = default;
  std::unique_ptr<gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  // Owns the repacked weights and any background repacking; declared after
  // file_ and weights_, whose tensors it reads, so that it is destroyed first.
  std::unique_ptr<WeightRepacker> repacker_;
  uint64_t n_params_ = 0;
  uint64_t weight_bytes_ = 0;
};

}  // namespace peak::model
