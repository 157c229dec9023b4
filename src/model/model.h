// A loaded model: the mapped GGUF file, its hyper-parameters, its weights
// (descriptors pointing into the mapping, or into the model's own memory for
// matrices repacked at load time: model/weight_repack.h) and its tokenizer.
// Immutable after loading, but for matrices a background repacking publishes
// (atomically), so any number of contexts may share one model from any threads.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "sampling/grammar_vocabulary.h"
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

// A region of a larger file (io::FileSource) is mapped where it lies, so its
// offset must keep every tensor aligned for its element type as a file of its
// own would (4 bytes: F32 values, the float scales of K-quant blocks). 4 is
// also what zipalign gives an uncompressed entry of an Android APK.
constexpr uint64_t kMappedRegionAlignment = 4;

class Model {
 public:
  // Throws io::IoError, gguf::GgufError or std::runtime_error naming the problem
  // (std::invalid_argument for options out of range).
  static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options = {});
  // The same from any source; a region mapped with use_mmap must start at a
  // multiple of kMappedRegionAlignment (std::invalid_argument otherwise:
  // check_source).
  static std::unique_ptr<Model> load(const io::FileSource& source, const LoadOptions& options = {});
  // Throws std::invalid_argument, naming the problem, for options a load
  // refuses before it opens the file.
  static void check_source(const io::FileSource& source, const LoadOptions& options);
  // A model's layout: its hyper-parameters and weight descriptors, for the
  // memory a load and its contexts would take (runtime::estimate_memory). The
  // file is mapped and its metadata read; no tensor data is read (no values
  // checked, nothing prefetched or repacked), and there is no tokenizer. Only
  // for sizing: nothing may evaluate it. Throws as load() does for the
  // metadata's problems.
  static std::unique_ptr<Model> load_layout(const io::FileSource& source);
  // Stops a background repacking (after its current pieces) first.
  ~Model();

  const gguf::GgufFile& file() const { return *file_; }
  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  // Throws std::logic_error for a layout (load_layout), which has none.
  const tokenizer::Tokenizer& tokenizer() const;
  // The vocabulary as grammars read it, over the output's n_vocab tokens: built
  // on the first call (a pass over the tokens), then shared by every sampler
  // with a grammar. Any thread. Throws as tokenizer() does.
  std::shared_ptr<const sampling::GrammarVocabulary> grammar_vocabulary() const;
  // general.name, or "" when absent.
  std::string name() const;
  // tokenizer.chat_template, or "" when absent.
  std::string chat_template() const;
  // The template named `name` (tokenizer.chat_template.<name>, as a reranker's
  // "rerank"), or "" when absent.
  std::string named_chat_template(const std::string& name) const;
  uint64_t n_params() const { return n_params_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  // The memory holding matrices repacked to the kernels' layout (0 when none is).
  uint64_t repacked_bytes() const;

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
  // Maps (or reads) the file, reads its hyper-parameters, binds the weights and
  // counts them: what a load and a layout share.
  void read_layout(const io::FileSource& source, const io::MapOptions& map, bool check_values);
  std::unique_ptr<gguf::GgufFile> file_;
  HParams hparams_;
  ModelWeights weights_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  mutable std::mutex grammar_vocabulary_mutex_;
  mutable std::shared_ptr<const sampling::GrammarVocabulary> grammar_vocabulary_;
  // Owns the repacked weights and any background repacking; declared after
  // file_ and weights_, whose tensors it reads, so that it is destroyed first.
  std::unique_ptr<WeightRepacker> repacker_;
  uint64_t n_params_ = 0;
  uint64_t weight_bytes_ = 0;
};

}  // namespace peak::model
