// The working state of the merge tokenizers (SPM and BPE): the text cut into runs of
// bytes, kept as a doubly linked list so that joining two neighbours is O(1).
#pragma once

#include <cstddef>
#include <vector>

namespace peak::tokenizer {

struct Symbol {
  size_t offset;  // bytes of the text
  size_t length;  // 0 once joined into its left neighbour
  int prev;       // -1 at the ends
  int next;
};

class SymbolChain {
 public:
  explicit SymbolChain(size_t capacity) { symbols_.reserve(capacity); }

  // Adds a run right after the last one.
  void append(size_t offset, size_t length) {
    const int index = static_cast<int>(symbols_.size());
    if (index > 0) symbols_.back().next = index;
    symbols_.push_back({offset, length, index - 1, -1});
  }

  size_t size() const { return symbols_.size(); }
  const Symbol& operator[](int index) const { return symbols_[static_cast<size_t>(index)]; }

  // Joins the run after `left` into it.
  void join_next(int left) {
    Symbol& l = symbols_[static_cast<size_t>(left)];
    Symbol& r = symbols_[static_cast<size_t>(l.next)];
    l.length += r.length;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols_[static_cast<size_t>(r.next)].prev = left;
  }

  // Calls f(index) for the runs left, in order.
  template <typename F>
  void for_each(F f) const {
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[static_cast<size_t>(i)].next) f(i);
  }

 private:
  std::vector<Symbol> symbols_;
};

}  // namespace peak::tokenizer
