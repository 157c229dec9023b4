#include "tokenizer/tokenizer.h"

#include "gguf/printable.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_bpe.h"
#include "tokenizer/tokenizer_spm.h"
#include "tokenizer/tokenizer_wpm.h"

namespace peak::tokenizer {

namespace {

// A piece of the input: raw text still to tokenize, or a special token found in it.
struct Fragment {
  int32_t token;  // kNoToken for raw text
  size_t offset;
  size_t length;
};

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

bool overlaps(const std::vector<TextRange>& ranges, size_t offset, size_t length) {
  for (const TextRange& r : ranges) {
    if (offset < r.offset + r.length && r.offset < offset + length) return true;
  }
  return false;
}

// Splits raw fragments at every occurrence of each special token, longest tokens
// first (llama.cpp's tokenizer_st_partition): a token found earlier is never split by
// a shorter one. Control tokens are found only with `parse_special`, and then
// not where they overlap a range of `verbatim`.
std::vector<Fragment> split_at_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special,
                                              const std::vector<TextRange>& verbatim) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({kNoToken, 0, text.size()});
  for (const int32_t id : vocab.special_tokens_longest_first()) {
    const TokenData& data = vocab.token(id);
    const bool control = (data.attr & (kAttrControl | kAttrUnknown)) != 0;
    if (!parse_special && control) continue;
    const std::string_view spelling = data.text;
    std::vector<Fragment> next;
    next.reserve(fragments.size());
    for (const Fragment& fragment : fragments) {
      if (fragment.token != kNoToken) {
        next.push_back(fragment);
        continue;
      }
      size_t pos = fragment.offset;
      const size_t end = fragment.offset + fragment.length;
      while (pos < end) {
        size_t match = text.substr(0, end).find(spelling, pos);
        while (control && match != std::string_view::npos && overlaps(verbatim, match, spelling.size())) {
          match = text.substr(0, end).find(spelling, match + 1);
        }
        if (match == std::string_view::npos) {
          next.push_back({kNoToken, pos, end - pos});
          break;
        }
        if (match > pos) next.push_back({kNoToken, pos, match - pos});
        next.push_back({id, match, spelling.size()});
        pos = match + spelling.size();
        if ((data.attr & kAttrRstrip) != 0) {
          while (pos < end && is_ascii_space(text[pos])) ++pos;
        }
      }
    }
    fragments.swap(next);
  }
  return fragments;
}

std::string escape_spaces(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 4);
  for (const char c : text) {
    if (c == ' ') {
      escaped.append(kSpaceMarker);
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, kSpaceMarker.size()) == kSpaceMarker) {
      out.push_back(' ');
      pos += kSpaceMarker.size();
    } else {
      out.push_back(text[pos++]);
    }
  }
  return out;
}

// A byte-level spelling back to its bytes; characters outside the alphabet (in
// tokens added by hand) are kept as they are.
std::string byte_level_to_bytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char ch = decode_utf8_char(text, pos);
    const int byte = ch.status == Utf8Char::Status::Valid ? codepoint_to_byte(ch.cpt) : -1;
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
    } else {
      out.append(text.substr(pos, ch.length));
    }
    pos += ch.length;
  }
  return out;
}

}  // namespace

std::string quote_characters(std::string_view characters) {
  constexpr size_t kShown = 16;
  std::string quoted;
  size_t count = 0;
  for (size_t pos = 0; pos < characters.size(); ++count) {
    const size_t length = decode_utf8_char(characters, pos).length;
    if (count < kShown) {
      quoted += (count ? ", '" : "'") + gguf::printable(characters.substr(pos, length)) + "'";
    }
    pos += length;
  }
  if (count > kShown) quoted += " and " + std::to_string(count - kShown) + " more";
  return quoted;
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  return std::unique_ptr<Tokenizer>(new Tokenizer(Vocab::from_gguf(file)));
}

Tokenizer::Tokenizer(std::unique_ptr<Vocab> vocab) : vocab_(std::move(vocab)) {
  pieces_.reserve(static_cast<size_t>(vocab_->n_tokens()));
  for (int32_t id = 0; id < vocab_->n_tokens(); ++id) pieces_.push_back(render_piece(id));
}

