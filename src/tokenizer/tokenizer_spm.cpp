#include "tokenizer/tokenizer_spm.h"

#include <queue>
#include <string>

#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

// A run of text in a doubly linked list of runs; a run merged into its left
// neighbour keeps length 0.
struct Symbol {
  size_t offset;
  size_t length;
  int prev;
  int next;
};

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

void tokenize_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    // One symbol per character; an ill-formed sequence is a symbol of its own and
    // so ends up as byte tokens.
    const size_t length = decode_utf8_char(text, offset).length;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({offset, length, index - 1, offset + length == text.size() ? -1 : index + 1});
    offset += length;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add_bigram = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const size_t length = l.length + r.length;
    const int32_t id = vocab.find(text.substr(l.offset, length));
    if (id == kNoToken) return;
    queue.push({left, right, vocab.token(id).score, length});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    try_add_bigram(static_cast<int>(i - 1), static_cast<int>(i));
  }

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(bigram.left)];
    Symbol& right = symbols[static_cast<size_t>(bigram.right)];
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) {
      continue;  // one side was merged elsewhere since this pair was queued
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = bigram.left;
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& symbol = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(symbol.offset, symbol.length);
    const int32_t id = vocab.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    for (const char c : piece) {
      const int32_t byte_id = vocab.byte_token(static_cast<uint8_t>(c));
      if (byte_id == kNoToken) {
        throw TokenizerError("tokenizer: the vocabulary has neither a token for byte " +
                             std::to_string(static_cast<uint8_t>(c)) + " nor an unknown token");
      }
      out.push_back(byte_id);
    }
  }
}

}  // namespace peak::tokenizer
