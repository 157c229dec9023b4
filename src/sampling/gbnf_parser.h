// Reads GBNF text into the tables of a Grammar (grammar.h): syntax, escapes,
// UTF-8 of the text, every rule used being defined, the root existing, and the
// bounds of grammar.h. What needs the whole grammar (left recursion, rules that
// can never finish) is checked on the tables by Grammar::parse.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sampling/grammar.h"

namespace peak::sampling {

// Throws GrammarError.
GrammarTables parse_gbnf(std::string_view text, std::string_view root);

// A GrammarError at a byte offset of `text`, with its line and column.
GrammarError grammar_error_at(std::string_view text, size_t offset, const std::string& message);

}  // namespace peak::sampling
