// Writing GBNF text (llama.cpp's syntax, as the grammar compiler reads it):
// literals, character classes and repetition counts, escaped so that any bytes
// or code points come out as exactly what they mean; and sets of code points to
// write as classes. The JSON Schema converter (json_schema.h) builds its
// grammars from these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/grammar.h"

namespace peak::sampling {

inline constexpr uint32_t kUnboundedCount = UINT32_MAX;  // no maximum in a repetition

// A set of code points as sorted, disjoint, non-adjacent ranges.
class CodePointSet {
 public:
  CodePointSet() = default;
  CodePointSet(std::initializer_list<CodePointRange> spans);

  void add(uint32_t first, uint32_t last);
  void add(const CodePointSet& other);
  CodePointSet complement() const;
  CodePointSet intersect(const CodePointSet& other) const;
  bool contains(uint32_t code_point) const;
  bool empty() const { return spans_.empty(); }
  const std::vector<CodePointRange>& spans() const { return spans_; }

 private:
  std::vector<CodePointRange> spans_;
};

// `bytes` (UTF-8 text or not) as a GBNF string literal, quotes included:
// `"` and `\` escaped, \n \r \t as such, other control bytes as \xHH.
std::string gbnf_literal(std::string_view bytes);

// A non-empty set as a character class: "[a-z_]", or "[^...]" when the
// complement takes no more spans (and is not empty). Printable ASCII is written as itself (\ ] - [ "
// escaped, ^ as \x5E), other code points as \xHH, \uHHHH or \UHHHHHHHH.
std::string gbnf_char_class(const CodePointSet& set);

// The suffix that repeats an item min to max times (max may be
// kUnboundedCount): "" for exactly once, "?", "*", "+", "{m}", "{m,}", "{m,n}".
// Repeating 0 to 0 times is the caller's to leave out.
std::string gbnf_repetition(uint32_t min, uint32_t max);

}  // namespace peak::sampling
