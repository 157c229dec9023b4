#include "vt_screen.h"

#include <algorithm>
#include <cstdlib>

namespace {

const std::string kRightHalf(1, '\0');  // the second cell of a wide character

uint32_t decode(const std::string& s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (s.size() == 1) return b0;
  uint32_t cp = b0 & (0x7fu >> s.size());
  for (size_t k = 1; k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3fu);
  return cp;
}

size_t width_of(uint32_t cp) {
  if (cp >= 0x0300 && cp <= 0x036f) return 0;
  if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x4e00 && cp <= 0x9fff)) return 2;
  return 1;
}

}  // namespace

VtScreen::VtScreen(size_t columns, size_t rows)
    : columns_(columns), height_(rows), cells_(rows, std::vector<std::string>(columns)) {}

void VtScreen::feed(std::string_view bytes) {
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (state_) {
      case State::Ground:
        if (c == 0x1b) {
          state_ = State::Escape;
        } else if (c == '\r') {
          column_ = 0;
          pending_wrap_ = false;
        } else if (c == '\n') {
          line_feed();
        } else if (c == '\b') {
          if (column_ > 0) --column_;
          pending_wrap_ = false;
        } else if (c == '\t') {
          column_ = std::min(columns_ - 1, (column_ / 8 + 1) * 8);
        } else if (c >= 0x20 && c < 0x7f) {
          print(std::string(1, ch), 1);
        } else if (c >= 0xc0) {
          sequence_.assign(1, ch);
          utf8_need_ = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
          state_ = State::Utf8;
        }
        break;
      case State::Utf8:
        sequence_ += ch;
        if (sequence_.size() == utf8_need_) {
          print(sequence_, width_of(decode(sequence_)));
          state_ = State::Ground;
        }
        break;
      case State::Escape:
        if (c == '[') {
          state_ = State::Csi;
          sequence_.clear();
        } else {
          state_ = State::Ground;
        }
        break;
      case State::Csi:
        if (c >= 0x40 && c <= 0x7e) {
          csi(ch);
          state_ = State::Ground;
        } else {
          sequence_ += ch;
        }
        break;
    }
  }
}

void VtScreen::print(std::string_view glyph, size_t width) {
  if (width == 0) {  // a combining mark joins the character before it
    if (column_ > 0) cells_[row_][column_ - 1].append(glyph);
    return;
  }
  if (pending_wrap_ || column_ + width > columns_) {
    column_ = 0;
    line_feed();
  }
  cells_[row_][column_] = std::string(glyph);
  if (width == 2) cells_[row_][column_ + 1] = kRightHalf;
  column_ += width;
  if (column_ >= columns_) {
    column_ = columns_ - 1;
    pending_wrap_ = true;
  }
}

void VtScreen::line_feed() {
  pending_wrap_ = false;
  if (row_ + 1 < height_) {
    ++row_;
    return;
  }
  scrollback_.push_back(row(0));
  cells_.erase(cells_.begin());
  cells_.emplace_back(columns_);
}

void VtScreen::erase(size_t r, size_t from, size_t to) {
  for (size_t c = from; c < to && c < columns_; ++c) cells_[r][c].clear();
}

void VtScreen::csi(char final) {
  const bool is_private = !sequence_.empty() && sequence_[0] == '?';
  const std::string params = is_private ? sequence_.substr(1) : sequence_;
  const int first = std::atoi(params.c_str());
  const size_t semi = params.find(';');
  const int second = semi == std::string::npos ? 0 : std::atoi(params.c_str() + semi + 1);
  const size_t n = first > 0 ? static_cast<size_t>(first) : 1;
  pending_wrap_ = false;
  switch (final) {
    case 'A': row_ = row_ >= n ? row_ - n : 0; break;
    case 'B': row_ = std::min(height_ - 1, row_ + n); break;
    case 'C': column_ = std::min(columns_ - 1, column_ + n); break;
    case 'D': column_ = column_ >= n ? column_ - n : 0; break;
    case 'H':
      row_ = std::min(height_, n) - 1;
      column_ = std::min(columns_, static_cast<size_t>(second > 0 ? second : 1)) - 1;
      break;
    case 'J':
      if (first == 2) {
        for (size_t r = 0; r < height_; ++r) erase(r, 0, columns_);
      } else {
        erase(row_, column_, columns_);
        for (size_t r = row_ + 1; r < height_; ++r) erase(r, 0, columns_);
      }
      break;
    case 'K': erase(row_, column_, columns_); break;
    case 'h':
    case 'l':
      if (is_private && first == 2004) bracketed_paste_ = final == 'h';
      break;
    default: break;  // SGR and the rest change nothing on screen here
  }
}

std::string VtScreen::row(size_t r) const {
  std::string text;
  for (const std::string& cell : cells_[r]) {
    if (cell == kRightHalf) continue;
    text += cell.empty() ? " " : cell;
  }
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

std::vector<std::string> VtScreen::rows() const {
  std::vector<std::string> all;
  for (size_t r = 0; r < height_; ++r) all.push_back(row(r));
  while (!all.empty() && all.back().empty()) all.pop_back();
  return all;
}
