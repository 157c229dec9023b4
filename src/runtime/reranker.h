// Scores documents against a query with a cross-encoder: an encoder model
// whose pooling is rank (bert with BertForSequenceClassification's head,
// model/encoder.h). Each query-document pair is one sequence, joined as the
// model's tokenizer joins a text pair,
//   [CLS] query [SEP] document [SEP]
// with token type 0 up to the first [SEP], itself included, and 1 after it
// (BERT's sentences A and B); many pairs share each forward pass
// (Encoder::embed).
//
// llama.cpp's server builds its rerank input from the vocabulary's flags:
// BOS, query, then EOS (SEP when there is no EOS) if add_eos and SEP if
// add_sep, document, EOS if add_eos; for a BERT vocabulary that names [SEP] as
// its EOS that is the same sequence. It gives every token type 0, though; the
// models were trained with type 1 on the document, so peak feeds that. [SEP]
// here is the vocabulary's EOS when it has one, else its SEP token.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/encoder.h"

namespace peak::runtime {

// One query-document pair as the model reads it.
struct PairInput {
  std::vector<int32_t> tokens;
  int32_t second_segment = 0;  // index of the document's first token: type 1 from there
};

class Reranker {
 public:
  // Throws std::invalid_argument when the encoder's model is not a reranker
  // (its pooling is not rank) or its vocabulary has no [CLS] or separator.
  explicit Reranker(Encoder& encoder);

  // The pair's tokens; `query` and `document` are token ids without special tokens.
  PairInput join(const std::vector<int32_t>& query, const std::vector<int32_t>& document) const;

  // One score per document: the classification head's first output, a logit
  // (higher is more relevant; llama.cpp's /rerank gives the same number).
  // Throws std::invalid_argument for an empty query, and naming the index of
  // an empty document or of a pair longer than the encoder's n_batch, before
  // anything runs.
  std::vector<float> score(const std::vector<int32_t>& query, const std::vector<std::vector<int32_t>>& documents);

 private:
  Encoder& encoder_;
  int32_t cls_;
  int32_t sep_;
  bool typed_;  // the model has token type 1
};

}  // namespace peak::runtime
