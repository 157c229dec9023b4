#include "jinja/interpreter.h"

#include <ctime>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/operators.h"

namespace peak::jinja {

// One level of recursion (a statement, an expression or a macro call) for as
// long as it lives.
class Interpreter::Nesting {
 public:
  explicit Nesting(Interpreter& in) : in_(in) {
    if (++in_.depth_ > in_.options_.limits.max_depth) {
      --in_.depth_;
      throw TemplateError("recursion deeper than " + std::to_string(in_.options_.limits.max_depth) + " levels");
    }
  }
  ~Nesting() { --in_.depth_; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;

 private:
  Interpreter& in_;
};

namespace {

// Adds the line of the node being run to an error that does not name one yet.
[[noreturn]] void rethrow_at(int line) {
  try {
    throw;
  } catch (const TemplateRaised&) {
    throw;
  } catch (const TemplateError& e) {
    if (e.line() > 0 || line <= 0) throw;
    throw TemplateError(e.message(), line);
  }
}

}  // namespace

Interpreter::Interpreter(const RenderOptions& options, const Value& context)
    : options_(options), context_(context), globals_(make_globals()) {}

std::string Interpreter::render(const Body& body) {
  if (!context_.is_dict()) throw TemplateError("the render context must be a dict");
  Scope top;
  top_ = &top;
  std::string out;
  out_ = &out;
  run(body, top);
  return out;
}

void Interpreter::step(uint64_t n) {
  steps_ += n;
  if (steps_ > options_.limits.max_steps) {
    throw TemplateError("the template ran more than " + std::to_string(options_.limits.max_steps) + " steps");
  }
}

void Interpreter::reserve(size_t bytes) {
  if (bytes > options_.limits.max_output_bytes) {
    throw TemplateError("a value of " + std::to_string(bytes) + " bytes exceeds the output limit of " +
                        std::to_string(options_.limits.max_output_bytes));
  }
  step(bytes / 64);
}

void Interpreter::touch(const Value& v) {
  if (v.is_string()) step(v.as_string().size() / 64);
  if (v.is_list()) step(v.items().size() / 8);
  if (v.is_dict()) step(v.as_dict().size() / 8);
}

std::string Interpreter::strftime_now(const std::string& format) const {
  if (options_.strftime_now) return options_.strftime_now(format);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[256];
  // strftime reads no arguments: any format text is safe.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &tm);
#pragma GCC diagnostic pop
  return std::string(buf, n);
}

void Interpreter::write(const std::string& text) {
  step(text.size() / 64);
  out_->append(text);
  if (out_->size() > options_.limits.max_output_bytes) {
    throw TemplateError("the output exceeds " + std::to_string(options_.limits.max_output_bytes) + " bytes");
  }
}

std::string Interpreter::capture(const Body& body, Scope& scope) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  try {
    Scope inner;
    inner.parent = &scope;
    run(body, inner);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buffer;
}

Interpreter::Flow Interpreter::run(const Body& body, Scope& scope) {
  for (const StmtPtr& s : body) {
    const Flow flow = run(*s, scope);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::run(const Stmt& s, Scope& scope) {
  Nesting nesting(*this);
  try {
    switch (s.kind) {
      case Stmt::Kind::Text: write(s.text); break;
      case Stmt::Kind::Print: write(eval(*s.expr, scope).str(max_bytes())); break;
      case Stmt::Kind::If: {
        // An If alone in an else body is an elif: walked in a loop, not by recursion.
        const Stmt* branch = &s;
        while (!eval(*branch->expr, scope).truthy()) {
          const Body& otherwise = branch->else_body;
          if (otherwise.size() != 1 || otherwise[0]->kind != Stmt::Kind::If) return run(otherwise, scope);
          branch = otherwise[0].get();
        }
        return run(branch->body, scope);
      }
      case Stmt::Kind::For: return run_for(s, scope);
      case Stmt::Kind::Set: assign(*s.target, eval(*s.expr, scope), scope); break;
      case Stmt::Kind::SetBlock: {
        Value value(capture(s.body, scope));
        if (s.expr) value = filter_block(*s.expr, std::move(value), scope);
        assign(*s.target, std::move(value), scope);
        break;
      }
      case Stmt::Kind::Macro: scope.vars.set(s.name, make_macro(s, scope, s.name)); break;
      case Stmt::Kind::CallBlock: {
        const Expr& call_expr = *s.expr;
        Value callee = eval(*call_expr.children[0], scope);
        CallArgs args = arguments(call_expr, scope, 1);
        args.keywords.emplace_back("caller", make_macro(s, scope, "caller"));
        write(call(callee, args).str(max_bytes()));
        break;
      }
      case Stmt::Kind::FilterBlock: write(filter_block(*s.expr, Value(capture(s.body, scope)), scope).str(max_bytes()));
        break;
      case Stmt::Kind::With: {
        Scope inner;
        inner.parent = &scope;
        for (size_t i = 0; i < s.params.size(); ++i) inner.vars.set(s.params[i], eval(*s.defaults[i], scope));
        run(s.body, inner);
        break;
      }
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
    }
  } catch (const TemplateError&) {
    rethrow_at(s.line);
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::run_for(const Stmt& s, Scope& scope) {
  const Value iterable = eval(*s.expr, scope);
  touch(iterable);
  if (iterable.is_string()) reserve(iterable.as_string().size() * sizeof(Value));
  std::vector<Value> items = iterate(iterable);
  if (s.condition) {
    // The loop filter runs first: loop.length and loop.last count what passes it.
    std::vector<Value> kept;
    for (Value& item : items) {
      step();
      Scope probe;
      probe.parent = &scope;
      assign(*s.target, item, probe);
      if (eval(*s.condition, probe).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  // One scope and one loop object serve every iteration: each starts with only
  // the loop variables, and the loop's attributes are updated in place.
  const auto n = static_cast<int64_t>(items.size());
  auto index = std::make_shared<int64_t>(0);
  Value loop = Value::object("LoopContext");
  Dict& attributes = loop.as_object().attributes;
  const char* const names[] = {"index", "index0", "revindex", "revindex0", "first", "last", "previtem", "nextitem"};
  for (const char* name : names) attributes.set(name, Value());
  attributes.set("length", Value(n));
  attributes.set("depth", Value(1));
  attributes.set("depth0", Value(0));
  attributes.set("cycle", Value::function("cycle", [index](Interpreter&, CallArgs& args) {
    if (args.positional.empty()) throw TemplateError("no items for cycling given");
    return args.positional[static_cast<size_t>(*index) % args.positional.size()];
  }));
  Value* fields[8];
  for (size_t k = 0; k < 8; ++k) fields[k] = attributes.find(names[k]);
  Scope inner;
  inner.parent = &scope;
  for (int64_t i = 0; i < n; ++i) {
    step();
    *index = i;
    *fields[0] = Value(i + 1);
    *fields[1] = Value(i);
    *fields[2] = Value(n - i);
    *fields[3] = Value(n - i - 1);
    *fields[4] = Value(i == 0);
    *fields[5] = Value(i == n - 1);
    *fields[6] = i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
    *fields[7] = i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
    inner.vars.clear();
    assign(*s.target, items[static_cast<size_t>(i)], inner);
    inner.vars.set("loop", loop);
    if (run(s.body, inner) == Flow::Break) break;
  }
  if (n == 0 && !s.else_body.empty()) {
    inner.vars.clear();
    run(s.else_body, inner);
  }
  return Flow::Normal;
}

void Interpreter::assign(const Expr& target, Value value, Scope& scope) {
  if (target.kind == Expr::Kind::Name) {
    scope.vars.set(target.name, std::move(value));
  } else if (target.kind == Expr::Kind::Tuple) {
    const std::vector<Value> parts = iterate(value);
    if (parts.size() != target.children.size()) {
      throw TemplateError(parts.size() > target.children.size() ? "too many values to unpack"
                                                                 : "not enough values to unpack");
    }
    for (size_t i = 0; i < parts.size(); ++i) assign(*target.children[i], parts[i], scope);
  } else {
    // {% set ns.attribute = value %}
    Value object = lookup(target.children[0]->name, scope);
    if (!object.is_object() || object.as_object().type_name != "Namespace") {
      throw TemplateError("cannot assign attribute on non-namespace object");
    }
    object.set(target.name, std::move(value));
  }
}

// A macro (or the body of a call block, as caller) as a function value. A macro
// defined inside a loop or another macro keeps a copy of the variables it can
// see there; the template's own variables are read when it is called.
Value Interpreter::make_macro(const Stmt& s, Scope& scope, const std::string& name) {
  std::shared_ptr<Scope> closure;
  if (&scope != top_) {
    closure = std::make_shared<Scope>();
    closure->parent = top_;
    for (const Scope* level = &scope; level && level != top_; level = level->parent) {
      for (const auto& [key, value] : level->vars.entries()) {
        if (!closure->vars.find_key(key)) closure->vars.set(key, value);
      }
    }
  }
  const Stmt* definition = &s;
  return Value::function(name, [definition, closure](Interpreter& in, CallArgs& args) {
    return in.call_macro(*definition, closure ? *closure : *in.top_, args);
  });
}

Value Interpreter::call_macro(const Stmt& s, const Scope& parent, CallArgs& args) {
  Nesting nesting(*this);
  Scope scope;
  scope.parent = &parent;
  const size_t n = s.params.size();
  const size_t first_default = n - s.defaults.size();
  std::vector<bool> bound(n, false);
  std::vector<Value> varargs;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < n) {
      scope.vars.set(s.params[i], args.positional[i]);
      bound[i] = true;
    } else {
      varargs.push_back(args.positional[i]);
    }
  }
  Value kwargs = Value::dict();
  for (auto& [key, value] : args.keywords) {
    size_t i = 0;
    while (i < n && s.params[i] != key) ++i;
    if (i < n) {
      if (bound[i]) throw TemplateError("macro '" + s.name + "' got multiple values for argument '" + key + "'");
      scope.vars.set(key, value);
      bound[i] = true;
    } else if (key == "caller") {
      scope.vars.set(key, value);
    } else {
      kwargs.set(key, value);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (bound[i]) continue;
    // Defaults are evaluated at the call, where they see the parameters before them.
    scope.vars.set(s.params[i], i >= first_default ? eval(*s.defaults[i - first_default], scope)
                                                   : Value::undefined("parameter '" + s.params[i] + "' was not provided"));
  }
  scope.vars.set("varargs", Value::tuple(std::move(varargs)));
  scope.vars.set("kwargs", std::move(kwargs));
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  try {
    run(s.body, scope);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return Value(std::move(buffer));
}

Value Interpreter::lookup(const std::string& name, const Scope& scope) const {
  for (const Scope* level = &scope; level; level = level->parent) {
    if (const Value* v = level->vars.find(name)) return *v;
  }
  if (const Value* v = context_.as_dict().find(name)) return *v;
  if (const Value* v = globals_.find(name)) return *v;
  return Value::undefined("'" + name + "' is undefined");
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_function()) throw TemplateError(std::string("'") + callee.type_name() + "' object is not callable");
  return callee.as_function().call(*this, args);
}

Value Interpreter::attribute(const Value& object, const std::string& name) {
  switch (object.kind()) {
    case Value::Kind::Undefined: fail_undefined(object);
    case Value::Kind::Dict: {
      // Python finds the dict's methods before its keys.
      Value m = method(object, name);
      if (!m.is_undefined()) return m;
      if (const Value* v = object.as_dict().find(name)) return *v;
      return Value::undefined("'dict object' has no attribute " + quoted(name));
    }
    case Value::Kind::Object:
      if (const Value* v = object.as_object().attributes.find(name)) return *v;
      return Value::undefined("'" + object.as_object().type_name + " object' has no attribute " + quoted(name));
    case Value::Kind::String:
    case Value::Kind::List: return method(object, name);
    default: return Value::undefined(std::string("'") + object.type_name() + " object' has no attribute " + quoted(name));
  }
}

CallArgs Interpreter::arguments(const Expr& e, Scope& scope, size_t first) {
  CallArgs args;
  for (size_t i = first; i < e.children.size(); ++i) args.positional.push_back(eval(*e.children[i], scope));
  for (const auto& [key, value] : e.keywords) args.keywords.emplace_back(key, eval(*value, scope));
  return args;
}

// The filter of node e (its own, not those of its subject) applied to `subject`.
Value Interpreter::filter(const Expr& e, Value subject, Scope& scope) {
  const CallArgs args = arguments(e, scope, 1);
  return apply_filter(*this, e.name, subject, args);
}

// The filters of a {% filter %} or {% set %} block: a chain whose innermost
// node has no subject.
Value Interpreter::filter_block(const Expr& chain, Value subject, Scope& scope) {
  if (chain.children[0]) subject = filter_block(*chain.children[0], std::move(subject), scope);
  return filter(chain, std::move(subject), scope);
}

Value Interpreter::eval(const Expr& e, Scope& scope) {
  Nesting nesting(*this);
  step();
  try {
    return eval_node(e, scope);
  } catch (const TemplateError&) {
    rethrow_at(e.line);
  }
}

Value Interpreter::eval_node(const Expr& e, Scope& scope) {
  const auto& c = e.children;
  switch (e.kind) {
    case Expr::Kind::Literal: return e.value;
    case Expr::Kind::Name: return lookup(e.name, scope);
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      std::vector<Value> items;
      for (const ExprPtr& item : c) items.push_back(eval(*item, scope));
      return e.kind == Expr::Kind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case Expr::Kind::Dict: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < c.size(); i += 2) {
        Value key = eval(*c[i], scope);
        Value value = eval(*c[i + 1], scope);
        d.set(std::move(key), std::move(value));
      }
      return d;
    }
    case Expr::Kind::Attribute: return attribute(eval(*c[0], scope), e.name);
    case Expr::Kind::Item: {
      Value object = eval(*c[0], scope);
      return subscript(*this, object, eval(*c[1], scope));
    }
    case Expr::Kind::Slice: {
      Value object = eval(*c[0], scope);
      touch(object);
      std::optional<int64_t> bounds[3];
      for (size_t i = 0; i < 3; ++i) {
        if (!c[i + 1]) continue;
        const Value v = eval(*c[i + 1], scope);
        if (!v.is_none()) bounds[i] = v.as_int();
      }
      return slice(object, bounds[0], bounds[1], bounds[2]);
    }
    case Expr::Kind::Call: {
      Value callee = eval(*c[0], scope);
      CallArgs args = arguments(e, scope, 1);
      return call(callee, args);
    }
    case Expr::Kind::Filter: return filter(e, eval(*c[0], scope), scope);
    case Expr::Kind::Test: {
      Value subject = eval(*c[0], scope);
      const CallArgs args = arguments(e, scope, 1);
      return Value(apply_test(*this, e.name, subject, args));
    }
    case Expr::Kind::Not: return Value(!eval(*c[0], scope).truthy());
    case Expr::Kind::Negate: return negate(eval(*c[0], scope));
    case Expr::Kind::Plus: {
      Value v = eval(*c[0], scope);
      if (v.is_undefined()) fail_undefined(v);
      if (!v.is_number()) throw TemplateError(std::string("bad operand type for unary +: '") + v.type_name() + "'");
      return v.is_bool() ? Value(v.as_int()) : v;
    }
    case Expr::Kind::Binary: {
      Value left = eval(*c[0], scope);
      return binary_operator(*this, e.name, left, eval(*c[1], scope));
    }
    case Expr::Kind::Compare: {
      Value left = eval(*c[0], scope);
      for (size_t i = 0; i < e.operators.size(); ++i) {
        Value right = eval(*c[i + 1], scope);
        if (!compare(*this, e.operators[i], left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case Expr::Kind::And: {
      Value left = eval(*c[0], scope);
      return left.truthy() ? eval(*c[1], scope) : left;
    }
    case Expr::Kind::Or: {
      Value left = eval(*c[0], scope);
      return left.truthy() ? left : eval(*c[1], scope);
    }
    case Expr::Kind::Conditional:
      if (eval(*c[1], scope).truthy()) return eval(*c[0], scope);
      return c[2] ? eval(*c[2], scope) : Value::undefined("the condition was false and there is no else");
    case Expr::Kind::Concat: {
      std::string out;
      for (const ExprPtr& part : c) {
        out += eval(*part, scope).str(max_bytes());
        reserve(out.size());
      }
      return Value(std::move(out));
    }
  }
  return Value();
}

}  // namespace peak::jinja
