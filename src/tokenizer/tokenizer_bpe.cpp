#include "tokenizer/tokenizer_bpe.h"

#include <queue>
#include <string>

#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/symbol_chain.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

struct Bigram {
  int left;
  int right;
  int32_t rank;
  int32_t left_id;  // the pair when queued: a later change makes it stale
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

// The character of `word` (valid UTF-8) that holds the byte at `offset`.
std::string_view character_at(std::string_view word, size_t offset) {
  size_t start = offset;
  while (start > 0 && (static_cast<uint8_t>(word[start]) & 0xC0) == 0x80) --start;
  return word.substr(start, decode_utf8_char(word, start).length);
}

void merge_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out, std::string* unspelled) {
  if (vocab.flags().ignore_merges) {
    if (const int32_t id = vocab.find(byte_level_spelling(word)); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  // Every merge's sides and result are tokens (Vocab checks), so each symbol is a
  // token from the start (one byte) to the end; kNoToken only for a byte the
  // vocabulary lacks, which no merge can involve.
  SymbolChain symbols(word.size());
  std::vector<int32_t> ids(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    symbols.append(i, 1);
    ids[i] = vocab.byte_token(static_cast<uint8_t>(word[i]));
  }
  auto id_of = [&](int index) { return ids[static_cast<size_t>(index)]; };

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add_bigram = [&](int left, int right) {
    if (left < 0 || right < 0 || id_of(left) == kNoToken || id_of(right) == kNoToken) return;
    if (const Vocab::Merge* merge = vocab.find_merge(id_of(left), id_of(right))) {
      queue.push({left, right, merge->rank, id_of(left), id_of(right)});
    }
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add_bigram(static_cast<int>(i - 1), static_cast<int>(i));

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    if (symbols[bigram.left].length == 0 || symbols[bigram.right].length == 0 ||
        id_of(bigram.left) != bigram.left_id || id_of(bigram.right) != bigram.right_id) {
      continue;  // stale: one side has changed since the pair was queued
    }
    ids[static_cast<size_t>(bigram.left)] = vocab.find_merge(bigram.left_id, bigram.right_id)->result;
    symbols.join_next(bigram.left);
    try_add_bigram(symbols[bigram.left].prev, bigram.left);
    try_add_bigram(bigram.left, symbols[bigram.left].next);
  }

  symbols.for_each([&](int index) {
    if (id_of(index) != kNoToken) {
      out.push_back(id_of(index));
      return;
    }
    // A byte the vocabulary cannot spell: llama.cpp keeps whichever single bytes of
    // its spelling are tokens and drops the rest; so does peak, and tells.
    if (unspelled) add_character_once(*unspelled, character_at(word, symbols[index].offset));
    for (const char c : byte_level_spelling(word.substr(symbols[index].offset, symbols[index].length))) {
      if (const int32_t id = vocab.find(std::string_view(&c, 1)); id != kNoToken) out.push_back(id);
    }
  });
}

}  // namespace

void tokenize_bpe(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out, std::string* unspelled) {
  const std::vector<uint32_t> cpts = decode_utf8(text);
  const std::vector<size_t> word_lengths = pre_tokenize(vocab.pre_tokenizer(), cpts);
  std::string word;
  size_t begin = 0;
  for (const size_t length : word_lengths) {
    // Words are re-encoded from code points: ill-formed input became U+FFFD.
    word.clear();
    for (size_t i = begin; i < begin + length; ++i) append_utf8(word, cpts[i]);
    begin += length;
    merge_word(vocab, word, out, unspelled);
  }
}

}  // namespace peak::tokenizer
