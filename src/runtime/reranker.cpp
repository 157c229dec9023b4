#include "runtime/reranker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tokenizer/vocab.h"

namespace peak::runtime {

namespace {

constexpr std::string_view kQuerySlot = "{query}";
constexpr std::string_view kDocumentSlot = "{document}";

Encoder& require_reranker(Encoder& encoder) {
  const model::HParams& hp = encoder.model().hparams();
  if (hp.pooling != model::Pooling::Rank) {
    throw std::invalid_argument(std::string("the model is not a reranker: its pooling is ") +
                                model::pooling_name(hp.pooling) +
                                ", and a reranker's is rank (pooling_type 4, with a classification head)");
  }
  return encoder;
}

// A decoder reranker's prompt: the file's named template "rerank".
std::string rerank_prompt(const model::Model& model) {
  const std::string key = "tokenizer.chat_template.rerank";
  const std::string prompt = model.named_chat_template("rerank");
  if (prompt.empty()) {
    throw std::invalid_argument(std::string("the ") + model::arch_name(model.hparams().arch) +
                                " reranker's file lacks '" + key + "', the prompt it judges a query and a document in");
  }
  if (prompt.find(kQuerySlot) == std::string::npos || prompt.find(kDocumentSlot) == std::string::npos) {
    throw std::invalid_argument("'" + key + "' has no {query} or no {document} to fill in");
  }
  return prompt;
}

}  // namespace

Reranker::Reranker(Encoder& encoder) : encoder_(require_reranker(encoder)) {
  const model::Model& model = encoder_.model();
  if (!model.hparams().spec().encoder) {
    prompt_ = rerank_prompt(model);
    return;
  }
  const tokenizer::SpecialTokens& special = model.tokenizer().vocab().special();
  cls_ = special.bos;
  sep_ = special.eos != tokenizer::kNoToken ? special.eos : special.sep;
  if (cls_ == tokenizer::kNoToken || sep_ == tokenizer::kNoToken) {
    throw std::invalid_argument(
        "the reranker's vocabulary lacks the [CLS] (BOS) or [SEP] (EOS or SEP) token a text pair is joined with");
  }
  const core::Tensor* types = model.weights().token_types;
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

PairInput Reranker::fill(std::string_view query, std::string_view document) const {
  // One pass over the template, so that a query spelling "{document}" stays as it is.
  std::string text;
  std::vector<tokenizer::TextRange> filled;
  for (size_t pos = 0; pos < prompt_.size();) {
    const size_t at_query = prompt_.find(kQuerySlot, pos);
    const size_t at_document = prompt_.find(kDocumentSlot, pos);
    const size_t at = std::min(at_query, at_document);
    if (at == std::string::npos) {
      text.append(prompt_, pos, std::string::npos);
      break;
    }
    text.append(prompt_, pos, at - pos);
    const bool is_query = at == at_query;
    const std::string_view value = is_query ? query : document;
    filled.push_back({text.size(), value.size()});
    text.append(value);
    pos = at + (is_query ? kQuerySlot : kDocumentSlot).size();
  }
  PairInput pair;
  pair.tokens = encoder_.model().tokenizer().encode_filled(text, filled);
  pair.second_segment = static_cast<int32_t>(pair.tokens.size());
  return pair;
}

std::vector<float> Reranker::score(const std::vector<PairInput>& pairs) {
  std::vector<std::vector<int32_t>> sequences(pairs.size());
  std::vector<int32_t> second_segments;
  second_segments.reserve(pairs.size());
  for (size_t d = 0; d < pairs.size(); ++d) {
    const size_t n = pairs[d].tokens.size();
    if (static_cast<int64_t>(n) > encoder_.n_batch()) {
      throw std::invalid_argument("document " + std::to_string(d) + " with the query makes " + std::to_string(n) +
                                  (prompted() ? " tokens in the model's prompt" : " tokens with [CLS] and [SEP]s") +
                                  "; at most " + std::to_string(encoder_.n_batch()) + " fit");
    }
    sequences[d] = pairs[d].tokens;
    second_segments.push_back(pairs[d].second_segment);
  }
  EmbedOptions options;
  options.pooling = model::Pooling::Rank;
  options.normalize = false;
  if (!typed_) second_segments.clear();  // every token type 0: the model has no other
  const std::vector<std::vector<float>> outputs = encoder_.embed(sequences, options, second_segments);
  const auto relevance = static_cast<size_t>(encoder_.model().hparams().relevance_output);
  std::vector<float> scores(outputs.size());
  for (size_t d = 0; d < outputs.size(); ++d) {
    const std::vector<float>& logits = outputs[d];
    if (!prompted()) {
      scores[d] = logits[relevance];
      continue;
    }
    // softmax(logits)[relevance], in double: exp(l_i - max) / sum exp(l_j - max).
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (const float l : logits) sum += std::exp(static_cast<double>(l) - top);
    scores[d] = static_cast<float>(std::exp(static_cast<double>(logits[relevance]) - top) / sum);
  }
  return scores;
}

std::vector<float> Reranker::score(const std::vector<int32_t>& query,
                                   const std::vector<std::vector<int32_t>>& documents) {
  if (prompted()) throw std::invalid_argument("a prompted reranker scores texts (fill), not token ids");
  if (query.empty()) throw std::invalid_argument("the query is empty");
  std::vector<PairInput> pairs;
  pairs.reserve(documents.size());
  for (size_t d = 0; d < documents.size(); ++d) {
    if (documents[d].empty()) throw std::invalid_argument("document " + std::to_string(d) + " is empty");
    pairs.push_back(join(query, documents[d]));
  }
  return score(pairs);
}

}  // namespace peak::runtime
