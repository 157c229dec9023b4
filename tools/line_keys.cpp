#include "line_keys.h"

#include <cstdlib>

namespace {

constexpr std::string_view kPasteEnd = "\033[201~";
constexpr size_t kMaxSequence = 16;  // parameter bytes of an escape sequence we could know

// Terminals send a pasted line end as CR (some as CR LF); the message holds '\n'.
std::string with_newlines(std::string_view pasted) {
  std::string out;
  out.reserve(pasted.size());
  for (size_t i = 0; i < pasted.size(); ++i) {
    if (pasted[i] != '\r') {
      out += pasted[i];
    } else {
      out += '\n';
      if (i + 1 < pasted.size() && pasted[i + 1] == '\n') ++i;
    }
  }
  return out;
}

// The first and second parameters of "1;5" (0 when absent).
void csi_parameters(const std::string& seq, int* first, int* second) {
  *first = std::atoi(seq.c_str());
  const size_t semi = seq.find(';');
  *second = semi == std::string::npos ? 0 : std::atoi(seq.c_str() + semi + 1);
}

}  // namespace

void KeyDecoder::emit(std::vector<Key>& keys, KeyCode code) { keys.push_back(Key{code, std::string()}); }

void KeyDecoder::emit_text(std::vector<Key>& keys, std::string_view text) {
  if (!keys.empty() && keys.back().code == KeyCode::Text) {
    keys.back().text.append(text);
  } else {
    keys.push_back(Key{KeyCode::Text, std::string(text)});
  }
}

void KeyDecoder::feed(std::string_view bytes, std::vector<Key>& keys) {
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (state_) {
      case State::Ground: ground(c, keys); break;
      case State::Escape: escape(c, keys); break;
      case State::Csi: csi(c, keys); break;
      case State::Ss3:
        state_ = State::Ground;
        switch (c) {
          case 'A': emit(keys, KeyCode::Up); break;
          case 'B': emit(keys, KeyCode::Down); break;
          case 'C': emit(keys, KeyCode::Right); break;
          case 'D': emit(keys, KeyCode::Left); break;
          case 'H': emit(keys, KeyCode::Home); break;
          case 'F': emit(keys, KeyCode::End); break;
          default: emit(keys, KeyCode::Ignored); break;
        }
        break;
      case State::Utf8:
        if ((c & 0xc0) != 0x80) {  // cut short: the bytes so far are invalid, c starts afresh
          emit_text(keys, seq_);
          state_ = State::Ground;
          ground(c, keys);
          break;
        }
        seq_ += ch;
        if (seq_.size() == utf8_need_) {
          emit_text(keys, seq_);  // overlong forms and surrogates pass as the bytes they are
          state_ = State::Ground;
        }
        break;
      case State::Paste: paste(ch, keys); break;
    }
  }
}

void KeyDecoder::ground(unsigned char c, std::vector<Key>& keys) {
  if (c >= 0x20 && c < 0x7f) {
    const char ch = static_cast<char>(c);
    emit_text(keys, std::string_view(&ch, 1));
    return;
  }
  if (c >= 0x80) {
    utf8_need_ = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
    seq_.assign(1, static_cast<char>(c));
    if (utf8_need_ == 1) {
      emit_text(keys, seq_);  // not a lead byte: one invalid byte
    } else {
      state_ = State::Utf8;
    }
    return;
  }
  switch (c) {
    case 0x1b: state_ = State::Escape; break;
    case 0x01: emit(keys, KeyCode::Home); break;
    case 0x02: emit(keys, KeyCode::Left); break;
    case 0x03: emit(keys, KeyCode::Interrupt); break;
    case 0x04: emit(keys, KeyCode::EndOfFile); break;
    case 0x05: emit(keys, KeyCode::End); break;
    case 0x06: emit(keys, KeyCode::Right); break;
    case 0x08: case 0x7f: emit(keys, KeyCode::Backspace); break;
    case '\t': emit_text(keys, "\t"); break;
    case '\r': case '\n': emit(keys, KeyCode::Enter); break;
    case 0x0b: emit(keys, KeyCode::KillToLineEnd); break;
    case 0x0c: emit(keys, KeyCode::ClearScreen); break;
    case 0x0e: emit(keys, KeyCode::Down); break;
    case 0x10: emit(keys, KeyCode::Up); break;
    case 0x15: emit(keys, KeyCode::KillToLineStart); break;
    case 0x17: emit(keys, KeyCode::KillWordBefore); break;
    case 0x19: emit(keys, KeyCode::Yank); break;
    case 0x1a: emit(keys, KeyCode::Suspend); break;
    default: emit(keys, KeyCode::Ignored); break;
  }
}

