// GBNF grammars (llama.cpp's syntax, its grammars/README.md "GBNF Guide"),
// compiled once into an immutable Grammar that any number of GrammarMatchers
// (grammar_matcher.h), on any threads, read at the same time.
//
// The compiled form: every rule is a run of elements in one array, its
// alternatives separated by kAltEnd and closed by kRuleEnd. An element either
// matches one code point (kCharSet: a sorted set of code point ranges) or calls
// a rule (kRule). Groups and repetitions become helper rules: `x*` is
// `h ::= x h | ""`, `x{2,4}` is `x x h1` with `h1 ::= x h2 | ""`,
// `h2 ::= x | ""`, so the compiled size grows with the counts written, never
// with their product. A position is an index into the element array.
//
// Grammar::parse refuses (GrammarError, with the line and column) what is not
// GBNF, a rule used but not defined, left recursion (a rule that can reach
// itself before matching a character, through nullable prefixes too) and text
// past the bounds below: grammars may come from untrusted requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace peak::sampling {

// Bounds on what Grammar::parse accepts.
inline constexpr size_t kGrammarMaxTextBytes = size_t{1} << 20;  // the GBNF text
inline constexpr size_t kGrammarMaxRules = size_t{1} << 16;      // named rules and helper rules
inline constexpr int kGrammarMaxNesting = 64;                    // parentheses inside parentheses
inline constexpr uint32_t kGrammarMaxRepetition = 4096;          // m and n of {m}, {m,}, {m,n}
inline constexpr size_t kGrammarMaxElements = size_t{1} << 20;   // compiled elements, repetitions expanded

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// A grammar that cannot be compiled. Lines and columns count from 1; columns
// count code points (a tab is one).
class GrammarError : public std::runtime_error {
 public:
  GrammarError(const std::string& message, int line, int column);
  const std::string& message() const { return message_; }  // without the position
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string message_;
  int line_;
  int column_;
};

enum class GrammarOp : uint8_t {
  kCharSet,  // matches one code point of char set `arg`
  kRule,     // matches rule `arg`
  kAltEnd,   // ends an alternative; the rule's next one follows
  kRuleEnd,  // ends the rule's last alternative
};

struct GrammarElement {
  GrammarOp op;
  uint32_t arg;
};

struct CodePointRange {
  uint32_t first;
  uint32_t last;  // inclusive
};

// What the parser hands over; Grammar keeps it read-only.
struct GrammarTables {
  std::vector<GrammarElement> elements;
  // Rule r's alternatives start at alternative_starts[alternative_begin[r] ..
  // alternative_begin[r + 1]) (rule count + 1 entries in alternative_begin).
  std::vector<uint32_t> alternative_starts;
  std::vector<uint32_t> alternative_begin;
  // Char set s is ranges[set_begin[s] .. set_begin[s + 1]): sorted, disjoint,
  // never empty, without surrogates (strict UTF-8 cannot carry them).
  std::vector<CodePointRange> ranges;
  std::vector<uint32_t> set_begin;
  std::vector<std::string> rule_names;  // helper rules: the text they came from, and their rule
  std::vector<size_t> rule_offsets;     // where each rule is written (byte offset in the text)
  uint32_t root = 0;
};

class Grammar {
 public:
  // Compiles GBNF text whose start rule is `root`. Throws GrammarError.
  static std::shared_ptr<const Grammar> parse(std::string_view text, std::string_view root = "root");
  // Grammars built from two others, whose rules they take whole (b's numbered
  // after a's) under a new start rule: the strings of either, or a string of a
  // followed by one of b. Throws std::length_error past the bounds above.
  static std::shared_ptr<const Grammar> either(const Grammar& a, const Grammar& b);
  static std::shared_ptr<const Grammar> then(const Grammar& a, const Grammar& b);
  // A string of `item`, then any number of (separator, item): `item (separator
  // item)*`. Throws std::invalid_argument when item matches the empty string
  // (the repetition could not tell its rounds apart), std::length_error as above.
  static std::shared_ptr<const Grammar> one_or_more(const Grammar& item, const Grammar& separator);

  uint32_t root() const { return tables_.root; }
  size_t rule_count() const { return tables_.alternative_begin.size() - 1; }
  size_t element_count() const { return tables_.elements.size(); }
  size_t char_set_count() const { return tables_.set_begin.size() - 1; }
  // Named rules by their name; helper rules by their text and rule: `"ab"* (in root)`.
  const std::string& rule_name(uint32_t rule) const { return tables_.rule_names[rule]; }

  const GrammarElement& element(uint32_t position) const { return tables_.elements[position]; }
  // Whether `position` ends an alternative (nothing more to match in it).
  bool ends_alternative(uint32_t position) const { return tables_.elements[position].op >= GrammarOp::kAltEnd; }
  // The first positions of rule's alternatives (an empty one starts at its end).
  const uint32_t* alternatives_begin(uint32_t rule) const;
  const uint32_t* alternatives_end(uint32_t rule) const;

  bool char_set_contains(uint32_t set, uint32_t code_point) const;
  // Whether the set holds any code point of [first, last].
  bool char_set_intersects(uint32_t set, uint32_t first, uint32_t last) const;

 private:
  explicit Grammar(GrammarTables tables) : tables_(std::move(tables)) {}
  // a's and b's rules, and a start rule of `alternatives`, each a list of
  // kFirst (a's start rule), kSecond (b's) and kItself (the new rule).
  enum Part : int { kFirst, kSecond, kItself };
  static std::shared_ptr<const Grammar> joined(const Grammar& a, const Grammar& b,
                                               const std::vector<std::vector<Part>>& alternatives,
                                               const std::string& name);

  GrammarTables tables_;
};

}  // namespace peak::sampling
