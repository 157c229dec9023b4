// Runs a parsed template: scopes as Jinja2 keeps them (a loop iteration, a
// macro call and a block body each get their own; `if` does not), the output
// buffer, and the limits of RenderOptions, which every step is counted against.
// Filters, tests and methods (builtins.h) call back into it.
#pragma once

#include <string>

#include "jinja/ast.h"
#include "jinja/template.h"
#include "jinja/value.h"

namespace peak::jinja {

class Interpreter {
 public:
  Interpreter(const RenderOptions& options, const Value& context);
  std::string render(const Body& body);

  // One step of work; throws TemplateError when the render has used them all.
  void step(uint64_t n = 1);
  // Before building a string of `bytes` (or a list of as many bytes of values):
  // counts the work and refuses anything longer than the output limit.
  void reserve(size_t bytes);
  // Before reading all of v (a string's bytes, a list's or dict's entries):
  // counts the work.
  void touch(const Value& v);
  Value call(const Value& callee, CallArgs& args);
  Value attribute(const Value& object, const std::string& name);
  std::string strftime_now(const std::string& format) const;
  size_t max_bytes() const { return options_.limits.max_output_bytes; }

 private:
  struct Scope {
    Dict vars;
    const Scope* parent = nullptr;
  };
  enum class Flow { Normal, Break, Continue };
  class Nesting;

  Flow run(const Body& body, Scope& scope);
  Flow run(const Stmt& s, Scope& scope);
  Flow run_for(const Stmt& s, Scope& scope);
  void run_set(const Stmt& s, Scope& scope);
  std::string capture(const Body& body, Scope& scope);
  void write(const std::string& text);
  Value make_macro(const Stmt& s, Scope& scope, const std::string& name);
  Value call_macro(const Stmt& s, const Scope& parent, CallArgs& args);
  void assign(const Expr& target, Value value, Scope& scope);

  Value eval(const Expr& e, Scope& scope);
  Value eval_node(const Expr& e, Scope& scope);
  Value lookup(const std::string& name, const Scope& scope) const;
  CallArgs arguments(const Expr& e, Scope& scope, size_t first);
  Value filter(const Expr& e, Value subject, Scope& scope);
  Value filter_block(const Expr& chain, Value subject, Scope& scope);

  const RenderOptions& options_;
  const Value& context_;
  Dict globals_;
  Scope* top_ = nullptr;  // the template's own variables (set at the top level)
  std::string* out_ = nullptr;
  uint64_t steps_ = 0;
  int depth_ = 0;
};

}  // namespace peak::jinja
