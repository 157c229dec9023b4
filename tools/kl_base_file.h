// The base model's log-probabilities that `peak perplexity --kl-divergence-base
// FILE` writes and `--kl-divergence` compares against, in llama-perplexity's
// layout, so either program reads the other's files. Little-endian:
//
//   char     magic[8] = "_logits_"   (the format has no version field: the magic is its version)
//   uint32   n_ctx                   window length, >= 4
//   int32    n_vocab
//   int32    n_chunk                 windows, >= 1
//   int32    tokens[n_chunk * n_ctx] the text's tokens (BOS first when the model adds it)
//   then for each window, for each scored position j in [n_ctx/2, n_ctx - 1), a row of
//   nv = 2 * ((n_vocab + 1) / 2) + 4 uint16:
//     float  scale, min_log_prob     (the first 4 uint16)
//     uint16 q[n_vocab]              log p(token i) = scale * q[i] + min_log_prob; every
//                                    log-probability more than 16 below the largest is stored
//                                    as the minimum (q = 0)
//     uint16 padding[nv - 4 - n_vocab] (0)
//
// A file is untrusted input: the reader checks the magic, the ranges, that the
// file holds exactly the rows its header announces, that the tokens are ids of
// the model's vocabulary and that every row's scale and minimum are finite.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "output_file.h"

// The row length (uint16 values) for a vocabulary of n_vocab tokens.
size_t kl_base_row_length(size_t n_vocab);

// Writes the file whole or not at all (output_file.h).
class KlBaseWriter {
 public:
  // Opens `path` for writing; CommandError when it cannot be, or when it is
  // one of `inputs` (the model, the text).
  KlBaseWriter(const std::string& path, const std::vector<OutputFile::Input>& inputs);

  // The header and the tokens of all n_chunk windows (n_chunk * n_ctx of them).
  void write_header(uint32_t n_ctx, size_t n_vocab, const int32_t* tokens, size_t n_chunk);
  // One scored position: its logits (n_vocab floats) as a quantized row.
  void write_row(const float* logits);
  // Puts the whole file in place; CommandError when it cannot be.
  void finish();

 private:
  OutputFile file_;
  size_t n_vocab_ = 0;
  std::vector<uint16_t> row_;
};

class KlBaseReader {
 public:
  // Opens `path` and reads and checks the header (CommandError naming the
  // file and what is wrong).
  explicit KlBaseReader(const std::string& path);
  ~KlBaseReader();
  KlBaseReader(const KlBaseReader&) = delete;
  KlBaseReader& operator=(const KlBaseReader&) = delete;

  uint32_t n_ctx() const { return n_ctx_; }
  size_t n_chunk() const { return n_chunk_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // CommandError unless the file was written for a vocabulary of n_vocab tokens.
  void check_vocabulary(size_t n_vocab) const;

  // The log-probabilities of the next scored position (n_vocab values).
  const std::vector<float>& next_row();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  uint32_t n_ctx_ = 0;
  size_t n_vocab_ = 0;
  size_t n_chunk_ = 0;
  size_t rows_read_ = 0;
  std::vector<int32_t> tokens_;
  std::vector<uint16_t> row_;
  std::vector<float> log_probs_;
};