void KeyDecoder::escape(unsigned char c, std::vector<Key>& keys) {
  state_ = State::Ground;
  seq_.clear();
  switch (c) {
    case '[': state_ = State::Csi; break;
    case 'O': state_ = State::Ss3; break;
    case 0x1b: state_ = State::Escape; break;  // ESC ESC: the first one alone means nothing
    case 0x7f: case 0x08: emit(keys, KeyCode::KillAlnumWordBefore); break;
    case '\r': case '\n': emit(keys, KeyCode::InsertNewline); break;
    case 'b': case 'B': emit(keys, KeyCode::WordLeft); break;
    case 'f': case 'F': emit(keys, KeyCode::WordRight); break;
    case 'd': case 'D': emit(keys, KeyCode::KillWordAfter); break;
    default: emit(keys, KeyCode::Ignored); break;
  }
}

void KeyDecoder::csi(unsigned char c, std::vector<Key>& keys) {
  if (c >= 0x20 && c <= 0x3f) {  // parameter and intermediate bytes
    if (seq_.size() < kMaxSequence) seq_ += static_cast<char>(c);
    else seq_ = "?";  // too long for any key we know
    return;
  }
  state_ = State::Ground;
  if (c < 0x40 || c > 0x7e) {  // not a final byte: the sequence was cut; c stands alone
    emit(keys, KeyCode::Ignored);
    ground(c, keys);
    return;
  }
  int first = 0, modifier = 0;
  csi_parameters(seq_, &first, &modifier);
  // xterm's modifier parameter is 1 + (Shift 1 | Alt 2 | Ctrl 4): Alt or Ctrl with an arrow moves by words.
  const bool by_word = modifier > 1 && ((modifier - 1) & 6) != 0;
  switch (c) {
    case 'A': emit(keys, KeyCode::Up); break;
    case 'B': emit(keys, KeyCode::Down); break;
    case 'C': emit(keys, by_word ? KeyCode::WordRight : KeyCode::Right); break;
    case 'D': emit(keys, by_word ? KeyCode::WordLeft : KeyCode::Left); break;
    case 'H': emit(keys, KeyCode::Home); break;
    case 'F': emit(keys, KeyCode::End); break;
    case '~':
      switch (first) {
        case 1: case 7: emit(keys, KeyCode::Home); break;
        case 4: case 8: emit(keys, KeyCode::End); break;
        case 3: emit(keys, KeyCode::Delete); break;
        case 200:
          state_ = State::Paste;
          paste_.clear();
          break;
        default: emit(keys, KeyCode::Ignored); break;
      }
      break;
    default: emit(keys, KeyCode::Ignored); break;
  }
}

void KeyDecoder::paste(char c, std::vector<Key>& keys) {
  paste_ += c;
  if (paste_.size() < kPasteEnd.size() ||
      paste_.compare(paste_.size() - kPasteEnd.size(), kPasteEnd.size(), kPasteEnd) != 0) {
    return;
  }
  paste_.resize(paste_.size() - kPasteEnd.size());
  keys.push_back(Key{KeyCode::Paste, with_newlines(paste_)});
  paste_.clear();
  paste_.shrink_to_fit();
  state_ = State::Ground;
}
