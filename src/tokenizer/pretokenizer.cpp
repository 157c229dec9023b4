#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "tokenizer/unicode.h"

namespace peak::tokenizer {

namespace {

using unicode::is_letter;
using unicode::is_number;
using unicode::is_punctuation;
using unicode::is_whitespace;

bool is_cr_or_lf(uint32_t cpt) { return cpt == '\r' || cpt == '\n'; }
bool is_ascii_digit(uint32_t cpt) { return cpt >= '0' && cpt <= '9'; }
// [^\s\p{L}\p{N}]
bool is_other_than_space_letter_number(uint32_t cpt) {
  return (unicode::flags(cpt) & (unicode::kWhitespace | unicode::kLetter | unicode::kNumber)) == 0;
}

// One piece of text being cut: code points [begin, end) of the whole input. Reads
// outside the piece see nothing, as a regex run on the piece alone would.
struct Piece {
  const uint32_t* cpts;
  size_t begin;
  size_t end;

  bool has(size_t pos) const { return pos >= begin && pos < end; }
  template <typename Predicate>
  bool test(size_t pos, Predicate predicate) const { return has(pos) && predicate(cpts[pos]); }
  template <typename Predicate>
  size_t run_end(size_t pos, Predicate predicate) const {
    while (test(pos, predicate)) ++pos;
    return pos;
  }
};

// Appends the lengths of the words of one piece, in order.
class WordSink {
 public:
  WordSink(std::vector<size_t>& out, size_t begin) : out_(out), last_end_(begin) {}
  // Ends the current word at `end`; returns its length (0 adds nothing).
  size_t end_word(size_t end) {
    const size_t length = end - last_end_;
    if (length > 0) out_.push_back(length);
    last_end_ = end;
    return length;
  }

