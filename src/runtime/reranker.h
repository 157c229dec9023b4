// Scores documents against a query with a reranker: a model whose pooling is
// rank (model/encoder.h). Each query-document pair is one sequence; many pairs
// share each forward pass (Encoder::embed). Two kinds of model:
//
// - A cross-encoder (bert with BertForSequenceClassification's head). Pairs
//   are joined as the model's tokenizer joins a text pair,
//     [CLS] query [SEP] document [SEP]
//   with token type 0 up to the first [SEP], itself included, and 1 after it
//   (BERT's sentences A and B). The score is the head's first output, a logit.
//   llama.cpp's server builds the same sequence from the vocabulary's flags
//   (BOS, query, EOS or SEP, document, EOS for a BERT vocabulary that names
//   [SEP] as its EOS) but gives every token type 0; the models were trained
//   with type 1 on the document, so peak feeds that. [SEP] here is the
//   vocabulary's EOS when it has one, else its SEP token.
//
// - A decoder asked whether the document meets the query (Qwen3-Reranker).
//   The pair is the model's prompt, `tokenizer.chat_template.rerank` (written
//   by llama.cpp's converter) with {query} and {document} replaced by the
//   texts, tokenized with the template's control tokens; a control token
//   spelled in a text stays text (llama.cpp parses those too). The score is
//   the probability of the answer "yes": the softmax of the head's yes/no
//   logits, as llama.cpp's server gives it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/encoder.h"

namespace peak::runtime {

// One query-document pair as the model reads it.
struct PairInput {
  std::vector<int32_t> tokens;
  // A cross-encoder's: the document's first token, type 1 from there; the
  // whole sequence is type 0 when it is tokens.size().
  int32_t second_segment = 0;
};

class Reranker {
 public:
  // Throws std::invalid_argument when the encoder's model is not a reranker
  // (its pooling is not rank), a cross-encoder's vocabulary has no [CLS] or
  // separator, or a decoder reranker's file has no usable prompt template.
  explicit Reranker(Encoder& encoder);

  // Whether pairs are prompts (fill) rather than joined tokens (join).
  bool prompted() const { return !prompt_.empty(); }
  // Whether scores are probabilities in [0, 1] (a prompted reranker's P(yes))
  // rather than logits.
  bool gives_probabilities() const { return prompted(); }

  // A cross-encoder's pair; `query` and `document` are token ids without special tokens.
  PairInput join(const std::vector<int32_t>& query, const std::vector<int32_t>& document) const;
  // A prompted reranker's pair: the template filled with the two texts.
  PairInput fill(std::string_view query, std::string_view document) const;

  // One score per pair (higher is more relevant). Throws
  // std::invalid_argument naming the index of a pair longer than the
  // encoder's n_batch (as "document i"), before anything runs.
  std::vector<float> score(const std::vector<PairInput>& pairs);
  // A cross-encoder's scores for token ids, joined. Throws as score(pairs) and
  // for an empty query or document (naming its index).
  std::vector<float> score(const std::vector<int32_t>& query, const std::vector<std::vector<int32_t>>& documents);

 private:
  Encoder& encoder_;
  std::string prompt_;  // a prompted reranker's template, else empty
  int32_t cls_ = 0;
  int32_t sep_ = 0;
  bool typed_ = false;  // the model has token type 1
};

}  // namespace peak::runtime
