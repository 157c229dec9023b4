// The `pattern` keyword of JSON Schema as GBNF: the JSON string literals
// (quotes included) whose text an ECMA-262 regular expression matches
// somewhere. What is supported and refused is listed in json_schema.h. A
// character the pattern spells out is written as peak::json writes it; the
// text before an unanchored start or after an unanchored end is any string
// text (the rule named by `any_char`).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace peak::sampling {

// What the pattern cannot be (the message names the construct).
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PatternGrammar {
  std::string expression;   // GBNF: a sequence of items, ready to be a rule's body
  uint64_t repetition = 0;  // the counts of its {m,n} repetitions added up
};

// Throws PatternError; also for a count above kSchemaMaxRepetition.
PatternGrammar pattern_to_gbnf(std::string_view pattern, std::string_view any_char);

}  // namespace peak::sampling
