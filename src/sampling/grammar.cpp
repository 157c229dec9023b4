#include "sampling/grammar.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sampling/gbnf_parser.h"

namespace peak::sampling {
namespace {

std::string with_position(const std::string& message, int line, int column) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
}

size_t rule_count(const GrammarTables& tables) { return tables.alternative_begin.size() - 1; }

bool ends_alternative(const GrammarTables& tables, uint32_t position) {
  return tables.elements[position].op >= GrammarOp::kAltEnd;
}

// The rules with an alternative all of whose elements `hold`, where a rule
// holds once found to and a char set holds when `sets_hold`: the nullable rules
// (sets_hold false) or the rules that can finish at all (true). A worklist:
// each alternative counts the rule calls it waits for.
std::vector<bool> rules_where_an_alternative_holds(const GrammarTables& tables, bool sets_hold) {
  const size_t alternatives = tables.alternative_starts.size();
  std::vector<uint32_t> owner(alternatives);
  std::vector<uint32_t> waiting(alternatives, 0);
  std::vector<std::vector<uint32_t>> waiting_alternatives(rule_count(tables));
  std::vector<bool> holds(rule_count(tables), false);
  std::vector<uint32_t> found;
  const auto mark = [&](uint32_t rule) {
    if (!holds[rule]) found.push_back(rule);
    holds[rule] = true;
  };
  for (uint32_t rule = 0; rule < rule_count(tables); ++rule) {
    for (uint32_t a = tables.alternative_begin[rule]; a < tables.alternative_begin[rule + 1]; ++a) {
      owner[a] = rule;
      bool blocked = false;
      for (uint32_t p = tables.alternative_starts[a]; !ends_alternative(tables, p) && !blocked; ++p) {
        const GrammarElement& element = tables.elements[p];
        blocked = element.op == GrammarOp::kCharSet && !sets_hold;
        if (element.op == GrammarOp::kRule) {
          waiting_alternatives[element.arg].push_back(a);
          ++waiting[a];
        }
      }
      if (blocked) waiting[a] = UINT32_MAX;  // never reaches 0
      if (waiting[a] == 0) mark(rule);
    }
  }
  while (!found.empty()) {
    const uint32_t rule = found.back();
    found.pop_back();
    for (const uint32_t a : waiting_alternatives[rule]) {
      if (waiting[a] != UINT32_MAX && --waiting[a] == 0) mark(owner[a]);
    }
  }
  return holds;
}

// Edges r -> s where rule r can call s before matching a character: s first in
// an alternative of r, or after nullable rules only.
std::vector<std::vector<uint32_t>> left_calls(const GrammarTables& tables) {
  const std::vector<bool> nullable = rules_where_an_alternative_holds(tables, false);
  std::vector<std::vector<uint32_t>> calls(rule_count(tables));
  for (uint32_t rule = 0; rule < rule_count(tables); ++rule) {
    for (uint32_t a = tables.alternative_begin[rule]; a < tables.alternative_begin[rule + 1]; ++a) {
      for (uint32_t p = tables.alternative_starts[a]; !ends_alternative(tables, p); ++p) {
        const GrammarElement& element = tables.elements[p];
        if (element.op != GrammarOp::kRule) break;
        calls[rule].push_back(element.arg);
        if (!nullable[element.arg]) break;
      }
    }
  }
  return calls;
}

[[noreturn]] void fail_left_recursion(const GrammarTables& tables, std::string_view text,
                                      const std::vector<uint32_t>& cycle) {
  std::string path;
  for (const uint32_t rule : cycle) path += (path.empty() ? "" : " -> ") + tables.rule_names[rule];
  const uint32_t first = cycle.front();
  throw grammar_error_at(text, tables.rule_offsets[first],
                         "left recursion: rule '" + tables.rule_names[first] +
                             "' can reach itself before matching any character (" + path + ")");
}

// A depth-first walk of the left calls (with a stack of its own: chains of
// rules can be long) that refuses the first cycle it meets.
void check_left_recursion(const GrammarTables& tables, std::string_view text) {
  const std::vector<std::vector<uint32_t>> calls = left_calls(tables);
  enum Color : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<Color> color(rule_count(tables), kUnseen);
  std::vector<std::pair<uint32_t, size_t>> path;  // rule, its next call to follow
  for (uint32_t start = 0; start < rule_count(tables); ++start) {
    if (color[start] != kUnseen) continue;
    color[start] = kOnPath;
    path.push_back({start, 0});
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      if (next == calls[rule].size()) {
        color[rule] = kDone;
        path.pop_back();
        continue;
      }
      const uint32_t callee = calls[rule][next++];
      if (color[callee] == kOnPath) {
        std::vector<uint32_t> cycle;
        for (auto it = path.begin(); it != path.end(); ++it) {
          if (it->first == callee || !cycle.empty()) cycle.push_back(it->first);
        }
        cycle.push_back(callee);
        fail_left_recursion(tables, text, cycle);
      }
      if (color[callee] == kUnseen) {
        color[callee] = kOnPath;
        path.push_back({callee, 0});
      }
    }
  }
}

// Every rule must be able to finish: then every prefix the matcher keeps can
// be completed (its verdict "prefix" is exact).
void check_rules_finish(const GrammarTables& tables, std::string_view text) {
  const std::vector<bool> finishes = rules_where_an_alternative_holds(tables, true);
  for (uint32_t rule = 0; rule < rule_count(tables); ++rule) {
    if (finishes[rule]) continue;
    throw grammar_error_at(text, tables.rule_offsets[rule],
                           "rule '" + tables.rule_names[rule] +
                               "' can never finish: each of its alternatives needs a rule that never finishes "
                               "(itself, or one that needs it)");
  }
}

}  // namespace

