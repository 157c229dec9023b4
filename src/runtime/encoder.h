// Runs an embedding model (model::HParams::embeds: bert, nomic-bert, gemma-embedding, or
// a decoder whose file gives pooling_type, as Qwen3-Embedding) to embed token
// sequences: many short sequences share each forward pass, side by side, each
// with its own positions from 0 and attending only within itself; there is no
// KV cache. The graph, allocator and thread pool are reserved at creation for
// the worst case (n_batch tokens), so embedding allocates nothing but its
// results. An Encoder is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"
#include "model/encoder.h"
#include "model/model.h"

namespace peak::runtime {

struct EncoderParams {
  // Tokens per forward pass, the longest sequence it takes; 0: the model's
  // training context (its position table's length), which also bounds it.
  int64_t n_batch = 0;
  int n_threads = 0;  // 0: the fast cores the process may use (core::default_threads)
};

struct EmbedOptions {
  std::optional<model::Pooling> pooling;  // unset: the model's pooling_type
  bool normalize = true;                  // scale each vector to Euclidean length 1 (a zero vector stays zero)
  // Matryoshka embeddings: each vector keeps its first `dimensions` floats,
  // normalised after the cut when `normalize`; 0: all n_embd.
  int64_t dimensions = 0;
  // A sequence longer than n_batch is cut to its first n_batch tokens instead
  // of refused. When it ends with the token the tokenizer appends ([SEP], or
  // EOS: Tokenizer::appended_end), that token stays last, after the first
  // n_batch - 1, as sentence-transformers truncates before adding it.
  bool truncate = false;
};

class Encoder {
 public:
  // Throws std::invalid_argument for a model that is not an embedding model
  // or unusable parameters.
  Encoder(const model::Model& model, const EncoderParams& params = {});

  const model::Model& model() const { return model_; }
  int64_t n_batch() const { return n_batch_; }
  int64_t n_embd() const { return model_.hparams().n_embd; }

  // One result per sequence: its n_embd-float vector, or with Pooling::None
  // its tokens' vectors one after another (n_tokens × n_embd floats), each
  // normalised when asked; with Pooling::Rank its n_cls_out scores, never
  // normalised. Text pairs (BERT's sentences A and B): `second_segment`
  // holds, per sequence, the index of its first token of type 1 (its length
  // when it has none); empty: every token is type 0. Throws std::invalid_argument naming the index of an empty
  // sequence, one longer than n_batch, a token outside the vocabulary or a
  // second_segment out of range, before anything runs, and for Pooling::Rank
  // on a model without the classification head.
  std::vector<std::vector<float>> embed(const std::vector<std::vector<int32_t>>& sequences,
                                        const EmbedOptions& options = {},
                                        const std::vector<int32_t>& second_segment = {});

  // The floats per vector `options` asks for: its dimensions, or n_embd for 0.
  // Throws std::invalid_argument naming a value outside 0..n_embd.
  int64_t output_dimensions(const EmbedOptions& options) const;
  // The tokens a sequence of n_tokens is embedded with: n_tokens, or at most
  // n_batch when truncating.
  int64_t embedded_length(size_t n_tokens, bool truncate) const;

 private:
  // Runs sequences [first, end) (at most n_batch tokens in all) and appends their results to `out`.
  void run_batch(const std::vector<std::vector<int32_t>>& sequences, size_t first, size_t end, model::Pooling pooling,
                 int64_t dimensions, bool normalize, const std::vector<int32_t>& second_segment,
                 std::vector<std::vector<float>>& out);
  // `sequences` with those longer than n_batch cut as EmbedOptions::truncate says.
  std::vector<std::vector<int32_t>> truncated(const std::vector<std::vector<int32_t>>& sequences) const;
  void check(const std::vector<std::vector<int32_t>>& sequences, model::Pooling pooling,
             const std::vector<int32_t>& second_segment) const;

  const model::Model& model_;
  int64_t n_batch_;
  int n_threads_;
  core::ThreadPool pool_;
  core::Graph graph_;
  core::GraphAllocator allocator_;
};

}  // namespace peak::runtime
