#include "runtime/reranker.h"

#include <stdexcept>
#include <string>

#include "tokenizer/vocab.h"

namespace peak::runtime {

namespace {

Encoder& require_reranker(Encoder& encoder) {
  const model::HParams& hp = encoder.model().hparams();
  if (hp.pooling != model::Pooling::Rank) {
    throw std::invalid_argument(std::string("the model is not a reranker: its pooling is ") +
                                model::pooling_name(hp.pooling) +
                                ", and a cross-encoder's is rank (pooling_type 4, with a classification head)");
  }
  return encoder;
}

}  // namespace

Reranker::Reranker(Encoder& encoder) : encoder_(require_reranker(encoder)) {
  const tokenizer::SpecialTokens& special = encoder_.model().tokenizer().vocab().special();
  cls_ = special.bos;
  sep_ = special.eos != tokenizer::kNoToken ? special.eos : special.sep;
  if (cls_ == tokenizer::kNoToken || sep_ == tokenizer::kNoToken) {
    throw std::invalid_argument(
        "the reranker's vocabulary lacks the [CLS] (BOS) or [SEP] (EOS or SEP) token a text pair is joined with");
  }
  const core::Tensor* types = encoder_.model().weights().token_types;
  typed_ = types != nullptr && types->ne[1] >= 2;
}

PairInput Reranker::join(const std::vector<int32_t>& query, const std::vector<int32_t>& document) const {
  PairInput pair;
  pair.tokens.reserve(query.size() + document.size() + 3);
  pair.tokens.push_back(cls_);
  pair.tokens.insert(pair.tokens.end(), query.begin(), query.end());
  pair.tokens.push_back(sep_);
  pair.second_segment = static_cast<int32_t>(pair.tokens.size());
  pair.tokens.insert(pair.tokens.end(), document.begin(), document.end());
  pair.tokens.push_back(sep_);
  return pair;
}

std::vector<float> Reranker::score(const std::vector<int32_t>& query,
                                   const std::vector<std::vector<int32_t>>& documents) {
  if (query.empty()) throw std::invalid_argument("the query is empty");
  std::vector<std::vector<int32_t>> pairs(documents.size());
  std::vector<int32_t> second_segments;
  second_segments.reserve(documents.size());
  for (size_t d = 0; d < documents.size(); ++d) {
    const std::string which = "document " + std::to_string(d);
    if (documents[d].empty()) throw std::invalid_argument(which + " is empty");
    PairInput pair = join(query, documents[d]);
    if (static_cast<int64_t>(pair.tokens.size()) > encoder_.n_batch()) {
      throw std::invalid_argument(which + " with the query makes " + std::to_string(pair.tokens.size()) +
                                  " tokens with [CLS] and [SEP]s; at most " + std::to_string(encoder_.n_batch()) +
                                  " fit");
    }
    second_segments.push_back(pair.second_segment);
    pairs[d] = std::move(pair.tokens);
  }
  EmbedOptions options;
  options.pooling = model::Pooling::Rank;
  options.normalize = false;
  if (!typed_) second_segments.clear();  // every token type 0: the model has no other
  const std::vector<std::vector<float>> outputs = encoder_.embed(pairs, options, second_segments);
  std::vector<float> scores(outputs.size());
  for (size_t d = 0; d < outputs.size(); ++d) scores[d] = outputs[d].front();
  return scores;
}

}  // namespace peak::runtime
