#include "sampling/gbnf_parser.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/utf8.h"

namespace peak::sampling {
namespace {

using Body = std::vector<GrammarElement>;

constexpr uint32_t kUnbounded = UINT32_MAX;
constexpr uint32_t kSurrogateFirst = 0xD800;
constexpr uint32_t kSurrogateLast = 0xDFFF;
constexpr size_t kExcerptBytes = 40;  // how much of its text a helper rule's name quotes

struct RuleDraft {
  std::string name;
  Body body;         // alternatives separated by kAltEnd, closed by kRuleEnd
  size_t offset;     // where it is defined (where first used, until then)
  size_t first_use;  // where first used or defined
  bool defined;
};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<CodePointRange> merge(std::vector<CodePointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodePointRange& a, const CodePointRange& b) { return a.first < b.first; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, range.last);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

std::vector<CodePointRange> complement(const std::vector<CodePointRange>& merged) {
  std::vector<CodePointRange> out;
  uint32_t next = 0;
  for (const CodePointRange& range : merged) {
    if (range.first > next) out.push_back({next, range.first - 1});
    next = range.last + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

// Strict UTF-8 never decodes to a surrogate: the matcher's sets leave them out.
std::vector<CodePointRange> without_surrogates(const std::vector<CodePointRange>& merged) {
  std::vector<CodePointRange> out;
  for (const CodePointRange& range : merged) {
    if (range.last < kSurrogateFirst || range.first > kSurrogateLast) {
      out.push_back(range);
      continue;
    }
    if (range.first < kSurrogateFirst) out.push_back({range.first, kSurrogateFirst - 1});
    if (range.last > kSurrogateLast) out.push_back({kSurrogateLast + 1, range.last});
  }
  return out;
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  GrammarTables parse(std::string_view root);

 private:
  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    throw grammar_error_at(text_, offset, message);
  }
  std::string where(size_t offset) const;
  std::string describe_char_at(size_t offset) const;
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void check_text() const;
  void skip_space(bool newlines);
  std::string_view read_name();
  void parse_rule();
  void expect_line_end(const std::string& rule);
  void parse_alternatives(Body& body, int depth);
  void parse_sequence(Body& body, int depth);
  bool parse_item(Body& body, int depth);
  void parse_group(Body& body, int depth);
  void parse_literal(Body& body);
  void parse_char_class(Body& body);
  uint32_t parse_char();
  uint32_t parse_escape();
  uint32_t parse_hex(size_t escape, int digits);
  void parse_quantifier(Body& body, size_t item_begin, size_t item_offset);
  std::pair<uint32_t, uint32_t> parse_braces();
  uint32_t parse_count();
  void repeat(Body& body, GrammarElement item, uint32_t min, uint32_t max, const std::string& name);

  uint32_t rule_for_name(std::string_view name, size_t offset);
  uint32_t add_rule(std::string name, size_t offset, Body body);
  GrammarElement call(uint32_t rule) const { return {GrammarOp::kRule, rule}; }
  void append(Body& body, GrammarElement element);
  GrammarElement char_set(size_t offset, std::vector<CodePointRange> ranges, bool negated);
  std::string helper_name(size_t begin) const;
  void check_definitions(std::string_view root) const;
  GrammarTables flatten(uint32_t root);

  std::string_view text_;
  size_t pos_ = 0;
  size_t item_offset_ = 0;  // the item being read, for the errors of the size bounds
  std::string rule_;        // the named rule being read, for helper rules' names
  std::vector<RuleDraft> rules_;
  std::unordered_map<std::string, uint32_t> rule_ids_;
  std::map<std::vector<uint32_t>, uint32_t> set_ids_;  // a set's ranges as first, last, ...
  std::vector<CodePointRange> ranges_;
  std::vector<uint32_t> set_begin_{0};
  size_t element_count_ = 0;
};

std::string GbnfParser::where(size_t offset) const {
  const GrammarError error = grammar_error_at(text_, offset, "");
  return "line " + std::to_string(error.line()) + ", column " + std::to_string(error.column());
}

std::string GbnfParser::describe_char_at(size_t offset) const {
  if (offset >= text_.size()) return "the end of the text";
  const char c = text_[offset];
  if (c == '\n' || c == '\r') return "the end of the line";
  const unsigned char byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte == 0x7F) {
    static const char kHex[] = "0123456789ABCDEF";
    return std::string("control character U+00") + kHex[byte >> 4] + kHex[byte & 15];
  }
  const tokenizer::Utf8Char decoded = tokenizer::decode_utf8_char(text_, offset);
  return "'" + std::string(text_.substr(offset, decoded.length)) + "'";
}

void GbnfParser::check_text() const {
  if (text_.empty()) fail(0, "empty grammar");
  if (text_.size() > kGrammarMaxTextBytes) {
    fail(0, "grammar text of " + std::to_string(text_.size()) + " bytes is above the limit of " +
                std::to_string(kGrammarMaxTextBytes));
  }
  for (size_t offset = 0; offset < text_.size();) {
    const tokenizer::Utf8Char decoded = tokenizer::decode_utf8_char(text_, offset);
    if (decoded.status != tokenizer::Utf8Char::Status::Valid) fail(offset, "invalid UTF-8 in the grammar text");
    offset += decoded.length;
  }
}

// Spaces, tabs and # comments; line ends too when `newlines` (inside
// parentheses, after '|' and '::=', between rules).
void GbnfParser::skip_space(bool newlines) {
  while (!at_end()) {
    const char c = peek();
    if (c == ' ' || c == '\t') {
      ++pos_;
    } else if (c == '#') {
      while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
    } else if ((c == '\n' || c == '\r') && newlines) {
      ++pos_;
    } else {
      return;
    }
  }
}

std::string_view GbnfParser::read_name() {
  const size_t begin = pos_;
  while (!at_end() && is_name_char(peek())) ++pos_;
  return text_.substr(begin, pos_ - begin);
}

GrammarTables GbnfParser::parse(std::string_view root) {
  check_text();
  skip_space(true);
  if (at_end()) fail(0, "empty grammar: no rules, only spaces and comments");
  while (!at_end()) {
    parse_rule();
    skip_space(true);
  }
  check_definitions(root);
  return flatten(rule_ids_.at(std::string(root)));
}

void GbnfParser::parse_rule() {
  const size_t begin = pos_;
  const std::string_view name = read_name();
  if (name.empty()) fail(pos_, "expected a rule name, found " + describe_char_at(pos_));
  skip_space(false);
  if (text_.substr(pos_, 3) != "::=") {
    fail(pos_, "expected '::=' after the rule name '" + std::string(name) + "', found " + describe_char_at(pos_));
  }
  pos_ += 3;
  skip_space(true);
  const uint32_t id = rule_for_name(name, begin);
  RuleDraft& rule = rules_[id];
  if (rule.defined) fail(begin, "rule '" + rule.name + "' is defined twice (first at " + where(rule.offset) + ")");
  rule.defined = true;
  rule.offset = begin;
  rule_ = rule.name;
  Body body;
  parse_alternatives(body, 0);
  rules_[id].body = std::move(body);
  expect_line_end(rules_[id].name);
}

void GbnfParser::expect_line_end(const std::string& rule) {
  if (at_end() || peek() == '\n' || peek() == '\r') return;
  if (peek() == ')') fail(pos_, "')' without a matching '('");
  fail(pos_, "unexpected " + describe_char_at(pos_) + " in rule '" + rule + "'");
}

void GbnfParser::parse_alternatives(Body& body, int depth) {
  parse_sequence(body, depth);
  while (peek() == '|') {
    ++pos_;
    skip_space(true);
    append(body, {GrammarOp::kAltEnd, 0});
    parse_sequence(body, depth);
  }
  append(body, {GrammarOp::kRuleEnd, 0});
}

void GbnfParser::parse_sequence(Body& body, int depth) {
  for (;;) {
    const size_t item_begin = body.size();
    const size_t item_offset = pos_;
    item_offset_ = item_offset;
    if (!parse_item(body, depth)) return;
    parse_quantifier(body, item_begin, item_offset);
    skip_space(depth > 0);
  }
}

// Appends the elements of one item; false (nothing read) when none starts here.
bool GbnfParser::parse_item(Body& body, int depth) {
  const char c = peek();
  if (c == '"') {
    parse_literal(body);
  } else if (c == '[') {
    parse_char_class(body);
  } else if (c == '.') {
    ++pos_;
    append(body, char_set(pos_ - 1, {{0, kMaxCodePoint}}, false));
  } else if (c == '(') {
    parse_group(body, depth);
  } else if (!at_end() && is_name_char(c)) {
    const size_t begin = pos_;
    append(body, call(rule_for_name(read_name(), begin)));
  } else {
    return false;
  }
  return true;
}

void GbnfParser::parse_group(Body& body, int depth) {
  const size_t open = pos_;
  if (depth >= kGrammarMaxNesting) {
    fail(open, "parentheses nest deeper than the limit of " + std::to_string(kGrammarMaxNesting));
  }
  ++pos_;
  skip_space(true);
  Body inner;
  parse_alternatives(inner, depth + 1);
  if (at_end()) fail(open, "'(' is never closed");
  if (peek() != ')') {
    fail(pos_, "expected ')' for the '(' at " + where(open) + ", found " + describe_char_at(pos_));
  }
  ++pos_;
  append(body, call(add_rule(helper_name(open), open, std::move(inner))));
}

void GbnfParser::parse_literal(Body& body) {
  const size_t open = pos_++;
  for (;;) {
    if (at_end()) fail(open, "string literal is never closed");
    if (peek() == '"') break;
    const size_t offset = pos_;
    const uint32_t code_point = parse_char();
    append(body, char_set(offset, {{code_point, code_point}}, false));
  }
  ++pos_;
}

void GbnfParser::parse_char_class(Body& body) {
  const size_t open = pos_++;
  const bool negated = peek() == '^';
  if (negated) ++pos_;
  std::vector<CodePointRange> ranges;
  for (;;) {
    if (at_end()) fail(open, "character class '[' is never closed");
    if (peek() == ']') break;
    const size_t offset = pos_;
    const uint32_t first = parse_char();
    uint32_t last = first;
    if (peek() == '-' && pos_ + 1 < text_.size() && peek(1) != ']') {
      ++pos_;
      last = parse_char();
      if (last < first) fail(offset, "range in character class goes backwards (its end is below its start)");
    }
    ranges.push_back({first, last});
  }
  ++pos_;
  append(body, char_set(open, std::move(ranges), negated));
}

// One code point of a literal or class, its escape decoded.
uint32_t GbnfParser::parse_char() {
  if (peek() == '\\') return parse_escape();
  const tokenizer::Utf8Char decoded = tokenizer::decode_utf8_char(text_, pos_);
  pos_ += decoded.length;
  return decoded.cpt;
}

uint32_t GbnfParser::parse_escape() {
  const size_t escape = pos_++;
  if (at_end()) fail(escape, "'\\' at the end of the text");
  const char c = text_[pos_++];
  switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-': return static_cast<unsigned char>(c);
    case 'x': return parse_hex(escape, 2);
    case 'u': return parse_hex(escape, 4);
    case 'U': return parse_hex(escape, 8);
    default: break;
  }
  if (c > ' ' && c < 0x7F) fail(escape, std::string("unknown escape '\\") + c + "'");
  fail(escape, "unknown escape: '\\' followed by " + describe_char_at(pos_ - 1));
}

uint32_t GbnfParser::parse_hex(size_t escape, int digits) {
  uint64_t value = 0;
  for (int i = 0; i < digits; ++i) {
    const int digit = hex_digit(peek());
    if (digit < 0) {
      fail(escape, "escape '\\" + std::string(1, text_[escape + 1]) + "' needs " + std::to_string(digits) +
                       " hexadecimal digits");
    }
    value = value * 16 + static_cast<uint64_t>(digit);
    ++pos_;
  }
  if (value > kMaxCodePoint) fail(escape, "escape names no Unicode code point (above U+10FFFF)");
  return static_cast<uint32_t>(value);
}

void GbnfParser::parse_quantifier(Body& body, size_t item_begin, size_t item_offset) {
  const char c = peek();
  uint32_t min = 0;
  uint32_t max = 0;
  if (c == '*' || c == '+' || c == '?') {
    ++pos_;
    min = c == '+' ? 1 : 0;
    max = c == '?' ? 1 : kUnbounded;
  } else if (c == '{') {
    std::tie(min, max) = parse_braces();
  } else {
    return;
  }
  item_offset_ = item_offset;
  // The item as one element: several (a literal, "" too) become a helper rule.
  GrammarElement item;
  if (body.size() - item_begin == 1) {
    item = body.back();
    body.pop_back();
    --element_count_;
  } else {
    Body elements(body.begin() + static_cast<std::ptrdiff_t>(item_begin), body.end());
    body.resize(item_begin);
    append(elements, {GrammarOp::kRuleEnd, 0});
    item = call(add_rule(helper_name(item_offset), item_offset, std::move(elements)));
  }
  repeat(body, item, min, max, helper_name(item_offset));
}

std::pair<uint32_t, uint32_t> GbnfParser::parse_braces() {
  const size_t open = pos_++;
  skip_space(false);
  const uint32_t min = parse_count();
  uint32_t max = min;
  skip_space(false);
  if (peek() == ',') {
    ++pos_;
    skip_space(false);
    max = peek() >= '0' && peek() <= '9' ? parse_count() : kUnbounded;
    skip_space(false);
  }
  if (at_end() || peek() == '\n' || peek() == '\r') fail(open, "'{' is never closed");
  if (peek() != '}') fail(pos_, "expected '}' to end the repetition count, found " + describe_char_at(pos_));
  ++pos_;
  if (max < min) fail(open, "repetition {m,n} whose maximum is below its minimum");
  return {min, max};
}

uint32_t GbnfParser::parse_count() {
  const size_t begin = pos_;
  uint64_t value = 0;
  while (!at_end() && peek() >= '0' && peek() <= '9') {
    value = std::min<uint64_t>(value * 10 + static_cast<uint64_t>(peek() - '0'), uint64_t{kUnbounded});
    ++pos_;
  }
  if (pos_ == begin) fail(pos_, "expected a repetition count, found " + describe_char_at(pos_));
  if (value > kGrammarMaxRepetition) {
    fail(begin, "repetition count " + std::string(text_.substr(begin, pos_ - begin)) + " is above the limit of " +
                    std::to_string(kGrammarMaxRepetition));
  }
  return static_cast<uint32_t>(value);
}

// Appends `item` repeated min..max times (max kUnbounded: no maximum):
// min copies, then `h ::= item h | ""` for no maximum, or max - min nested
// optional copies, `h1 ::= item h2 | ""` ... `hk ::= item | ""`.
void GbnfParser::repeat(Body& body, GrammarElement item, uint32_t min, uint32_t max, const std::string& name) {
  for (uint32_t i = 0; i < min; ++i) append(body, item);
  if (max == min) return;
  const GrammarElement alt_end{GrammarOp::kAltEnd, 0};
  const GrammarElement rule_end{GrammarOp::kRuleEnd, 0};
  if (max == kUnbounded) {
    const uint32_t star = static_cast<uint32_t>(rules_.size());
    Body star_body;
    for (const GrammarElement& element : {item, call(star), alt_end, rule_end}) append(star_body, element);
    append(body, call(add_rule(name, item_offset_, std::move(star_body))));
    return;
  }
  Body innermost;
  for (const GrammarElement& element : {item, alt_end, rule_end}) append(innermost, element);
  uint32_t optional = add_rule(name, item_offset_, std::move(innermost));
  for (uint32_t i = min + 1; i < max; ++i) {
    Body outer;
    for (const GrammarElement& element : {item, call(optional), alt_end, rule_end}) append(outer, element);
    optional = add_rule(name, item_offset_, std::move(outer));
  }
  append(body, call(optional));
}

uint32_t GbnfParser::rule_for_name(std::string_view name, size_t offset) {
  const auto found = rule_ids_.find(std::string(name));
  if (found != rule_ids_.end()) return found->second;
  const uint32_t id = add_rule(std::string(name), offset, {});
  rules_[id].defined = false;
  rule_ids_.emplace(std::string(name), id);
  return id;
}

uint32_t GbnfParser::add_rule(std::string name, size_t offset, Body body) {
  if (rules_.size() >= kGrammarMaxRules) {
    fail(offset, "the grammar needs more than " + std::to_string(kGrammarMaxRules) +
                     " rules (named ones, and the helpers of groups and repetitions)");
  }
  rules_.push_back({std::move(name), std::move(body), offset, offset, true});
  return static_cast<uint32_t>(rules_.size() - 1);
}

void GbnfParser::append(Body& body, GrammarElement element) {
  if (++element_count_ > kGrammarMaxElements) {
    fail(item_offset_, "the grammar compiles to more than " + std::to_string(kGrammarMaxElements) +
                           " elements (repetitions expanded)");
  }
  body.push_back(element);
}

GrammarElement GbnfParser::char_set(size_t offset, std::vector<CodePointRange> ranges, bool negated) {
  std::vector<CodePointRange> merged = merge(std::move(ranges));
  if (negated) merged = complement(merged);
  merged = without_surrogates(merged);
  if (merged.empty()) fail(offset, "matches no character (UTF-8 text holds no surrogate code point)");
  std::vector<uint32_t> key;
  for (const CodePointRange& range : merged) key.insert(key.end(), {range.first, range.last});
  const auto [found, added] = set_ids_.emplace(std::move(key), static_cast<uint32_t>(set_begin_.size() - 1));
  if (added) {
    ranges_.insert(ranges_.end(), merged.begin(), merged.end());
    set_begin_.push_back(static_cast<uint32_t>(ranges_.size()));
  }
  return {GrammarOp::kCharSet, found->second};
}

// `("a" | b)* (in root)`: the text from `begin` to here, shortened, on one line.
std::string GbnfParser::helper_name(size_t begin) const {
  std::string excerpt;
  size_t offset = begin;
  while (offset < pos_ && offset < text_.size()) {
    const tokenizer::Utf8Char decoded = tokenizer::decode_utf8_char(text_, offset);
    if (excerpt.size() + decoded.length > kExcerptBytes) {
      excerpt += "...";
      break;
    }
    const char c = text_[offset];
    excerpt +=
        c == '\n' || c == '\r' || c == '\t' ? std::string(" ") : std::string(text_.substr(offset, decoded.length));
    offset += decoded.length;
  }
  return excerpt + " (in " + rule_ + ")";
}

void GbnfParser::check_definitions(std::string_view root) const {
  for (const RuleDraft& rule : rules_) {
    if (!rule.defined) fail(rule.first_use, "undefined rule '" + rule.name + "'");
  }
  if (rule_ids_.count(std::string(root)) == 0) fail(0, "no rule named '" + std::string(root) + "' (the root rule)");
}

GrammarTables GbnfParser::flatten(uint32_t root) {
  GrammarTables tables;
  tables.elements.reserve(element_count_);
  for (RuleDraft& rule : rules_) {
    tables.alternative_begin.push_back(static_cast<uint32_t>(tables.alternative_starts.size()));
    tables.alternative_starts.push_back(static_cast<uint32_t>(tables.elements.size()));
    for (const GrammarElement& element : rule.body) {
      tables.elements.push_back(element);
      if (element.op == GrammarOp::kAltEnd) {
        tables.alternative_starts.push_back(static_cast<uint32_t>(tables.elements.size()));
      }
    }
    tables.rule_names.push_back(std::move(rule.name));
    tables.rule_offsets.push_back(rule.offset);
  }
  tables.alternative_begin.push_back(static_cast<uint32_t>(tables.alternative_starts.size()));
  tables.ranges = std::move(ranges_);
  tables.set_begin = std::move(set_begin_);
  tables.root = root;
  return tables;
}

}  // namespace

GrammarTables parse_gbnf(std::string_view text, std::string_view root) { return GbnfParser(text).parse(root); }

GrammarError grammar_error_at(std::string_view text, size_t offset, const std::string& message) {
  offset = std::min(offset, text.size());
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset; ++i) {
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n') {
      ++line;
      column = 1;
    } else if ((byte & 0xC0) != 0x80) {
      ++column;
    }
  }
  return GrammarError(message, line, column);
}

}  // namespace peak::sampling
