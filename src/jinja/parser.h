// Turns tokens into the syntax tree, following Jinja2's grammar (operator
// precedence, filters and tests binding tighter than arithmetic, `a if b else c`,
// tuples without parentheses). Statements outside the subset chat templates use
// (include, import, extends, block, recursive loops, ...) are refused by name.
#pragma once

#include <string_view>

#include "jinja/ast.h"

namespace peak::jinja {

// Throws TemplateError naming the line (and column) of the problem. max_depth
// bounds the nesting of expressions and blocks.
Body parse_template(std::string_view source, int max_depth);

}  // namespace peak::jinja