std::string Tokenizer::render_piece(int32_t id) const {
  const TokenData& data = vocab_->token(id);
  if ((data.attr & (kAttrControl | kAttrUnknown | kAttrUserDefined)) != 0) return data.text;
  if ((data.attr & kAttrNormal) != 0) {
    return vocab_->type() == VocabType::Bpe ? byte_level_to_bytes(data.text) : unescape_spaces(data.text);
  }
  if ((data.attr & kAttrByte) != 0) {
    // Vocab checked the <0xNN> spelling.
    return std::string(1, static_cast<char>(std::stoi(data.text.substr(3, 2), nullptr, 16)));
  }
  return std::string();  // unused and undefined tokens stand for nothing
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special,
                                       Unspelled* unspelled) const {
  return encode_with(text, add_special, parse_special, {}, unspelled);
}

std::vector<int32_t> Tokenizer::encode_filled(std::string_view text, const std::vector<TextRange>& verbatim,
                                              Unspelled* unspelled) const {
  return encode_with(text, false, true, verbatim, unspelled);
}

std::vector<int32_t> Tokenizer::encode_with(std::string_view text, bool add_special, bool parse_special,
                                            const std::vector<TextRange>& verbatim, Unspelled* unspelled) const {
  const TokenizerFlags& flags = vocab_->flags();
  std::vector<int32_t> ids;
  if (add_special && flags.add_bos) ids.push_back(bos());
  const size_t text_start = ids.size();
  std::string* characters = nullptr;
  if (unspelled) {
    *unspelled = Unspelled{};
    characters = &unspelled->characters;
  }
  // SPM puts a space before text at the start and after a special token, as
  // SentencePiece does at the start of every sentence.
  bool after_special = true;
  for (const Fragment& fragment : split_at_special_tokens(*vocab_, text, parse_special, verbatim)) {
    if (fragment.token != kNoToken) {
      ids.push_back(fragment.token);
      after_special = true;
      continue;
    }
    const std::string_view raw = text.substr(fragment.offset, fragment.length);
    switch (vocab_->type()) {
      case VocabType::Spm: {
        const std::string prefix = flags.add_space_prefix && after_special ? " " : "";
        tokenize_spm(*vocab_, escape_spaces(prefix + std::string(raw)), ids, characters);
        break;
      }
      case VocabType::Bpe: tokenize_bpe(*vocab_, raw, ids, characters); break;
      case VocabType::Wpm:
        tokenize_wpm(*vocab_, raw, ids);
        break;
    }
    after_special = false;
  }
  if (unspelled) unspelled->nothing_left = !unspelled->characters.empty() && ids.size() == text_start;
  if (add_special && flags.add_eos) ids.push_back(eos());
  if (add_special && flags.add_sep) ids.push_back(vocab_->special().sep);
  return ids;
}

int32_t Tokenizer::appended_end() const {
  if (vocab_->flags().add_sep) return vocab_->special().sep;
  if (vocab_->flags().add_eos) return eos();
  return kNoToken;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!vocab_->contains(id)) {
    throw TokenizerError("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(n_vocab()));
  }
  if (!render_special && (vocab_->token(id).attr & (kAttrControl | kAttrUnknown)) != 0) return std::string();
  return pieces_[static_cast<size_t>(id)];
}

std::string Tokenizer::detokenize(const std::vector<int32_t>& ids, bool remove_special, bool render_special) const {
  size_t begin = 0, end = ids.size();
  bool strip_space = vocab_->flags().add_space_prefix;
  if (remove_special && add_bos() && end > begin && ids[begin] == bos()) {
    ++begin;
    strip_space = false;  // as llama.cpp: the space after a removed BOS stays
  }
  if (remove_special && add_eos() && end > begin && ids[end - 1] == eos()) --end;
  std::string text;
  for (size_t i = begin; i < end; ++i) {
    const std::string piece = token_to_piece(ids[i], render_special);
    const bool strip = strip_space && i == begin && !piece.empty() && piece[0] == ' ';
    text.append(piece, strip ? 1 : 0, std::string::npos);
    strip_space = false;
  }
  return text;
}

}  // namespace peak::tokenizer
