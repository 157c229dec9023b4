#include "tokenizer/pretokenizer.h"

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

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}
// | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
void split_llama3(const Piece& piece, size_t max_digits, std::vector<size_t>& out) {
  WordSink sink(out, piece.begin);
  for (size_t pos = piece.begin; pos < piece.end;) {
    const uint32_t cpt = piece.cpts[pos];
    if (const size_t n = match_contraction(piece, pos, true)) {
      pos += sink.end_word(pos + n);
      continue;
    }
    if (!is_cr_or_lf(cpt) && !is_number(cpt) && (is_letter(cpt) || piece.test(pos + 1, is_letter))) {
      pos = piece.run_end(pos + 1, is_letter);
      sink.end_word(pos);
      continue;
    }
    if (is_number(cpt)) {
      const size_t digits_end = piece.run_end(pos, is_number);
      while (pos < digits_end) {
        pos += digits_end - pos < max_digits ? digits_end - pos : max_digits;
        sink.end_word(pos);
      }
      continue;
    }
    const size_t body = cpt == ' ' ? pos + 1 : pos;
    if (piece.test(body, is_other_than_space_letter_number) || (cpt == ' ' && !piece.has(body))) {
      pos = piece.run_end(body, is_other_than_space_letter_number);
      pos = piece.run_end(pos, is_cr_or_lf);
      sink.end_word(pos);
      continue;
    }
    const size_t spaces_end = piece.run_end(pos, is_whitespace);
    size_t last_newline_end = 0;
    for (size_t i = pos; i < spaces_end; ++i) {
      if (is_cr_or_lf(piece.cpts[i])) last_newline_end = i + 1;
    }
    const size_t spaces = spaces_end - pos;
    if (last_newline_end > 0) {
      pos = last_newline_end;  // \s*[\r\n]+
    } else if (spaces > 1 && spaces_end < piece.end) {
      pos = spaces_end - 1;  // \s+(?!\S)
    } else if (spaces > 0) {
      pos = spaces_end;  // \s+
    } else {
      ++pos;
    }
    sink.end_word(pos);
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

// [一-龥ࠀ-一가-퟿]: llama.cpp runs this class on text whose non-ASCII White_Space
// characters were replaced by U+000B, so those never match although the range
// U+0800..U+4E00 holds some of them.
bool is_deepseek_cjk(uint32_t cpt) {
  const bool in_ranges = (cpt >= 0x4E00 && cpt <= 0x9FA5) || (cpt >= 0x0800 && cpt <= 0x4E00) ||
                         (cpt >= 0xAC00 && cpt <= 0xD7FF);
  return in_ranges && !is_whitespace(cpt);
}

using PieceSplitter = void (*)(const Piece&, std::vector<size_t>&);

void split_gpt2_pass(const Piece& piece, std::vector<size_t>& out) { split_gpt2(piece, out); }
void split_llama3_pass(const Piece& piece, std::vector<size_t>& out) { split_llama3(piece, 3, out); }
void split_qwen2_pass(const Piece& piece, std::vector<size_t>& out) { split_llama3(piece, 1, out); }
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
    case PreTokenizer::Starcoder:
      return {split_each_number_pass, split_gpt2_pass};
    case PreTokenizer::Falcon:
      return {split_punctuation_backtick_pass, split_gpt2_pass, split_three_digits_pass};
    case PreTokenizer::DeepseekCoder:
      return {split_each_newline_pass, split_spaced_letters_pass, split_spaced_punctuation_pass, split_cjk_pass,
              split_each_number_pass};
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
    {"starcoder", {PreTokenizer::Starcoder, false, false}},
    {"refact", {PreTokenizer::Starcoder, false, false}},
    {"command-r", {PreTokenizer::Starcoder, false, false}},
    {"smollm", {PreTokenizer::Starcoder, false, false}},
    {"codeshell", {PreTokenizer::Starcoder, false, false}},
    {"exaone", {PreTokenizer::Starcoder, false, false}},
    {"minerva-7b", {PreTokenizer::Starcoder, false, false}},
    {"falcon", {PreTokenizer::Falcon, false, false}},
    {"deepseek-coder", {PreTokenizer::DeepseekCoder, false, false}},
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