 private:
  std::vector<size_t>& out_;
  size_t last_end_;
};

// 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive: the match length or 0.
size_t match_contraction(const Piece& piece, size_t pos, bool ignore_case) {
  if (piece.cpts[pos] != '\'' || !piece.has(pos + 1)) return 0;
  auto lower = [&](size_t at) -> uint32_t {
    const uint32_t cpt = piece.cpts[at];
    return ignore_case && cpt >= 'A' && cpt <= 'Z' ? cpt + ('a' - 'A') : cpt;
  };
  const uint32_t next = lower(pos + 1);
  if (next == 's' || next == 't' || next == 'm' || next == 'd') return 2;
  if (!piece.has(pos + 2)) return 0;
  const uint32_t next2 = lower(pos + 2);
  if ((next == 'r' && next2 == 'e') || (next == 'v' && next2 == 'e') || (next == 'l' && next2 == 'l')) return 3;
  return 0;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
// The alternatives are tried in order at each position, as a backtracking regex does.
void split_gpt2(const Piece& piece, std::vector<size_t>& out) {
  WordSink sink(out, piece.begin);
  for (size_t pos = piece.begin; pos < piece.end;) {
    if (const size_t n = match_contraction(piece, pos, false)) {
      pos += sink.end_word(pos + n);
      continue;
    }
    const size_t body = piece.cpts[pos] == ' ' ? pos + 1 : pos;  // after the optional space
    if (piece.test(body, is_letter)) {
      pos = piece.run_end(body, is_letter);
      sink.end_word(pos);
      continue;
    }
    if (piece.test(body, is_number)) {
      pos = piece.run_end(body, is_number);
      sink.end_word(pos);
      continue;
    }
    if (piece.test(body, is_other_than_space_letter_number)) {
      pos = piece.run_end(body, is_other_than_space_letter_number);
      sink.end_word(pos);
      continue;
    }
    const size_t spaces_end = piece.run_end(pos, is_whitespace);
    const size_t spaces = spaces_end - pos;
    if (spaces > 1 && spaces_end < piece.end) {
      // \s+(?!\S): leave the last space to start the next word
      pos = spaces_end - 1;
    } else if (spaces > 0) {
      pos = spaces_end;
    } else {
      ++pos;  // nothing matches: a word of its own
    }
    sink.end_word(pos);
  }
}

// " ?[^\s\p{L}\p{N}]+" and then a run of `trailing`: the match length at pos, or 0.
template <typename Predicate>
size_t match_symbols(const Piece& piece, size_t pos, Predicate trailing) {
  const size_t body = piece.cpts[pos] == ' ' ? pos + 1 : pos;
  if (!piece.test(body, is_other_than_space_letter_number)) return 0;
  return piece.run_end(piece.run_end(body, is_other_than_space_letter_number), trailing) - pos;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ : the match length at pos, or 1 where none matches (a word
// of its own).
size_t match_whitespace(const Piece& piece, size_t pos) {
  const size_t spaces_end = piece.run_end(pos, is_whitespace);
  size_t last_newline_end = 0;
  for (size_t i = pos; i < spaces_end; ++i) {
    if (is_cr_or_lf(piece.cpts[i])) last_newline_end = i + 1;
  }
  const size_t spaces = spaces_end - pos;
  if (last_newline_end > 0) return last_newline_end - pos;  // \s*[\r\n]+
  if (spaces > 1 && spaces_end < piece.end) return spaces - 1;  // \s+(?!\S)
  return spaces > 0 ? spaces : 1;  // \s+
}

// \p{N}{1,max_digits}: the match length at pos, or 0.
size_t match_digits(const Piece& piece, size_t pos, size_t max_digits) {
  size_t end = pos;
  while (end - pos < max_digits && piece.test(end, is_number)) ++end;
  return end - pos;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}
// | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
void split_llama3(const Piece& piece, size_t max_digits, std::vector<size_t>& out) {
  WordSink sink(out, piece.begin);
  for (size_t pos = piece.begin; pos < piece.end;) {
    const uint32_t cpt = piece.cpts[pos];
    size_t length = match_contraction(piece, pos, true);
    if (length == 0 && !is_cr_or_lf(cpt) && !is_number(cpt) && (is_letter(cpt) || piece.test(pos + 1, is_letter))) {
      length = piece.run_end(pos + 1, is_letter) - pos;
    }
    if (length == 0) length = match_digits(piece, pos, max_digits);
    if (length == 0) length = match_symbols(piece, pos, is_cr_or_lf);
    if (length == 0) length = match_whitespace(piece, pos);
    pos += sink.end_word(pos + length);
  }
}

// llama.cpp runs the gpt-4o regex through std::regex on a copy of the text in which
// every non-ASCII letter is one and the same stand-in byte, so its case classes
// [^a-z] and [^A-Z] (each within \p{L}) tell case apart for ASCII letters only: a
// non-ASCII letter is in both, whatever its case, and marks (\p{M}) are no letters.
bool is_letter_but_ascii_lower(uint32_t cpt) { return is_letter(cpt) && !(cpt >= 'a' && cpt <= 'z'); }
bool is_letter_but_ascii_upper(uint32_t cpt) { return is_letter(cpt) && !(cpt >= 'A' && cpt <= 'Z'); }
bool is_cr_lf_or_slash(uint32_t cpt) { return is_cr_or_lf(cpt) || cpt == '/'; }

// With U = is_letter_but_ascii_lower, L = is_letter_but_ascii_upper and C the
// case-insensitive contractions: [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?.
// The match length at pos, or 0. A backtracking regex takes the longest run of U,
// then gives letters back until L+ can start; only when it cannot (a run of A-Z not
// followed by a-z) does the second alternative take the run of U alone.
size_t match_cased_word(const Piece& piece, size_t pos) {
  const uint32_t cpt = piece.cpts[pos];
  const size_t start = !is_cr_or_lf(cpt) && !is_letter(cpt) && !is_number(cpt) ? pos + 1 : pos;
  if (!piece.test(start, is_letter)) return 0;
  const size_t upper_end = piece.run_end(start, is_letter_but_ascii_lower);
  size_t end = upper_end;
  if (piece.test(upper_end, is_letter_but_ascii_upper)) {
    end = piece.run_end(upper_end, is_letter_but_ascii_upper);
  } else {
    // U* gives letters back until L+ can start: at the run's last non-ASCII letter
    // (the only ones in both classes), and L+ ends right after it, at an A-Z or at
    // the run's end. With none, the second alternative takes the run of U alone.
    while (end > start && !is_letter_but_ascii_upper(piece.cpts[end - 1])) --end;
    if (end == start) end = upper_end;
  }
  if (piece.has(end)) end += match_contraction(piece, end, true);
  return end - pos;
}

// [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*
// |\s*[\r\n]+|\s+(?!\S)|\s+ (U, L and C as for match_cased_word).
void split_gpt4o(const Piece& piece, std::vector<size_t>& out) {
  WordSink sink(out, piece.begin);
  for (size_t pos = piece.begin; pos < piece.end;) {
    size_t length = match_cased_word(piece, pos);
    if (length == 0) length = match_digits(piece, pos, 3);
    if (length == 0) length = match_symbols(piece, pos, is_cr_lf_or_slash);
    if (length == 0) length = match_whitespace(piece, pos);
    pos += sink.end_word(pos + length);
  }
}

// Applies a regex that cannot match the empty string the way std::regex_iterator does:
// the leftmost match, then the next one after it; text between matches is kept as a
// piece. `match(piece, pos)` returns the length of the match starting at pos, or 0.
template <typename Matcher>
void split_by_matches(const Piece& piece, Matcher match, std::vector<size_t>& out) {
  WordSink sink(out, piece.begin);
  for (size_t pos = piece.begin; pos < piece.end;) {
    const size_t length = match(piece, pos);
    if (length == 0) {
      ++pos;
      continue;
    }
    sink.end_word(pos);
    pos += length;
    sink.end_word(pos);
  }
  sink.end_word(piece.end);
}

// X+ for a class X.
template <typename Predicate>
auto run_of(Predicate predicate) {
  return [predicate](const Piece& piece, size_t pos) { return piece.run_end(pos, predicate) - pos; };
}

// \s?X+ for a class X.
template <typename Predicate>
auto optional_space_then_run_of(Predicate predicate) {
  return [predicate](const Piece& piece, size_t pos) -> size_t {
    if (predicate(piece.cpts[pos])) return piece.run_end(pos, predicate) - pos;
    if (is_whitespace(piece.cpts[pos]) && piece.test(pos + 1, predicate)) {
      return piece.run_end(pos + 1, predicate) - pos;
    }
    return 0;
  };
}

// [\p{P}$+<=>^~|]+ (with ` when `with_backtick`).
auto punctuation_run(bool with_backtick) {
  return run_of([with_backtick](uint32_t cpt) {
    if (cpt < 0x80) {
      return std::string_view(with_backtick ? "$+<=>^~|`" : "$+<=>^~|").find(static_cast<char>(cpt)) !=
                 std::string_view::npos ||
             is_punctuation(cpt);
    }
    return is_punctuation(cpt);
  });
}

// [0-9][0-9][0-9]
size_t match_three_ascii_digits(const Piece& piece, size_t pos) {
  return piece.test(pos, is_ascii_digit) && piece.test(pos + 1, is_ascii_digit) && piece.test(pos + 2, is_ascii_digit)
             ? 3
             : 0;
}

struct CodepointRange {
  uint32_t first;
  uint32_t last;
};

// Membership in a character class written as explicit ranges. llama.cpp runs such
// classes on text whose non-ASCII White_Space characters were replaced by U+000B, so
// those never match even where a range spans them.
template <size_t N>
bool in_explicit_class(const CodepointRange (&ranges)[N], uint32_t cpt) {
  if (cpt >= 0x80 && is_whitespace(cpt)) return false;
  for (const CodepointRange& range : ranges) {
    if (cpt >= range.first && cpt <= range.last) return true;
  }
  return false;
}

// [一-龥ࠀ-一가-퟿]
constexpr CodepointRange kDeepseekCjk[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};
bool is_deepseek_cjk(uint32_t cpt) { return in_explicit_class(kDeepseekCjk, cpt); }

// deepseek-llm's letter class [A-Za-zµÀ-ÖØ-öø-ƺ...𞤀-𞥃] (its tokenizer.json, as quoted in
// llama.cpp's llama-vocab.cpp): cased letters of some scripts, as code point ranges.
constexpr CodepointRange kDeepseekLetters[] = {
    {0x0041, 0x005A},   {0x0061, 0x007A},   {0x00B5, 0x00B5},   {0x00C0, 0x00D6},   {0x00D8, 0x00F6},
    {0x00F8, 0x01BA},   {0x01BC, 0x01BF},   {0x01C4, 0x0293},   {0x0295, 0x02AF},   {0x0370, 0x0373},
    {0x0376, 0x0377},   {0x037B, 0x037D},   {0x037F, 0x037F},   {0x0386, 0x0386},   {0x0388, 0x038A},
    {0x038C, 0x038C},   {0x038E, 0x03A1},   {0x03A3, 0x03F5},   {0x03F7, 0x0481},   {0x048A, 0x052F},
    {0x0531, 0x0556},   {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
bool is_deepseek_letter(uint32_t cpt) { return in_explicit_class(kDeepseekLetters, cpt); }

// deepseek-llm's punctuation class [!-/:-~！-／：-～‘-‟　-。]
constexpr CodepointRange kDeepseekPunctuation[] = {{0x0021, 0x002F}, {0x003A, 0x007E}, {0xFF01, 0xFF0F},
                                                   {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}};
bool is_deepseek_punctuation(uint32_t cpt) { return in_explicit_class(kDeepseekPunctuation, cpt); }

// bloom's class [^(\s|.,!?…。，、।۔،)]: anything but whitespace and these.
bool is_bloom_word_character(uint32_t cpt) {
  constexpr uint32_t kExcluded[] = {'(', '|', '.', ',', '!', '?', 0x2026, 0x3002, 0xFF0C, 0x3001, 0x0964, 0x06D4,
                                    0x060C, ')'};
  return !is_whitespace(cpt) && std::find(std::begin(kExcluded), std::end(kExcluded), cpt) == std::end(kExcluded);
}

// " ?X+": an optional plain space (not any whitespace), then a run of X.
template <typename Predicate>
auto optional_plain_space_then_run_of(Predicate predicate) {
  return [predicate](const Piece& piece, size_t pos) -> size_t {
    const size_t body = piece.cpts[pos] == ' ' ? pos + 1 : pos;
    return piece.test(body, predicate) ? piece.run_end(body, predicate) - pos : 0;
  };
}

// \s+$ : the whitespace that ends the piece. Found directly rather than tried at
// every position, which would be quadratic in a long run of spaces.
void split_trailing_space_pass(const Piece& piece, std::vector<size_t>& out) {
  size_t start = piece.end;
  while (start > piece.begin && is_whitespace(piece.cpts[start - 1])) --start;
  WordSink sink(out, piece.begin);
  sink.end_word(start);
  sink.end_word(piece.end);
}

using PieceSplitter = void (*)(const Piece&, std::vector<size_t>&);

void split_gpt2_pass(const Piece& piece, std::vector<size_t>& out) { split_gpt2(piece, out); }
void split_llama3_pass(const Piece& piece, std::vector<size_t>& out) { split_llama3(piece, 3, out); }
void split_qwen2_pass(const Piece& piece, std::vector<size_t>& out) { split_llama3(piece, 1, out); }
void split_gpt4o_pass(const Piece& piece, std::vector<size_t>& out) { split_gpt4o(piece, out); }
void split_punctuation_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, punctuation_run(false), out);
}
void split_punctuation_backtick_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, punctuation_run(true), out);
}
void split_number_runs_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, run_of(is_number), out);
}
void split_each_number_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, [](const Piece& p, size_t pos) -> size_t { return is_number(p.cpts[pos]) ? 1 : 0; }, out);
}
void split_three_digits_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, match_three_ascii_digits, out);
}
void split_each_newline_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, [](const Piece& p, size_t pos) -> size_t { return is_cr_or_lf(p.cpts[pos]) ? 1 : 0; }, out);
}
void split_spaced_letters_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, optional_space_then_run_of(is_letter), out);
}
void split_spaced_punctuation_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, optional_space_then_run_of(is_punctuation), out);
}
void split_cjk_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, run_of(is_deepseek_cjk), out);
}
void split_bloom_words_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, optional_plain_space_then_run_of(is_bloom_word_character), out);
}
void split_deepseek_letters_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, optional_space_then_run_of(is_deepseek_letter), out);
}
void split_deepseek_punctuation_pass(const Piece& piece, std::vector<size_t>& out) {
  split_by_matches(piece, optional_space_then_run_of(is_deepseek_punctuation), out);
}

