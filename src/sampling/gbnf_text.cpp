#include "sampling/gbnf_text.h"

#include <algorithm>
#include <cstdio>

namespace peak::sampling {

CodePointSet::CodePointSet(std::initializer_list<CodePointRange> spans) {
  for (const CodePointRange& span : spans) add(span.first, span.last);
}

void CodePointSet::add(uint32_t first, uint32_t last) {
  // Spans that overlap or touch [first, last] merge with it.
  auto begin = std::lower_bound(spans_.begin(), spans_.end(), first,
                                [](const CodePointRange& span, uint32_t cp) { return span.last + 1 < cp; });
  auto end = begin;
  while (end != spans_.end() && end->first <= last + 1) {
    first = std::min(first, end->first);
    last = std::max(last, end->last);
    ++end;
  }
  begin = spans_.erase(begin, end);
  spans_.insert(begin, {first, last});
}

void CodePointSet::add(const CodePointSet& other) {
  for (const CodePointRange& span : other.spans_) add(span.first, span.last);
}

CodePointSet CodePointSet::complement() const {
  CodePointSet out;
  uint32_t next = 0;
  for (const CodePointRange& span : spans_) {
    if (span.first > next) out.spans_.push_back({next, span.first - 1});
    next = span.last + 1;
  }
  if (next <= kMaxCodePoint) out.spans_.push_back({next, kMaxCodePoint});
  return out;
}

CodePointSet CodePointSet::intersect(const CodePointSet& other) const {
  CodePointSet either = complement();
  either.add(other.complement());
  return either.complement();
}

bool CodePointSet::contains(uint32_t code_point) const {
  auto it = std::lower_bound(spans_.begin(), spans_.end(), code_point,
                             [](const CodePointRange& span, uint32_t cp) { return span.last < cp; });
  return it != spans_.end() && it->first <= code_point;
}

namespace {

std::string hex_escape(char letter, uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*X", letter, digits, static_cast<unsigned>(value));
  return buf;
}

std::string class_char(uint32_t cp) {
  if (cp == '\\' || cp == ']' || cp == '-' || cp == '[' || cp == '"') return std::string{'\\', static_cast<char>(cp)};
  if (cp == '^' || cp < 0x20 || cp == 0x7F) return hex_escape('x', cp, 2);
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  if (cp <= 0xFFFF) return hex_escape('u', cp, 4);
  return hex_escape('U', cp, 8);
}

std::string class_body(const std::vector<CodePointRange>& spans) {
  std::string out;
  for (const CodePointRange& span : spans) {
    out += class_char(span.first);
    if (span.last != span.first) out += '-' + class_char(span.last);
  }
  return out;
}

}  // namespace

std::string gbnf_literal(std::string_view bytes) {
  std::string out = "\"";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += hex_escape('x', byte, 2);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string gbnf_char_class(const CodePointSet& set) {
  const CodePointSet others = set.complement();
  if (others.spans().size() <= set.spans().size() && !others.empty()) return "[^" + class_body(others.spans()) + "]";
  return "[" + class_body(set.spans()) + "]";
}

std::string gbnf_repetition(uint32_t min, uint32_t max) {
  if (min == 1 && max == 1) return "";
  if (min == 0 && max == 1) return "?";
  if (min == 0 && max == kUnboundedCount) return "*";
  if (min == 1 && max == kUnboundedCount) return "+";
  if (min == max) return "{" + std::to_string(min) + "}";
  if (max == kUnboundedCount) return "{" + std::to_string(min) + ",}";
  return "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

}  // namespace peak::sampling
