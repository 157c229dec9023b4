// A vocabulary as a grammar reads it: each token's bytes as generation writes
// them into the text (the tokenizer's own pieces: SentencePiece's U+2581 as a
// space, <0xNN> byte tokens as their byte, byte-level BPE's characters as their
// bytes), which tokens end a generation, which are control tokens (with their
// text, e.g. "<|tool_call|>", written only when a sampler chain preserves them),
// and a byte trie over the text tokens, so that tokens sharing a prefix share
// the walk over it.
//
// Built once per vocabulary and then only read: any number of sampler chains on
// any threads share one.
//
// The trie is stored in preorder: node i's subtree is [i, subtree_end), its
// first child (when it has one) is i + 1, its next sibling subtree_end. The
// tokens spelled by the path to node i are trie_tokens()[tokens_begin of i ..
// tokens_begin of i + 1) (several tokens can have the same bytes). The root is
// implicit: the nodes of depth 1 are its children.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace peak::sampling {

class GrammarVocabulary {
 public:
  enum class Kind : uint8_t {
    kText,             // writes its bytes
    kEndOfGeneration,  // ends the text (EOS, end of turn ...): allowed only where the grammar can end
    // A control or unknown token: GBNF has no syntax to name one, so never
    // allowed, unless preserved: then read as its text, as a text token is.
    kControl,
    kEmpty,  // writes nothing (unused, or beyond the tokenizer's vocabulary): never allowed
  };
  struct Token {
    std::string bytes;
    Kind kind = Kind::kText;
  };
  struct TrieNode {
    uint32_t subtree_end;
    uint32_t tokens_begin;
    uint8_t byte;
  };

  // The tokenizer's tokens; ids from its vocabulary size up to n_vocab (a
  // model's output may have padding rows) are empty.
  static std::shared_ptr<const GrammarVocabulary> from_tokenizer(const tokenizer::Tokenizer& tokenizer,
                                                                 int32_t n_vocab);
  // Token id i is tokens[i]; a text token without bytes counts as empty. A
  // control token's bytes are its text (the tokenizer's piece with specials
  // rendered); an end of generation's and an empty token's are dropped.
  explicit GrammarVocabulary(std::vector<Token> tokens);

  int32_t size() const { return static_cast<int32_t>(kinds_.size()); }
  Kind kind(int32_t id) const { return kinds_[static_cast<size_t>(id)]; }
  // Throws std::invalid_argument naming the first token that cannot be
  // preserved: tokens must be in increasing order, each a control token with
  // text (a text token writes its text anyway, an end of generation ends it).
  void check_preserved(const std::vector<int32_t>& tokens) const;
  std::string_view bytes(int32_t id) const {
    const size_t i = static_cast<size_t>(id);
    return std::string_view(bytes_.data() + byte_begin_[i], byte_begin_[i + 1] - byte_begin_[i]);
  }
  const std::vector<int32_t>& end_of_generation_tokens() const { return end_of_generation_; }
  const std::vector<TrieNode>& trie() const { return trie_; }  // one sentinel after the last node
  size_t trie_node_count() const { return trie_.size() - 1; }
  const int32_t* trie_tokens() const { return trie_tokens_.data(); }
  size_t max_token_bytes() const { return max_token_bytes_; }

 private:
  void build_trie();

  std::vector<Kind> kinds_;
  std::string bytes_;                 // every token's bytes, one after another
  std::vector<uint32_t> byte_begin_;  // token i's bytes: [byte_begin_[i], byte_begin_[i + 1])
  std::vector<int32_t> end_of_generation_;
  std::vector<TrieNode> trie_;
  std::vector<int32_t> trie_tokens_;
  size_t max_token_bytes_ = 0;
};

}  // namespace peak::sampling