std::vector<PieceSplitter> passes_of(PreTokenizer kind) {
  switch (kind) {
    case PreTokenizer::Default:
      return {split_punctuation_pass, split_gpt2_pass, split_number_runs_pass, split_three_digits_pass};
    case PreTokenizer::Gpt2:
      return {split_gpt2_pass};
    case PreTokenizer::Llama3:
      return {split_llama3_pass};
    case PreTokenizer::Qwen2:
      return {split_qwen2_pass};
    case PreTokenizer::Gpt4o:
      return {split_gpt4o_pass};
    case PreTokenizer::Starcoder:
      return {split_each_number_pass, split_gpt2_pass};
    case PreTokenizer::Falcon:
      return {split_punctuation_backtick_pass, split_gpt2_pass, split_three_digits_pass};
    case PreTokenizer::DeepseekCoder:
      return {split_each_newline_pass, split_spaced_letters_pass, split_spaced_punctuation_pass, split_cjk_pass,
              split_each_number_pass};
    case PreTokenizer::Bloom:
      return {split_bloom_words_pass};
    case PreTokenizer::Viking:
      return {split_bloom_words_pass, split_each_number_pass};
    case PreTokenizer::DeepseekLlm:
      return {split_each_newline_pass, split_deepseek_letters_pass, split_deepseek_punctuation_pass,
              split_trailing_space_pass, split_cjk_pass, split_number_runs_pass};
  }
  return {};
}

