#include "tokenizer/tokenizer_bpe.h"

#include <queue>
#include <string>

#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

// Every merge's sides and result are tokens (Vocab checks), so a symbol is a token id
// from the start (one byte) to the end; kNoToken only for a byte the vocabulary lacks,
// which no merge can involve.
struct Symbol {
  int32_t id;
  std::string_view bytes;  // the word bytes it covers (for bytes without a token)
  int prev;
  int next;
};

struct Bigram {
  int left;
  int right;
  int32_t rank;
  int32_t left_id;   // the pair when queued: a later change makes it stale
  int32_t right_id;
};

// Lowest rank first; on a tie, the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

std::string byte_level_spelling(std::string_view bytes) {
  std::string spelled;
  for (const char c : bytes) append_utf8(spelled, byte_to_codepoint(static_cast<uint8_t>(c)));
  return spelled;
}

void merge_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) {
  if (vocab.flags().ignore_merges) {
    if (const int32_t id = vocab.find(byte_level_spelling(word)); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    const int index = static_cast<int>(i);
    symbols.push_back({vocab.byte_token(static_cast<uint8_t>(word[i])), word.substr(i, 1), index - 1,
                       i + 1 == word.size() ? -1 : index + 1});
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add_bigram = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int32_t left_id = symbols[static_cast<size_t>(left)].id;
    const int32_t right_id = symbols[static_cast<size_t>(right)].id;
    if (left_id == kNoToken || right_id == kNoToken) return;
    if (const Vocab::Merge* merge = vocab.find_merge(left_id, right_id)) {
      queue.push({left, right, merge->rank, left_id, right_id});
    }
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add_bigram(static_cast<int>(i - 1), static_cast<int>(i));

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(bigram.left)];
    Symbol& right = symbols[static_cast<size_t>(bigram.right)];
    if (left.bytes.empty() || right.bytes.empty() || left.id != bigram.left_id || right.id != bigram.right_id ||
        left.next != bigram.right) {
      continue;  // stale: one side has changed since the pair was queued
    }
    left.id = vocab.find_merge(left.id, right.id)->result;
    left.bytes = std::string_view(left.bytes.data(), left.bytes.size() + right.bytes.size());
    right.bytes = std::string_view();
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = bigram.left;
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& symbol = symbols[static_cast<size_t>(i)];
    if (symbol.id != kNoToken) {
      out.push_back(symbol.id);
      continue;
    }
    // A byte the vocabulary cannot spell: llama.cpp keeps whichever single bytes of
    // its spelling are tokens and drops the rest; so does peak.
    for (const char c : byte_level_spelling(symbol.bytes)) {
      if (const int32_t id = vocab.find(std::string_view(&c, 1)); id != kNoToken) out.push_back(id);
    }
  }
}

}  // namespace

void tokenize_bpe(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  const std::vector<uint32_t> cpts = decode_utf8(text);
  const std::vector<size_t> word_lengths = pre_tokenize(vocab.pre_tokenizer(), cpts);
  std::string word;
  size_t begin = 0;
  for (const size_t length : word_lengths) {
    // Words are re-encoded from code points: ill-formed input became U+FFFD.
    word.clear();
    for (size_t i = begin; i < begin + length; ++i) append_utf8(word, cpts[i]);
    begin += length;
    merge_word(vocab, word, out);
  }
}

}  // namespace peak::tokenizer