GrammarError::GrammarError(const std::string& message, int line, int column)
    : std::runtime_error(with_position(message, line, column)), message_(message), line_(line), column_(column) {}

std::shared_ptr<const Grammar> Grammar::parse(std::string_view text, std::string_view root) {
  GrammarTables tables = parse_gbnf(text, root);
  check_left_recursion(tables, text);
  check_rules_finish(tables, text);
  return std::shared_ptr<const Grammar>(new Grammar(std::move(tables)));
}

std::shared_ptr<const Grammar> Grammar::joined(const Grammar& a, const Grammar& b,
                                               const std::vector<std::vector<Part>>& alternatives,
                                               const std::string& name) {
  const GrammarTables& first = a.tables_;
  const GrammarTables& second = b.tables_;
  if (a.rule_count() + b.rule_count() + 1 > kGrammarMaxRules ||
      a.element_count() + b.element_count() + 2 * alternatives.size() + 2 > kGrammarMaxElements) {
    throw std::length_error("grammar: joining two grammars takes more than " + std::to_string(kGrammarMaxRules) +
                            " rules or " + std::to_string(kGrammarMaxElements) + " elements");
  }
  GrammarTables tables = first;
  const auto rule_base = static_cast<uint32_t>(a.rule_count());
  const auto set_base = static_cast<uint32_t>(a.char_set_count());
  const auto element_base = static_cast<uint32_t>(first.elements.size());
  const auto alternative_base = static_cast<uint32_t>(first.alternative_starts.size());
  const auto range_base = static_cast<uint32_t>(first.ranges.size());
  for (GrammarElement element : second.elements) {
    if (element.op == GrammarOp::kCharSet) element.arg += set_base;
    if (element.op == GrammarOp::kRule) element.arg += rule_base;
    tables.elements.push_back(element);
  }
  for (const uint32_t start : second.alternative_starts) tables.alternative_starts.push_back(start + element_base);
  for (size_t r = 1; r < second.alternative_begin.size(); ++r) {
    tables.alternative_begin.push_back(second.alternative_begin[r] + alternative_base);
  }
  tables.ranges.insert(tables.ranges.end(), second.ranges.begin(), second.ranges.end());
  for (size_t s = 1; s < second.set_begin.size(); ++s) tables.set_begin.push_back(second.set_begin[s] + range_base);
  tables.rule_names.insert(tables.rule_names.end(), second.rule_names.begin(), second.rule_names.end());
  tables.rule_offsets.insert(tables.rule_offsets.end(), second.rule_offsets.begin(), second.rule_offsets.end());

  const uint32_t itself = static_cast<uint32_t>(tables.rule_names.size());
  const uint32_t rules[3] = {first.root, second.root + rule_base, itself};
  for (size_t i = 0; i < alternatives.size(); ++i) {
    tables.alternative_starts.push_back(static_cast<uint32_t>(tables.elements.size()));
    for (const Part part : alternatives[i]) tables.elements.push_back({GrammarOp::kRule, rules[part]});
    tables.elements.push_back({i + 1 < alternatives.size() ? GrammarOp::kAltEnd : GrammarOp::kRuleEnd, 0});
  }
  tables.alternative_begin.push_back(static_cast<uint32_t>(tables.alternative_starts.size()));
  tables.rule_names.push_back(name);
  tables.rule_offsets.push_back(0);
  tables.root = itself;
  return std::shared_ptr<const Grammar>(new Grammar(std::move(tables)));
}

std::shared_ptr<const Grammar> Grammar::either(const Grammar& a, const Grammar& b) {
  return joined(a, b, {{kFirst}, {kSecond}}, a.rule_name(a.root()) + " | " + b.rule_name(b.root()));
}

std::shared_ptr<const Grammar> Grammar::then(const Grammar& a, const Grammar& b) {
  return joined(a, b, {{kFirst, kSecond}}, a.rule_name(a.root()) + " " + b.rule_name(b.root()));
}

// `list ::= item | item separator list`: right recursion, which never reaches
// itself before item has matched a character.
std::shared_ptr<const Grammar> Grammar::one_or_more(const Grammar& item, const Grammar& separator) {
  if (rules_where_an_alternative_holds(item.tables_, false)[item.root()]) {
    throw std::invalid_argument("grammar: a repeated grammar '" + item.rule_name(item.root()) +
                                "' that matches the empty string");
  }
  return joined(item, separator, {{kFirst}, {kFirst, kSecond, kItself}},
                item.rule_name(item.root()) + " (" + separator.rule_name(separator.root()) + " ...)*");
}

const uint32_t* Grammar::alternatives_begin(uint32_t rule) const {
  return tables_.alternative_starts.data() + tables_.alternative_begin[rule];
}

const uint32_t* Grammar::alternatives_end(uint32_t rule) const {
  return tables_.alternative_starts.data() + tables_.alternative_begin[rule + 1];
}

bool Grammar::char_set_contains(uint32_t set, uint32_t code_point) const {
  return char_set_intersects(set, code_point, code_point);
}

bool Grammar::char_set_intersects(uint32_t set, uint32_t first, uint32_t last) const {
  const CodePointRange* begin = tables_.ranges.data() + tables_.set_begin[set];
  const CodePointRange* end = tables_.ranges.data() + tables_.set_begin[set + 1];
  // The first range that does not end before `first`.
  const CodePointRange* range =
      std::lower_bound(begin, end, first, [](const CodePointRange& r, uint32_t value) { return r.last < value; });
  return range != end && range->first <= last;
}

}  // namespace peak::sampling
