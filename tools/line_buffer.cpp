#include "line_buffer.h"

#include <algorithm>
#include <iterator>

#include "text_format.h"

namespace {

struct Range {
  uint32_t first, last;
};

bool in(const Range* begin, const Range* end, uint32_t cp) {
  const Range* r = std::upper_bound(begin, end, cp, [](uint32_t c, const Range& x) { return c < x.first; });
  return r != begin && cp <= (r - 1)->last;
}

// Combining marks and zero-width characters, sorted: they join the character before them.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x05bf, 0x05bf}, {0x05c1, 0x05c2}, {0x05c4, 0x05c5},
    {0x05c7, 0x05c7}, {0x0610, 0x061a}, {0x064b, 0x065f}, {0x0670, 0x0670}, {0x06d6, 0x06dc}, {0x06df, 0x06e4},
    {0x0900, 0x0902}, {0x093a, 0x093a}, {0x093c, 0x093c}, {0x0941, 0x0948}, {0x094d, 0x094d}, {0x0e31, 0x0e31},
    {0x0e34, 0x0e3a}, {0x0e47, 0x0e4e}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x20d0, 0x20ff},
    {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xe0100, 0xe01ef},
};

// East Asian wide and fullwidth characters and the emoji blocks, sorted.
constexpr Range kWide[] = {
    {0x1100, 0x115f},   {0x231a, 0x231b},   {0x2329, 0x232a},   {0x23e9, 0x23ec},   {0x23f0, 0x23f0},
    {0x23f3, 0x23f3},   {0x25fd, 0x25fe},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267f, 0x267f},
    {0x2693, 0x2693},   {0x26a1, 0x26a1},   {0x26aa, 0x26ab},   {0x26bd, 0x26be},   {0x26c4, 0x26c5},
    {0x26ce, 0x26ce},   {0x26d4, 0x26d4},   {0x26ea, 0x26ea},   {0x26f2, 0x26f3},   {0x26f5, 0x26f5},
    {0x26fa, 0x26fa},   {0x26fd, 0x26fd},   {0x2705, 0x2705},   {0x270a, 0x270b},   {0x2728, 0x2728},
    {0x274c, 0x274c},   {0x274e, 0x274e},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27b0, 0x27b0},   {0x27bf, 0x27bf},   {0x2b1b, 0x2b1c},   {0x2b50, 0x2b50},   {0x2b55, 0x2b55},
    {0x2e80, 0x303e},   {0x3041, 0x33ff},   {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},
    {0xa960, 0xa97f},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},
    {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf}, {0x1f18e, 0x1f18e},
    {0x1f191, 0x1f19a}, {0x1f200, 0x1f251}, {0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb},
    {0x1f90c, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
};

bool zero_width_at(std::string_view s, size_t i) {
  size_t n = 0;
  return column_width(decode_char(s, i, &n)) == 0;
}

// The start of the single code point (or invalid byte) that ends at offset i > 0.
size_t code_point_start_before(std::string_view s, size_t i) {
  for (size_t back = 2; back <= 4 && back <= i; ++back) {
    const auto b = static_cast<unsigned char>(s[i - back + 1]);
    if ((b & 0xc0) != 0x80) break;  // s[i - back + 1] starts a sequence: it is not a longer one
    if (utf8_sequence_length(s, i - back) == back) return i - back;
  }
  return i - 1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Letters and digits; any non-ASCII byte counts as part of a word.
bool is_word_byte(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b >= 0x80 || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

}  // namespace

uint32_t decode_char(std::string_view s, size_t i, size_t* length) {
  const size_t n = utf8_sequence_length(s, i);
  if (n == 0) {
    *length = 1;
    return 0xfffd;
  }
  *length = n;
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (n == 1) return b0;
  uint32_t cp = b0 & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
  return cp;
}

int column_width(uint32_t cp) {
  if (cp < 0x300) return 1;
  if (in(std::begin(kZeroWidth), std::end(kZeroWidth), cp)) return 0;
  if (in(std::begin(kWide), std::end(kWide), cp)) return 2;
  return 1;
}

size_t previous_boundary(std::string_view s, size_t i) {
  while (i > 0) {
    i = code_point_start_before(s, i);
    if (!zero_width_at(s, i)) break;
  }
  return i;
}

size_t next_boundary(std::string_view s, size_t i) {
  if (i >= s.size()) return s.size();
  size_t n = 0;
  decode_char(s, i, &n);
  i += n;
  while (i < s.size() && zero_width_at(s, i)) {
    decode_char(s, i, &n);
    i += n;
  }
  return i;
}

void LineBuffer::assign(std::string text) {
  text_ = std::move(text);
  cursor_ = text_.size();
}

void LineBuffer::insert(std::string_view s) {
  text_.insert(cursor_, s);
  cursor_ += s.size();
}

void LineBuffer::move_left() { cursor_ = previous_boundary(text_, cursor_); }
void LineBuffer::move_right() { cursor_ = next_boundary(text_, cursor_); }

void LineBuffer::move_line_start() {
  const size_t nl = cursor_ == 0 ? std::string::npos : text_.rfind('\n', cursor_ - 1);
  cursor_ = nl == std::string::npos ? 0 : nl + 1;
}

void LineBuffer::move_line_end() {
  const size_t nl = text_.find('\n', cursor_);
  cursor_ = nl == std::string::npos ? text_.size() : nl;
}

size_t LineBuffer::word_start_before(size_t i) const {
  while (i > 0 && !is_word_byte(text_[i - 1])) i = previous_boundary(text_, i);
  while (i > 0 && is_word_byte(text_[i - 1])) i = previous_boundary(text_, i);
  return i;
}

size_t LineBuffer::word_end_after(size_t i) const {
  while (i < text_.size() && !is_word_byte(text_[i])) i = next_boundary(text_, i);
  while (i < text_.size() && is_word_byte(text_[i])) i = next_boundary(text_, i);
  return i;
}

void LineBuffer::move_word_left() { cursor_ = word_start_before(cursor_); }
void LineBuffer::move_word_right() { cursor_ = word_end_after(cursor_); }

std::string LineBuffer::erase_range(size_t from, size_t to) {
  std::string removed = text_.substr(from, to - from);
  text_.erase(from, to - from);
  cursor_ = from;
  return removed;
}

void LineBuffer::erase_before() { erase_range(previous_boundary(text_, cursor_), cursor_); }
void LineBuffer::erase_at() {
  const size_t at = cursor_;
  erase_range(at, next_boundary(text_, at));
}

std::string LineBuffer::kill_to_line_start() {
  const size_t end = cursor_;
  move_line_start();
  if (cursor_ == end && cursor_ > 0) --cursor_;  // the newline before this line
  return erase_range(cursor_, end);
}

std::string LineBuffer::kill_to_line_end() {
  const size_t start = cursor_;
  size_t end = text_.find('\n', start);
  if (end == std::string::npos) end = text_.size();
  if (end == start && end < text_.size()) ++end;  // the newline after this line
  return erase_range(start, end);
}

std::string LineBuffer::kill_word_before() {
  size_t i = cursor_;
  while (i > 0 && is_space(text_[i - 1])) --i;
  while (i > 0 && !is_space(text_[i - 1])) i = previous_boundary(text_, i);
  return erase_range(i, cursor_);
}

std::string LineBuffer::kill_alnum_word_before() { return erase_range(word_start_before(cursor_), cursor_); }

std::string LineBuffer::kill_word_after() {
  const size_t start = cursor_;
  return erase_range(start, word_end_after(start));
}
