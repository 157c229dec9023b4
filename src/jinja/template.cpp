#include "jinja/template.h"

#include "jinja/interpreter.h"
#include "jinja/parser.h"

namespace peak::jinja {

Template Template::parse(std::string_view source, const Limits& limits) {
  return Template(std::make_shared<const Body>(parse_template(source, limits.max_depth)));
}

std::string Template::render(const Value& context, const RenderOptions& options) const {
  Interpreter interpreter(options, context);
  return interpreter.render(*body_);
}

}  // namespace peak::jinja
