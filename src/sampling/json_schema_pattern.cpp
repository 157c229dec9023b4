#include "sampling/json_schema_pattern.h"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "json/json.h"
#include "sampling/gbnf_text.h"
#include "sampling/json_schema.h"
#include "tokenizer/utf8.h"

namespace peak::sampling {
namespace {

constexpr int kPatternMaxNesting = 32;          // groups inside groups (the grammar compiler allows 64)
constexpr uint32_t kNonEmptyPartBudget = 4096;  // nodes visited rewriting one nullable repetition

struct RegexNode {
  enum class Kind { kSet, kSequence, kAlternation, kRepeat };
  Kind kind = Kind::kSequence;
  CodePointSet set;                 // kSet: one character of these
  std::vector<RegexNode> children;  // kSequence, kAlternation; kRepeat: the one item
  uint32_t min = 1;                 // kRepeat
  uint32_t max = 1;
};

// A top-level alternative and whether ^ and $ anchor it.
struct Branch {
  RegexNode sequence;
  bool anchored_start = false;
  bool anchored_end = false;
};

CodePointSet digit_set() { return {{'0', '9'}}; }
CodePointSet word_set() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
// ECMA-262's WhiteSpace and LineTerminator.
CodePointSet space_set() {
  return {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
CodePointSet dot_set() { return CodePointSet{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}.complement(); }

RegexNode set_node(CodePointSet set) {
  RegexNode node;
  node.kind = RegexNode::Kind::kSet;
  node.set = std::move(set);
  return node;
}

int hex_value(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

class RegexParser {
 public:
  explicit RegexParser(std::string_view pattern) : text_(tokenizer::decode_utf8(pattern)) {}

  std::vector<Branch> parse_top();

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  uint32_t peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : 0; }
  [[noreturn]] void fail(const std::string& message) const {
    throw PatternError(message + " (at character " + std::to_string(pos_ + 1) + ")");
  }

  RegexNode parse_alternation(int depth);
  RegexNode parse_sequence(int depth, Branch* top);
  bool parse_anchor(Branch* top, const RegexNode& sequence);
  RegexNode parse_atom(int depth);
  RegexNode parse_group(int depth);
  bool parse_quantifier(uint32_t* min, uint32_t* max);
  bool parse_braces(uint32_t* min, uint32_t* max);
  uint32_t parse_count();
  RegexNode parse_class();
  void parse_class_item(CodePointSet& set);
  bool class_escape(uint32_t letter, CodePointSet* set) const;
  uint32_t parse_escaped_char(bool in_class);
  uint32_t parse_hex(int digits);

  std::vector<uint32_t> text_;
  size_t pos_ = 0;
};

std::vector<Branch> RegexParser::parse_top() {
  std::vector<Branch> branches;
  for (;;) {
    Branch branch;
    branch.sequence = parse_sequence(0, &branch);
    branches.push_back(std::move(branch));
    if (at_end()) return branches;
    if (peek() == ')') fail("')' without its '('");
    ++pos_;  // '|'
  }
}

RegexNode RegexParser::parse_alternation(int depth) {
  RegexNode node;
  node.kind = RegexNode::Kind::kAlternation;
  node.children.push_back(parse_sequence(depth, nullptr));
  while (peek() == '|' && !at_end()) {
    ++pos_;
    node.children.push_back(parse_sequence(depth, nullptr));
  }
  return node;
}

// Items up to '|', ')' or the end; in a top-level branch, ^ first and $ last.
RegexNode RegexParser::parse_sequence(int depth, Branch* top) {
  RegexNode sequence;
  while (!at_end() && peek() != '|' && peek() != ')') {
    if ((peek() == '^' || peek() == '$') && parse_anchor(top, sequence)) continue;
    RegexNode atom = parse_atom(depth);
    uint32_t min = 1;
    uint32_t max = 1;
    if (parse_quantifier(&min, &max)) {
      RegexNode repeat;
      repeat.kind = RegexNode::Kind::kRepeat;
      repeat.min = min;
      repeat.max = max;
      repeat.children.push_back(std::move(atom));
      atom = std::move(repeat);
    }
    sequence.children.push_back(std::move(atom));
  }
  return sequence;
}

bool RegexParser::parse_anchor(Branch* top, const RegexNode& sequence) {
  const uint32_t c = peek();
  if (c == '^' && top != nullptr && sequence.children.empty() && !top->anchored_start) {
    top->anchored_start = true;
    ++pos_;
    return true;
  }
  const bool ends = pos_ + 1 == text_.size() || peek(1) == '|';
  if (c == '$' && top != nullptr && ends) {
    top->anchored_end = true;
    ++pos_;
    return true;
  }
  fail(std::string("anchor '") + static_cast<char>(c) +
       "' is supported only at the start ('^') or end ('$') of the pattern or of a top-level alternative");
}

RegexNode RegexParser::parse_atom(int depth) {
  const uint32_t c = peek();
  if (c == '*' || c == '+' || c == '?') fail(std::string("nothing to repeat before '") + static_cast<char>(c) + "'");
  if (c == '{') {
    const size_t start = pos_;
    uint32_t min = 0;
    uint32_t max = 0;
    if (parse_braces(&min, &max)) fail("nothing to repeat before '{'");
    pos_ = start;  // not a count: a literal '{'
  }
  if (c == '(') return parse_group(depth);
  if (c == '[') return parse_class();
  if (c == '.') {
    ++pos_;
    return set_node(dot_set());
  }
  if (c != '\\') {
    ++pos_;
    return set_node({{c, c}});
  }
  const uint32_t letter = peek(1);
  CodePointSet set;
  if (class_escape(letter, &set)) {
    pos_ += 2;
    return set_node(set);
  }
  const uint32_t single = parse_escaped_char(false);
  return set_node({{single, single}});
}

RegexNode RegexParser::parse_group(int depth) {
  if (depth + 1 > kPatternMaxNesting) fail("groups nest deeper than " + std::to_string(kPatternMaxNesting));
  ++pos_;
  if (peek() == '?') {
    const uint32_t kind = peek(1);
    if (kind == '=' || kind == '!' || (kind == '<' && (peek(2) == '=' || peek(2) == '!'))) {
      fail("lookahead and lookbehind ('(?=', '(?!', '(?<=', '(?<!') are not supported");
    }
    if (kind == ':') {
      pos_ += 2;
    } else if (kind == '<') {
      pos_ += 2;
      while (!at_end() && peek() != '>') ++pos_;
      if (at_end()) fail("group name without its '>'");
      ++pos_;
    } else {
      fail("group syntax '(?' other than '(?:' and '(?<name>' is not supported");
    }
  }
  RegexNode inner = parse_alternation(depth + 1);
  if (peek() != ')' || at_end()) fail("'(' without its ')'");
  ++pos_;
  return inner;
}

bool RegexParser::parse_quantifier(uint32_t* min, uint32_t* max) {
  const uint32_t c = peek();
  if (at_end()) return false;
  if (c == '*' || c == '+' || c == '?') {
    ++pos_;
    *min = c == '+' ? 1 : 0;
    *max = c == '?' ? 1 : kUnboundedCount;
  } else if (c != '{') {
    return false;
  } else {
    const size_t start = pos_;
    if (!parse_braces(min, max)) {
      pos_ = start;  // not a count: the '{' is a literal the next atom reads
      return false;
    }
  }
  if (!at_end() && peek() == '?') ++pos_;  // lazy: the same strings match
  if (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) {
    uint32_t unused_min = 0;
    uint32_t unused_max = 0;
    const size_t start = pos_;
    if (peek() != '{' || parse_braces(&unused_min, &unused_max)) fail("nothing to repeat: a quantifier follows one");
    pos_ = start;
  }
  return true;
}

// {m}, {m,} or {m,n}; false (pos_ left anywhere) when the text is not one.
bool RegexParser::parse_braces(uint32_t* min, uint32_t* max) {
  ++pos_;
  if (at_end() || peek() < '0' || peek() > '9') return false;
  *min = parse_count();
  *max = *min;
  if (peek() == ',') {
    ++pos_;
    *max = peek() >= '0' && peek() <= '9' ? parse_count() : kUnboundedCount;
  }
  if (at_end() || peek() != '}') return false;
  ++pos_;
  if (*max < *min) fail("repetition {m,n} whose maximum is below its minimum");
  const uint32_t largest = *max == kUnboundedCount ? *min : *max;
  if (largest > kSchemaMaxRepetition) {
    fail("repetition count " + std::to_string(largest) + " is above " + std::to_string(kSchemaMaxRepetition) +
         " (kSchemaMaxRepetition)");
  }
  return true;
}

uint32_t RegexParser::parse_count() {
  uint64_t value = 0;
  while (!at_end() && peek() >= '0' && peek() <= '9') {
    value = std::min<uint64_t>(value * 10 + (peek() - '0'), uint64_t{UINT32_MAX} - 1);
    ++pos_;
  }
  return static_cast<uint32_t>(value);
}

RegexNode RegexParser::parse_class() {
  ++pos_;
  const bool negated = peek() == '^' && !at_end();
  if (negated) ++pos_;
  CodePointSet set;
  while (!at_end() && peek() != ']') parse_class_item(set);
  if (at_end()) fail("'[' without its ']'");
  ++pos_;
  if (negated) set = set.complement();
  if (set.empty()) fail("character class that matches no character");
  return set_node(set);
}

void RegexParser::parse_class_item(CodePointSet& set) {
  if (peek() == '\\' && class_escape(peek(1), &set)) {
    pos_ += 2;
    if (peek() == '-' && peek(1) != ']') fail("range from a class escape (\\d, \\w, \\s) is not supported");
    return;
  }
  const uint32_t first = peek() == '\\' ? parse_escaped_char(true) : text_[pos_++];
  if (peek() != '-' || at_end() || pos_ + 1 >= text_.size() || peek(1) == ']') {
    set.add(first, first);
    return;
  }
  ++pos_;
  CodePointSet unused;
  if (peek() == '\\' && class_escape(peek(1), &unused))
    fail("range to a class escape (\\d, \\w, \\s) is not supported");
  const uint32_t last = peek() == '\\' ? parse_escaped_char(true) : text_[pos_++];
  if (last < first) fail("range in a character class goes backwards");
  set.add(first, last);
}

// \d \D \w \W \s \S: adds their set.
bool RegexParser::class_escape(uint32_t letter, CodePointSet* set) const {
  CodePointSet base;
  switch (letter) {
    case 'd':
    case 'D': base = digit_set(); break;
    case 'w':
    case 'W': base = word_set(); break;
    case 's':
    case 'S': base = space_set(); break;
    default: return false;
  }
  set->add(letter >= 'a' ? base : base.complement());
  return true;
}

// One escaped character (after '\'), pos_ at the backslash.
uint32_t RegexParser::parse_escaped_char(bool in_class) {
  ++pos_;
  if (at_end()) fail("'\\' at the end of the pattern");
  const uint32_t c = text_[pos_++];
  switch (c) {
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'x': return parse_hex(2);
    case 'u': return parse_hex(4);
    case 'b':
      if (in_class) return '\b';
      fail("word boundary '\\b' is not supported");
    case 'B': fail("word boundary '\\B' is not supported");
    case 'k': fail("backreference '\\k' is not supported");
    case 'c':
      if ((peek() | 0x20) >= 'a' && (peek() | 0x20) <= 'z') return text_[pos_++] & 0x1F;
      fail("'\\c' without a letter");
    case '0':
      if (peek() < '0' || peek() > '9') return 0;
      break;
    default: break;
  }
  if (c >= '1' && c <= '9') fail("backreference '\\" + std::string(1, static_cast<char>(c)) + "' is not supported");
  const bool letter_or_digit = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  if (letter_or_digit) fail("escape '\\" + std::string(1, static_cast<char>(c)) + "' is not supported");
  return c;  // an escaped punctuation or other character is itself
}

uint32_t RegexParser::parse_hex(int digits) {
  uint32_t value = 0;
  for (int i = 0; i < digits; ++i) {
    const int digit = hex_value(peek());
    if (at_end() || digit < 0) fail("escape needs " + std::to_string(digits) + " hexadecimal digits");
    value = value * 16 + static_cast<uint32_t>(digit);
    ++pos_;
  }
  // \uD83D\uDE00: a surrogate pair is one code point.
  if (digits == 4 && value >= 0xD800 && value <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {
    const size_t start = pos_;
    pos_ += 2;
    const uint32_t low = parse_hex(4);
    if (low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00);
    pos_ = start;
  }
  return value;
}

// --- writing GBNF ---

// The JSON text peak::json writes for one code point.
std::string json_text(uint32_t code_point) {
  std::string utf8;
  tokenizer::append_utf8(utf8, code_point);
  std::string quoted;
  json::write_string(quoted, utf8);
  return quoted.substr(1, quoted.size() - 2);
}

// Control characters written as \u00XX: by high digit, the class of low digits.
void append_unicode_escapes(const CodePointSet& set, std::vector<std::string>& alternatives) {
  for (uint32_t high = 0; high < 2; ++high) {
    CodePointSet low_digits;
    for (uint32_t low = 0; low < 16; ++low) {
      const uint32_t c = high * 16 + low;
      const std::string text = json_text(c);
      if (set.contains(c) && text.size() == 6) low_digits.add(text[5], text[5]);
    }
    if (low_digits.empty()) continue;
    alternatives.push_back(gbnf_literal("\\u00" + std::to_string(high)) + " " + gbnf_char_class(low_digits));
  }
}

// One character of `set` as JSON string text: a class of the characters
// written as themselves, then the escapes.
std::string set_expression(const CodePointSet& set) {
  const CodePointSet specials{{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  std::vector<std::string> alternatives;
  const CodePointSet plain = set.intersect(specials.complement());
  if (!plain.empty()) alternatives.push_back(gbnf_char_class(plain));
  for (const uint32_t c : {uint32_t{'"'}, uint32_t{'\\'}, uint32_t{'\b'}, uint32_t{'\f'}, uint32_t{'\n'},
                           uint32_t{'\r'}, uint32_t{'\t'}}) {
    if (set.contains(c)) alternatives.push_back(gbnf_literal(json_text(c)));
  }
  append_unicode_escapes(set, alternatives);
  if (alternatives.empty()) throw PatternError("character class that matches no character a JSON string holds");
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

bool is_single_char(const RegexNode& node) {
  return node.kind == RegexNode::Kind::kSet && node.set.spans().size() == 1 &&
         node.set.spans()[0].first == node.set.spans()[0].last;
}

// Whether `node` matches the empty string.
bool nullable(const RegexNode& node) {
  switch (node.kind) {
    case RegexNode::Kind::kSet: return false;
    case RegexNode::Kind::kRepeat: return node.min == 0 || node.max == 0 || nullable(node.children[0]);
    case RegexNode::Kind::kAlternation:
      for (const RegexNode& child : node.children) {
        if (nullable(child)) return true;
      }
      return false;
    case RegexNode::Kind::kSequence:
      for (const RegexNode& child : node.children) {
        if (!nullable(child)) return false;
      }
      return true;
  }
  return false;
}

RegexNode repeat_node(RegexNode item, uint32_t min, uint32_t max) {
  RegexNode node;
  node.kind = RegexNode::Kind::kRepeat;
  node.min = min;
  node.max = max;
  node.children.push_back(std::move(item));
  return node;
}

// The non-empty strings `node` matches, or false when it matches only the
// empty string. An unbounded repetition of a nullable item is written as one
// of its non-empty part: the grammar compiler expands x* to a rule that calls
// itself after x, so a nullable x would be left recursion (refused), and both
// match the same strings. `budget` bounds the nodes copied (a sequence's tail
// is copied once per nullable item before it).
bool non_empty_part(const RegexNode& node, RegexNode* out, uint32_t* budget) {
  if (*budget == 0) throw PatternError("repetition of a group that can match nothing is too deeply nested");
  --*budget;
  switch (node.kind) {
    case RegexNode::Kind::kSet: *out = node; return true;
    case RegexNode::Kind::kRepeat: {
      const RegexNode& item = node.children[0];
      if (node.max == 0) return false;
      if (!nullable(item)) {
        *out = repeat_node(item, std::max<uint32_t>(node.min, 1), node.max);
        return true;
      }
      RegexNode first;
      if (!non_empty_part(item, &first, budget)) return false;
      if (node.max == kUnboundedCount) {
        *out = repeat_node(std::move(first), 1, kUnboundedCount);
      } else {
        // The first non-empty copy, then up to max-1 more of any kind.
        out->kind = RegexNode::Kind::kSequence;
        out->children.clear();
        out->children.push_back(std::move(first));
        if (node.max > 1) out->children.push_back(repeat_node(item, 0, node.max - 1));
      }
      return true;
    }
    case RegexNode::Kind::kAlternation: {
      RegexNode alternatives;
      alternatives.kind = RegexNode::Kind::kAlternation;
      for (const RegexNode& child : node.children) {
        RegexNode part;
        if (!non_empty_part(child, &part, budget)) continue;
        if (part.kind == RegexNode::Kind::kSequence) {
          alternatives.children.push_back(std::move(part));
        } else {
          RegexNode sequence;  // the writer reads an alternative as a sequence
          sequence.children.push_back(std::move(part));
          alternatives.children.push_back(std::move(sequence));
        }
      }
      if (alternatives.children.empty()) return false;
      *out = std::move(alternatives);
      return true;
    }
    case RegexNode::Kind::kSequence: {
      if (!nullable(node)) {
        *out = node;
        return true;
      }
      // Every item is nullable: a non-empty match starts with the first item
      // that matches something, followed by the rest as they are.
      RegexNode alternatives;
      alternatives.kind = RegexNode::Kind::kAlternation;
      for (size_t i = 0; i < node.children.size(); ++i) {
        RegexNode first;
        if (!non_empty_part(node.children[i], &first, budget)) continue;
        RegexNode branch;
        branch.children.push_back(std::move(first));
        branch.children.insert(branch.children.end(), node.children.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                               node.children.end());
        alternatives.children.push_back(std::move(branch));
      }
      if (alternatives.children.empty()) return false;
      *out = std::move(alternatives);
      return true;
    }
  }
  return false;
}

class PatternWriter {
 public:
  uint64_t repetition() const { return repetition_; }
  // `node` as one GBNF item (parenthesized when it is several).
  std::string item(const RegexNode& node);
  std::string sequence(const RegexNode& node);

 private:
  std::string alternation(const RegexNode& node);
  std::string repeat(const RegexNode& node);

  uint64_t repetition_ = 0;
};

std::string PatternWriter::item(const RegexNode& node) {
  switch (node.kind) {
    case RegexNode::Kind::kSet:
      if (is_single_char(node)) return gbnf_literal(json_text(node.set.spans()[0].first));
      return set_expression(node.set);
    case RegexNode::Kind::kRepeat: return repeat(node);
    case RegexNode::Kind::kAlternation:
      if (node.children.size() > 1) return "(" + alternation(node) + ")";
      return item(node.children[0]);
    case RegexNode::Kind::kSequence:
      if (node.children.size() == 1) return item(node.children[0]);
      if (node.children.empty()) return "\"\"";
      return "(" + sequence(node) + ")";
  }
  return "\"\"";
}

// Items separated by spaces; runs of single characters as one literal.
std::string PatternWriter::sequence(const RegexNode& node) {
  if (node.children.empty()) return "\"\"";
  std::string out;
  std::string literal;
  auto flush = [&] {
    if (literal.empty()) return;
    out += (out.empty() ? "" : " ") + gbnf_literal(literal);
    literal.clear();
  };
  for (const RegexNode& child : node.children) {
    if (is_single_char(child)) {
      literal += json_text(child.set.spans()[0].first);
      continue;
    }
    flush();
    out += (out.empty() ? "" : " ") + item(child);
  }
  flush();
  return out;
}

std::string PatternWriter::alternation(const RegexNode& node) {
  std::string out;
  for (size_t i = 0; i < node.children.size(); ++i) out += (i ? " | " : "") + sequence(node.children[i]);
  return out;
}

std::string PatternWriter::repeat(const RegexNode& node) {
  if (node.max == 0) return "\"\"";
  const bool counted = node.min > 1 || (node.max > 1 && node.max != kUnboundedCount);
  if (counted) repetition_ += node.max == kUnboundedCount ? node.min : node.max;
  if (repetition_ > kSchemaMaxRepetitionTotal) {
    throw PatternError("repetition counts add up to more than " + std::to_string(kSchemaMaxRepetitionTotal) +
                       " (kSchemaMaxRepetitionTotal)");
  }
  if (node.max == kUnboundedCount && nullable(node.children[0])) {
    // x{m,} with x nullable matches what (x's non-empty part)* does.
    RegexNode part;
    uint32_t budget = kNonEmptyPartBudget;
    if (!non_empty_part(node.children[0], &part, &budget)) return "\"\"";
    return repeat(repeat_node(std::move(part), 0, kUnboundedCount));
  }
  // A GBNF item takes one suffix: "(x+)?", never "x+?".
  const RegexNode* inner = &node.children[0];
  while (inner->kind != RegexNode::Kind::kSet && inner->kind != RegexNode::Kind::kRepeat &&
         inner->children.size() == 1) {
    inner = &inner->children[0];
  }
  std::string text = item(*inner);
  if (inner->kind == RegexNode::Kind::kRepeat) text = "(" + text + ")";
  return text + gbnf_repetition(node.min, node.max);
}

}  // namespace

PatternGrammar pattern_to_gbnf(std::string_view pattern, std::string_view any_char) {
  const std::vector<Branch> branches = RegexParser(pattern).parse_top();
  PatternWriter writer;
  const std::string any_text = std::string(any_char) + "*";
  std::string body;
  for (const Branch& branch : branches) {
    std::string text = branch.sequence.children.empty() ? "" : writer.sequence(branch.sequence);
    if (!branch.anchored_start) text = any_text + (text.empty() ? "" : " " + text);
    if (!branch.anchored_end && text != any_text) text += (text.empty() ? "" : " ") + any_text;
    if (text.empty()) text = "\"\"";
    body += (body.empty() ? "" : " | ") + text;
  }
  if (branches.size() > 1) body = "(" + body + ")";
  return {gbnf_literal("\"") + " " + body + " " + gbnf_literal("\""), writer.repetition()};
}

}  // namespace peak::sampling
