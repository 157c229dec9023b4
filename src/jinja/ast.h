// The syntax tree of a parsed template. One node type for expressions and one
// for statements; which fields a node uses depends on its kind (listed there).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace peak::jinja {

// Frees the children of `root` without recursing: trees as deep as the source
// is long (a + b + c ..., x|f|g ..., elif chains) must not overflow the stack.
// take(node, pending) moves a node's children into pending.
template <typename Node, typename Take>
void free_children(Node& root, Take take) {
  std::vector<std::unique_ptr<Node>> pending;
  take(root, pending);
  while (!pending.empty()) {
    std::unique_ptr<Node> next = std::move(pending.back());
    pending.pop_back();
    if (next) take(*next, pending);
  }
}

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind : uint8_t {
    Literal,      // value
    Name,         // name
    List,         // children: the items
    Tuple,        // children: the items
    Dict,         // children: key, value, key, value, ...
    Attribute,    // children[0].name
    Item,         // children[0][children[1]]
    Slice,        // children[0][children[1]:children[2]:children[3]], each bound may be null
    Call,         // children[0](children[1..], keywords)
    Filter,       // children[0] | name(children[1..], keywords); children[0] null in {% filter %} and {% set %} blocks
    Test,         // children[0] is name(children[1..], keywords)
    Not,          // not children[0]
    Negate,       // -children[0]
    Plus,         // +children[0]
    Binary,       // children[0] name children[1]; name is one of + - * / // % **
    Compare,      // children[0] operators[0] children[1] operators[1] children[2] ...
    And,          // children[0] and children[1]
    Or,           // children[0] or children[1]
    Conditional,  // children[0] if children[1] else children[2] (null: undefined)
    Concat,       // children joined with ~
  };
  Kind kind = Kind::Literal;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> children;
  std::vector<std::string> operators;
  std::vector<std::pair<std::string, ExprPtr>> keywords;

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  ~Expr() {
    free_children(*this, [](Expr& e, std::vector<ExprPtr>& pending) {
      for (ExprPtr& child : e.children) pending.push_back(std::move(child));
      for (auto& keyword : e.keywords) pending.push_back(std::move(keyword.second));
    });
  }
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind : uint8_t {
    Text,         // text
    Print,        // {{ expr }}
    If,           // if expr: body else: else_body (an elif is an If alone in else_body)
    For,          // for target in expr [if condition]: body else: else_body
    Set,          // set target = expr
    SetBlock,     // set target [| filter chain in expr]: body
    Macro,        // macro name(params = defaults): body
    CallBlock,    // call(params = defaults) expr: body, passed to the callee as caller()
    FilterBlock,  // filter expr (a Filter chain without subject): body
    With,         // with params[i] = defaults[i], ...: body (also a generation block, without params)
    Break,
    Continue,
  };
  Kind kind = Kind::Text;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr target;     // a Name, a Tuple of Names, or a namespace Attribute
  ExprPtr condition;
  Body body;
  Body else_body;
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // Macro, CallBlock: for the last params; With: one per param

  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() {
    free_children(*this, [](Stmt& s, std::vector<StmtPtr>& pending) {
      for (StmtPtr& child : s.body) pending.push_back(std::move(child));
      for (StmtPtr& child : s.else_body) pending.push_back(std::move(child));
    });
  }
};

}  // namespace peak::jinja
