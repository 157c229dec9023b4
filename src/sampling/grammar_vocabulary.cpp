#include "sampling/grammar_vocabulary.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace peak::sampling {

namespace {

GrammarVocabulary::Kind kind_of(const tokenizer::Tokenizer& tok, int32_t id) {
  if (tok.is_eog(id)) return GrammarVocabulary::Kind::kEndOfGeneration;
  const uint32_t attr = tok.vocab().token(id).attr;
  if ((attr & (tokenizer::kAttrControl | tokenizer::kAttrUnknown)) != 0) return GrammarVocabulary::Kind::kControl;
  return GrammarVocabulary::Kind::kText;
}

}  // namespace

std::shared_ptr<const GrammarVocabulary> GrammarVocabulary::from_tokenizer(const tokenizer::Tokenizer& tok,
                                                                           int32_t n_vocab) {
  std::vector<Token> tokens(static_cast<size_t>(std::max(n_vocab, 0)));
  const int32_t known = std::min(n_vocab, tok.n_vocab());
  for (int32_t id = 0; id < known; ++id) {
    Token& token = tokens[static_cast<size_t>(id)];
    token.kind = kind_of(tok, id);
    // What the generator writes for the token (a control token only when preserved).
    if (token.kind == Kind::kText || token.kind == Kind::kControl) {
      token.bytes = tok.token_to_piece(id, /*render_special=*/token.kind == Kind::kControl);
    }
  }
  for (int32_t id = known; id < n_vocab; ++id) tokens[static_cast<size_t>(id)].kind = Kind::kEmpty;
  return std::make_shared<const GrammarVocabulary>(std::move(tokens));
}

GrammarVocabulary::GrammarVocabulary(std::vector<Token> tokens) {
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    throw std::invalid_argument("sampling: a vocabulary of more than INT32_MAX tokens");
  }
  kinds_.reserve(tokens.size());
  byte_begin_.reserve(tokens.size() + 1);
  byte_begin_.push_back(0);
  for (size_t i = 0; i < tokens.size(); ++i) {
    Token& token = tokens[i];
    if (token.kind == Kind::kText && token.bytes.empty()) token.kind = Kind::kEmpty;
    if (token.kind == Kind::kText || token.kind == Kind::kControl) bytes_ += token.bytes;
    if (bytes_.size() > UINT32_MAX) throw std::invalid_argument("sampling: a vocabulary of more than 4 GiB of text");
    byte_begin_.push_back(static_cast<uint32_t>(bytes_.size()));
    kinds_.push_back(token.kind);
    if (token.kind == Kind::kEndOfGeneration) end_of_generation_.push_back(static_cast<int32_t>(i));
    max_token_bytes_ = std::max(max_token_bytes_, bytes(static_cast<int32_t>(i)).size());
  }
  build_trie();
}

void GrammarVocabulary::check_preserved(const std::vector<int32_t>& tokens) const {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t id = tokens[i];
    const std::string name = "sampling: preserved token " + std::to_string(id);
    if (i > 0 && id <= tokens[i - 1]) {
      throw std::invalid_argument(name + (id == tokens[i - 1] ? " is listed twice" : " comes after a greater id") +
                                  " (preserved tokens are given in increasing order)");
    }
    if (id < 0 || id >= size()) {
      throw std::invalid_argument(name + " is outside the vocabulary of " + std::to_string(size()) + " tokens");
    }
    switch (kind(id)) {
      case Kind::kControl:
        if (!bytes(id).empty()) break;
        throw std::invalid_argument(name + " is a control token without text: it has nothing to write");
      case Kind::kText:
        throw std::invalid_argument(name +
                                    " is a text token: only a control token can be preserved (a text "
                                    "token's text is always written)");
      case Kind::kEndOfGeneration:
        throw std::invalid_argument(name + " ends the generation: only a control token can be preserved");
      case Kind::kEmpty:
        throw std::invalid_argument(name + " writes nothing (unused, or beyond the tokenizer's vocabulary)");
    }
  }
}

// Text tokens in byte order: each one shares its longest common prefix with
// the one before it, so the nodes it adds follow the previous ones in
// preorder, and the tokens of a node are added right after it.
void GrammarVocabulary::build_trie() {
  std::vector<int32_t> text;
  for (int32_t id = 0; id < size(); ++id) {
    if (kind(id) == Kind::kText) text.push_back(id);
  }
  std::sort(text.begin(), text.end(), [this](int32_t a, int32_t b) {
    const std::string_view x = bytes(a), y = bytes(b);
    return x < y || (x == y && a < b);
  });
  std::vector<uint32_t> path;  // the nodes from depth 1 down to the previous token's
  std::string_view previous;
  for (const int32_t id : text) {
    const std::string_view spelling = bytes(id);
    size_t common = 0;
    while (common < previous.size() && common < spelling.size() && previous[common] == spelling[common]) ++common;
    for (size_t depth = path.size(); depth > common; --depth)
      trie_[path[depth - 1]].subtree_end = static_cast<uint32_t>(trie_.size());
    path.resize(common);
    for (size_t depth = common; depth < spelling.size(); ++depth) {
      path.push_back(static_cast<uint32_t>(trie_.size()));
      trie_.push_back(TrieNode{0, static_cast<uint32_t>(trie_tokens_.size()), static_cast<uint8_t>(spelling[depth])});
    }
    trie_tokens_.push_back(id);
    previous = spelling;
  }
  for (const uint32_t node : path) trie_[node].subtree_end = static_cast<uint32_t>(trie_.size());
  trie_.push_back(TrieNode{static_cast<uint32_t>(trie_.size() + 1), static_cast<uint32_t>(trie_tokens_.size()), 0});
}

}  // namespace peak::sampling
