#include "tokenizer/tokenizer_spm.h"

#include <queue>
#include <string>

#include "tokenizer/symbol_chain.h"
#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

struct Bigram {
  int left;
  int right;
  float score;
  size_t length;  // bytes of left + right when queued: a later change makes it stale
};

// Highest score first; on a tie, the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void tokenize_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out, std::string* unspelled) {
  SymbolChain symbols(text.size());
  for (size_t offset = 0; offset < text.size();) {
    // One symbol per character; an ill-formed sequence is a symbol of its own and
    // so ends up as byte tokens.
    const size_t length = decode_utf8_char(text, offset).length;
    symbols.append(offset, length);
    offset += length;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add_bigram = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[left].length + symbols[right].length;
    const int32_t id = vocab.find(text.substr(symbols[left].offset, length));
    if (id == kNoToken) return;
    queue.push({left, right, vocab.token(id).score, length});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    try_add_bigram(static_cast<int>(i - 1), static_cast<int>(i));
  }

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    const Symbol& left = symbols[bigram.left];
    const Symbol& right = symbols[bigram.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) {
      continue;  // one side was merged elsewhere since this pair was queued
    }
    symbols.join_next(bigram.left);
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }

  symbols.for_each([&](int index) {
    const std::string_view piece = text.substr(symbols[index].offset, symbols[index].length);
    const int32_t id = vocab.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      return;
    }
    for (const char c : piece) {
      const int32_t byte_id = vocab.byte_token(static_cast<uint8_t>(c));
      if (byte_id == kNoToken) {
        throw TokenizerError("tokenizer: the vocabulary has neither a token for byte " +
                             std::to_string(static_cast<uint8_t>(c)) + " nor an unknown token");
      }
      // The text's own space, not the marker it was escaped to.
      if (unspelled && byte_id == vocab.special().unk) {
        add_character_once(*unspelled, piece == kSpaceMarker ? std::string_view(" ") : piece);
      }
      out.push_back(byte_id);
    }
  });
}

}  // namespace peak::tokenizer
