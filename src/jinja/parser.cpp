#include "jinja/parser.h"

#include <initializer_list>

#include "jinja/error.h"
#include "jinja/lexer.h"

namespace peak::jinja {
namespace {

using Type = Token::Type;

ExprPtr make(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, int max_depth) : tokens_(std::move(tokens)), max_depth_(max_depth) {}

  Body document() {
    Body body = statements({});
    if (current().type != Type::End) fail("unexpected '" + current().text + "'");
    return body;
  }

 private:
  // Counts one level of nesting for as long as it lives.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.max_depth_) p_.fail("the template nests deeper than " + std::to_string(p_.max_depth_) + " levels");
    }
    ~Nesting() { --p_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };

  const Token& current() const { return tokens_[pos_]; }
  const Token& peek() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  [[noreturn]] void fail(const std::string& message) const {
    throw TemplateError(message, current().line, current().column);
  }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case Type::End: return "end of template";
      case Type::BlockEnd: return "end of statement block";
      case Type::VarEnd: return "end of print statement";
      case Type::Data: return "template data";
      case Type::String: return "string";
      case Type::Integer:
      case Type::Float: return "number";
      default: return t.text;
    }
  }

  bool is_op(std::string_view op) const { return current().type == Type::Operator && current().text == op; }
  bool is_name(std::string_view name) const { return current().type == Type::Name && current().text == name; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected '" + std::string(op) + "', got '" + describe(current()) + "'");
  }
  void expect(Type type, const char* what) {
    if (current().type != type) fail(std::string("expected ") + what + ", got '" + describe(current()) + "'");
    advance();
  }
  std::string expect_name() {
    if (current().type != Type::Name) fail("expected a name, got '" + describe(current()) + "'");
    return advance().text;
  }

  // Statements up to one of the `end` tags (left as the current token, after
  // its "{%"), or to the end of the template when `end` is empty.
  Body statements(std::initializer_list<std::string_view> end) {
    Nesting nesting(*this);
    Body body;
    while (current().type != Type::End) {
      const Token& t = current();
      if (t.type == Type::Data) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Text;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        advance();
      } else if (t.type == Type::VarBegin) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Print;
        s->line = t.line;
        advance();
        s->expr = tuple(false);
        expect(Type::VarEnd, "'}}'");
        body.push_back(std::move(s));
      } else if (t.type == Type::BlockBegin) {
        advance();
        for (std::string_view tag : end) {
          if (is_name(tag)) return body;
        }
        body.push_back(statement());
        expect(Type::BlockEnd, "'%}'");
      } else {
        fail("unexpected '" + describe(t) + "'");
      }
    }
    if (end.size()) {
      std::string names;
      for (std::string_view tag : end) names += (names.empty() ? "'" : " or '") + std::string(tag) + "'";
      fail("unexpected end of template, expected " + names);
    }
    return body;
  }

  // The body of a block statement: after its "%}", up to one of `end`.
  Body block(std::initializer_list<std::string_view> end) {
    expect(Type::BlockEnd, "'%}'");
    return statements(end);
  }

  StmtPtr statement() {
    if (current().type != Type::Name) fail("tag name expected");
    const Token& t = current();
    auto s = std::make_unique<Stmt>();
    s->line = t.line;
    const std::string tag = advance().text;
    if (tag == "if") return if_statement(std::move(s));
    if (tag == "for") return for_statement(std::move(s));
    if (tag == "set") return set_statement(std::move(s));
    if (tag == "macro") {
      s->kind = Stmt::Kind::Macro;
      s->name = expect_name();
      signature(*s);
      s->body = block({"endmacro"});
      advance();
      return s;
    }
    if (tag == "call") {
      s->kind = Stmt::Kind::CallBlock;
      if (is_op("(")) signature(*s);
      s->expr = expression(true);
      if (s->expr->kind != Expr::Kind::Call) fail("expected a call after 'call'");
      s->body = block({"endcall"});
      advance();
      return s;
    }
    if (tag == "filter") {
      s->kind = Stmt::Kind::FilterBlock;
      s->expr = filter_chain(nullptr, true);
      s->body = block({"endfilter"});
      advance();
      return s;
    }
    if (tag == "with") {
      s->kind = Stmt::Kind::With;
      while (current().type != Type::BlockEnd) {
        if (!s->params.empty()) expect_op(",");
        s->params.push_back(expect_name());
        expect_op("=");
        s->defaults.push_back(expression(true));
      }
      s->body = block({"endwith"});
      advance();
      return s;
    }
    if (tag == "generation") {
      // Hugging Face's extension: {% generation %} marks what the assistant says,
      // for training masks only. Rendering, it is a call block that prints its
      // body: a scope of its own, which break and continue cannot leave.
      s->kind = Stmt::Kind::With;
      s->body = block_outside_loops({"endgeneration"});
      advance();
      return s;
    }
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail("'" + tag + "' outside a loop");
      s->kind = tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
      return s;
    }
    for (const char* refused : {"include", "import", "from", "extends", "block"}) {
      if (tag == refused) fail("'" + tag + "' is not supported: templates cannot reach other templates or files");
    }
    fail("unknown or unsupported tag '" + tag + "'");
  }

  // An elif chain becomes Ifs each alone in the else body of the one before,
  // built in a loop: a chain may be as long as the source.
  StmtPtr if_statement(StmtPtr s) {
    Stmt* branch = s.get();
    while (true) {
      branch->kind = Stmt::Kind::If;
      branch->expr = tuple(true);
      branch->body = block({"elif", "else", "endif"});
      if (!is_name("elif")) break;
      auto elif = std::make_unique<Stmt>();
      elif->line = advance().line;
      Stmt* next = elif.get();
      branch->else_body.push_back(std::move(elif));
      branch = next;
    }
    if (skip_name("else")) branch->else_body = block({"endif"});
    advance();  // endif
    return s;
  }

  StmtPtr for_statement(StmtPtr s) {
    s->kind = Stmt::Kind::For;
    s->target = assign_target(false, "in");
    if (!skip_name("in")) fail("expected 'in'");
    s->expr = tuple(true, "recursive");
    if (skip_name("if")) s->condition = expression(true);
    if (is_name("recursive")) fail("recursive for loops are not supported");
    ++loop_depth_;
    s->body = block({"endfor", "else"});
    --loop_depth_;
    if (skip_name("else")) s->else_body = block({"endfor"});
    advance();  // endfor
    return s;
  }

  StmtPtr set_statement(StmtPtr s) {
    s->target = assign_target(true, "");
    if (skip_op("=")) {
      s->kind = Stmt::Kind::Set;
      s->expr = tuple(false);
      return s;
    }
    s->kind = Stmt::Kind::SetBlock;
    if (is_op("|")) s->expr = filter_chain(nullptr, false);
    s->body = block_outside_loops({"endset"});
    advance();
    return s;
  }

  // A block body that break and continue cannot leave, even inside a loop.
  Body block_outside_loops(std::initializer_list<std::string_view> end) {
    const int saved = loop_depth_;
    loop_depth_ = 0;
    Body body = block(end);
    loop_depth_ = saved;
    return body;
  }

  void signature(Stmt& s) {
    expect_op("(");
    while (!is_op(")")) {
      if (!s.params.empty()) expect_op(",");
      s.params.push_back(expect_name());
      if (skip_op("=")) {
        s.defaults.push_back(expression(true));
      } else if (!s.defaults.empty()) {
        fail("non-default argument follows default argument");
      }
    }
    advance();
  }

  // A name, a tuple of names, or (for set) namespace.attribute.
  ExprPtr assign_target(bool with_namespace, std::string_view end_name) {
    std::vector<ExprPtr> names;
    const int line = current().line;
    bool is_tuple = false;
    while (true) {
      if (!names.empty()) expect_op(",");
      if (current().type != Type::Name || (!end_name.empty() && is_name(end_name))) break;
      auto name = make(Expr::Kind::Name, current().line);
      name->name = advance().text;
      if (with_namespace && is_op(".")) {
        advance();
        auto attribute = make(Expr::Kind::Attribute, name->line);
        attribute->name = expect_name();
        attribute->children.push_back(std::move(name));
        name = std::move(attribute);
      }
      names.push_back(std::move(name));
      if (!is_op(",")) break;
      is_tuple = true;
    }
    if (names.empty()) fail("expected an assignment target, got '" + describe(current()) + "'");
    if (!is_tuple) return std::move(names[0]);
    for (const auto& n : names) {
      if (n->kind != Expr::Kind::Name) fail("can't assign to a namespace attribute inside a tuple");
    }
    auto t = make(Expr::Kind::Tuple, line);
    t->children = std::move(names);
    return t;
  }

  // Expressions separated by commas make a tuple. `no_conditional`: for and if
  // heads, where "if" starts the loop filter.
  ExprPtr tuple(bool no_conditional, std::string_view extra_end = "") {
    const int line = current().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (tuple_end(extra_end)) break;
      items.push_back(no_conditional ? or_expression() : expression(true));
      if (!is_op(",")) break;
      is_tuple = true;
    }
    if (!is_tuple) {
      if (items.empty()) fail("expected an expression, got '" + describe(current()) + "'");
      return std::move(items[0]);
    }
    auto t = make(Expr::Kind::Tuple, line);
    t->children = std::move(items);
    return t;
  }

  bool tuple_end(std::string_view extra_end) const {
    const Type t = current().type;
    return t == Type::VarEnd || t == Type::BlockEnd || is_op(")") || (!extra_end.empty() && is_name(extra_end));
  }

  ExprPtr expression(bool with_conditional) {
    Nesting nesting(*this);
    if (!with_conditional) return or_expression();
    const int line = current().line;
    ExprPtr value = or_expression();
    while (skip_name("if")) {
      auto c = make(Expr::Kind::Conditional, line);
      ExprPtr condition = or_expression();
      ExprPtr otherwise = skip_name("else") ? expression(true) : nullptr;
      c->children.push_back(std::move(value));
      c->children.push_back(std::move(condition));
      c->children.push_back(std::move(otherwise));
      value = std::move(c);
    }
    return value;
  }

  ExprPtr binary(Expr::Kind kind, ExprPtr left, ExprPtr right, int line, std::string op = {}) {
    auto e = make(kind, line);
    e->name = std::move(op);
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
  }

  ExprPtr or_expression() {
    const int line = current().line;
    ExprPtr left = and_expression();
    while (skip_name("or")) left = binary(Expr::Kind::Or, std::move(left), and_expression(), line);
    return left;
  }

  ExprPtr and_expression() {
    const int line = current().line;
    ExprPtr left = not_expression();
    while (skip_name("and")) left = binary(Expr::Kind::And, std::move(left), not_expression(), line);
    return left;
  }

  ExprPtr not_expression() {
    if (is_name("not")) {
      Nesting nesting(*this);
      auto e = make(Expr::Kind::Not, advance().line);
      e->children.push_back(not_expression());
      return e;
    }
    return comparison();
  }

  ExprPtr comparison() {
    const int line = current().line;
    ExprPtr first = sum();
    ExprPtr e;
    while (true) {
      std::string op;
      if (current().type == Type::Operator &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">="))) {
        op = advance().text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (is_name("not") && peek().type == Type::Name && peek().text == "in") {
        advance(), advance();
        op = "not in";
      } else {
        break;
      }
      if (!e) {
        e = make(Expr::Kind::Compare, line);
        e->children.push_back(std::move(first));
      }
      e->operators.push_back(op);
      e->children.push_back(sum());
    }
    return e ? std::move(e) : std::move(first);
  }

  ExprPtr sum() {
    const int line = current().line;
    ExprPtr left = concat();
    while (is_op("+") || is_op("-")) {
      std::string op = advance().text;
      left = binary(Expr::Kind::Binary, std::move(left), concat(), line, op);
    }
    return left;
  }

  ExprPtr concat() {
    const int line = current().line;
    ExprPtr first = product();
    if (!is_op("~")) return first;
    auto e = make(Expr::Kind::Concat, line);
    e->children.push_back(std::move(first));
    while (skip_op("~")) e->children.push_back(product());
    return e;
  }

  ExprPtr product() {
    const int line = current().line;
    ExprPtr left = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = advance().text;
      left = binary(Expr::Kind::Binary, std::move(left), power(), line, op);
    }
    return left;
  }

  ExprPtr power() {
    const int line = current().line;
    ExprPtr left = unary(true);
    while (skip_op("**")) left = binary(Expr::Kind::Binary, std::move(left), unary(true), line, "**");
    return left;
  }

  ExprPtr unary(bool with_filter) {
    Nesting nesting(*this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const bool negate = current().text == "-";
      node = make(negate ? Expr::Kind::Negate : Expr::Kind::Plus, advance().line);
      node->children.push_back(unary(false));
    } else {
      node = primary();
    }
    node = postfix(std::move(node));
    if (with_filter) node = filters_and_tests(std::move(node));
    return node;
  }

  ExprPtr primary() {
    const Token& t = current();
    switch (t.type) {
      case Type::Name: {
        advance();
        auto e = make(Expr::Kind::Literal, t.line);
        if (t.text == "true" || t.text == "True") {
          e->value = Value(true);
        } else if (t.text == "false" || t.text == "False") {
          e->value = Value(false);
        } else if (t.text == "none" || t.text == "None") {
          e->value = Value::none();
        } else {
          e->kind = Expr::Kind::Name;
          e->name = t.text;
        }
        return e;
      }
      case Type::String: {
        auto e = make(Expr::Kind::Literal, t.line);
        std::string s;
        while (current().type == Type::String) s += advance().text;  // adjacent literals join
        e->value = Value(std::move(s));
        return e;
      }
      case Type::Integer:
      case Type::Float: {
        auto e = make(Expr::Kind::Literal, t.line);
        e->value = t.type == Type::Integer ? Value(t.integer) : Value(t.number);
        advance();
        return e;
      }
      case Type::Operator:
        if (t.text == "(") {
          const int line = advance().line;
          if (skip_op(")")) return make(Expr::Kind::Tuple, line);
          ExprPtr e = tuple(false);
          expect_op(")");
          return e;
        }
        if (t.text == "[") return sequence(Expr::Kind::List, "]");
        if (t.text == "{") return sequence(Expr::Kind::Dict, "}");
        break;
      default: break;
    }
    fail("unexpected '" + describe(t) + "'");
  }

  ExprPtr sequence(Expr::Kind kind, std::string_view close) {
    auto e = make(kind, advance().line);
    while (!is_op(close)) {
      if (!e->children.empty()) expect_op(",");
      if (is_op(close)) break;
      e->children.push_back(expression(true));
      if (kind == Expr::Kind::Dict) {
        expect_op(":");
        e->children.push_back(expression(true));
      }
    }
    advance();
    return e;
  }

  ExprPtr postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = subscript(std::move(node));
      } else if (is_op("(")) {
        node = call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr filters_and_tests(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = filter_chain(std::move(node), false);
      } else if (is_name("is")) {
        node = test(std::move(node));
      } else if (is_op("(")) {
        node = call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr subscript(ExprPtr node) {
    const Token& t = advance();
    if (t.text == ".") {
      const Token& attribute = advance();
      if (attribute.type == Type::Name) {
        auto e = make(Expr::Kind::Attribute, t.line);
        e->name = attribute.text;
        e->children.push_back(std::move(node));
        return e;
      }
      if (attribute.type != Type::Integer) fail("expected name or number");
      auto e = make(Expr::Kind::Item, t.line);
      auto index = make(Expr::Kind::Literal, attribute.line);
      index->value = Value(attribute.integer);
      e->children.push_back(std::move(node));
      e->children.push_back(std::move(index));
      return e;
    }
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(subscribed(args.empty() ? std::move(node) : nullptr, t.line));
    }
    advance();
    if (args.size() != 1) fail("subscripts with several indexes are not supported");
    return std::move(args[0]);
  }

  // An index or a slice of `node`.
  ExprPtr subscribed(ExprPtr node, int line) {
    ExprPtr start;
    if (!is_op(":")) {
      start = expression(true);
      if (!is_op(":")) {
        auto e = make(Expr::Kind::Item, line);
        e->children.push_back(std::move(node));
        e->children.push_back(std::move(start));
        return e;
      }
    }
    advance();  // the first ':'
    auto e = make(Expr::Kind::Slice, line);
    e->children.push_back(std::move(node));
    e->children.push_back(std::move(start));
    e->children.push_back(is_op(":") || is_op("]") || is_op(",") ? nullptr : expression(true));
    ExprPtr step;
    if (skip_op(":") && !is_op("]") && !is_op(",")) step = expression(true);
    e->children.push_back(std::move(step));
    return e;
  }

  ExprPtr call(ExprPtr callee) {
    auto e = make(Expr::Kind::Call, current().line);
    e->children.push_back(std::move(callee));
    arguments(*e);
    return e;
  }

  // "(a, b, key=c)" into e.children (after those already there) and e.keywords.
  void arguments(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) {
        expect_op(",");
        if (is_op(")")) break;  // a trailing comma
      }
      first = false;
      if (is_op("*") || is_op("**")) fail("*args and **kwargs in calls are not supported");
      if (current().type == Type::Name && peek().type == Type::Operator && peek().text == "=") {
        std::string key = advance().text;
        advance();
        e.keywords.emplace_back(std::move(key), expression(true));
      } else {
        if (!e.keywords.empty()) fail("positional argument follows keyword argument");
        e.children.push_back(expression(true));
      }
    }
    advance();
  }

  // "| name(args) | name ..." applied to `node` (null for filter blocks).
  // `first_inline`: the first filter's name comes without a "|".
  ExprPtr filter_chain(ExprPtr node, bool first_inline) {
    while (is_op("|") || first_inline) {
      if (!first_inline) advance();
      first_inline = false;
      auto e = make(Expr::Kind::Filter, current().line);
      e->name = dotted_name();
      e->children.push_back(std::move(node));
      if (is_op("(")) arguments(*e);
      node = std::move(e);
    }
    return node;
  }

  std::string dotted_name() {
    std::string name = expect_name();
    while (skip_op(".")) name += "." + expect_name();
    return name;
  }

  ExprPtr test(ExprPtr node) {
    const int line = advance().line;  // "is"
    const bool negated = skip_name("not");
    auto e = make(Expr::Kind::Test, line);
    e->name = dotted_name();
    e->children.push_back(std::move(node));
    const Token& t = current();
    if (is_op("(")) {
      arguments(*e);
    } else if ((t.type == Type::Name || t.type == Type::String || t.type == Type::Integer || t.type == Type::Float ||
                is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("You cannot chain multiple tests with is");
      e->children.push_back(postfix(primary()));
    }
    if (!negated) return e;
    auto n = make(Expr::Kind::Not, line);
    n->children.push_back(std::move(e));
    return n;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int max_depth_;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source, int max_depth) { return Parser(tokenize(source), max_depth).document(); }

}  // namespace peak::jinja