struct NamedPreTokenizer {
  std::string_view name;
  PreTokenizerInfo info;
};

// The names llama.cpp's llama-vocab.cpp maps to these regex lists (names whose
// tokenizers also differ in other ways are left out).
constexpr NamedPreTokenizer kNames[] = {
    {"default", {PreTokenizer::Default, false, false}},
    {"gpt-2", {PreTokenizer::Gpt2, false, false}},
    {"phi-2", {PreTokenizer::Gpt2, false, false}},
    {"gigachat", {PreTokenizer::Gpt2, false, false}},
    {"a.x-4.0", {PreTokenizer::Gpt2, false, false}},
    {"mellum", {PreTokenizer::Gpt2, false, false}},
    {"exaone4", {PreTokenizer::Gpt2, false, false}},
    {"mpt", {PreTokenizer::Gpt2, false, false}},
    {"olmo", {PreTokenizer::Gpt2, false, false}},
    {"jais", {PreTokenizer::Gpt2, false, false}},
    {"trillion", {PreTokenizer::Gpt2, false, false}},
    {"llama3", {PreTokenizer::Llama3, true, true}},
    {"llama-v3", {PreTokenizer::Llama3, true, true}},
    {"llama-bpe", {PreTokenizer::Llama3, true, true}},
    {"falcon3", {PreTokenizer::Llama3, true, true}},
    {"falcon-h1", {PreTokenizer::Llama3, true, true}},
    {"pixtral", {PreTokenizer::Llama3, true, true}},
    {"midm-2.0", {PreTokenizer::Llama3, true, true}},
    {"lfm2", {PreTokenizer::Llama3, true, true}},
    {"dbrx", {PreTokenizer::Llama3, false, false}},
    {"glm4", {PreTokenizer::Llama3, false, false}},
    {"chatglm-bpe", {PreTokenizer::Llama3, false, false}},
    {"smaug-bpe", {PreTokenizer::Llama3, false, false}},
    {"qwen2", {PreTokenizer::Qwen2, false, false}},
    {"deepseek-r1-qwen", {PreTokenizer::Qwen2, false, false}},
    {"kormo", {PreTokenizer::Qwen2, false, false}},
    {"f2llmv2", {PreTokenizer::Qwen2, false, false}},
    {"megrez", {PreTokenizer::Qwen2, false, false}},
    {"stablelm2", {PreTokenizer::Qwen2, false, false}},
    {"hunyuan", {PreTokenizer::Qwen2, false, false}},
    {"solar-open", {PreTokenizer::Qwen2, false, false}},
    {"grok-2", {PreTokenizer::Qwen2, false, false}},
    {"gpt-4o", {PreTokenizer::Gpt4o, false, false}},
    {"llama4", {PreTokenizer::Gpt4o, false, false}},
    {"minimax-m2", {PreTokenizer::Gpt4o, false, false}},
    {"starcoder", {PreTokenizer::Starcoder, false, false}},
    {"refact", {PreTokenizer::Starcoder, false, false}},
    {"command-r", {PreTokenizer::Starcoder, false, false}},
    {"smollm", {PreTokenizer::Starcoder, false, false}},
    {"codeshell", {PreTokenizer::Starcoder, false, false}},
    {"exaone", {PreTokenizer::Starcoder, false, false}},
    {"minerva-7b", {PreTokenizer::Starcoder, false, false}},
    {"falcon", {PreTokenizer::Falcon, false, false}},
    {"deepseek-coder", {PreTokenizer::DeepseekCoder, false, false}},
    {"deepseek-llm", {PreTokenizer::DeepseekLlm, false, false}},
    {"bloom", {PreTokenizer::Bloom, false, false}},
    {"gpt3-finnish", {PreTokenizer::Bloom, false, false}},
    {"poro-chat", {PreTokenizer::Bloom, false, false}},
    {"viking", {PreTokenizer::Viking, false, false}},
};

}  // namespace

bool pre_tokenizer_from_name(std::string_view name, PreTokenizerInfo& info) {
  if (name.empty()) name = "default";
  for (const NamedPreTokenizer& entry : kNames) {
    if (entry.name == name) {
      info = entry.info;
      return true;
    }
  }
  return false;
}

std::vector<size_t> pre_tokenize(PreTokenizer kind, const std::vector<uint32_t>& cpts) {
  std::vector<size_t> words;
  if (cpts.empty()) return words;
  words.push_back(cpts.size());
  for (PieceSplitter split : passes_of(kind)) {
    std::vector<size_t> next;
    next.reserve(words.size());
    size_t begin = 0;
    for (size_t length : words) {
      split(Piece{cpts.data(), begin, begin + length}, next);
      begin += length;
    }
    words.swap(next);
  }
  return words;
}

}  // namespace peak::tokenizer
