#include "sampling/grammar_matcher.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace peak::sampling {
namespace {

constexpr uint64_t kHashSeed = 0x243F6A8885A308D3ull;
constexpr uint64_t kHashMultiplier = 0x9E3779B97F4A7C15ull;
constexpr size_t kFirstTableSize = 64;  // a power of two

// Appends n cells. (vector::insert's general path costs more than the copy of
// the few cells a suffix has.)
void append_cells(std::vector<uint32_t>& to, const uint32_t* cells, size_t n) {
  const size_t size = to.size();
  to.resize(size + n);
  std::copy(cells, cells + n, to.data() + size);
}

uint64_t hash_cell(uint64_t hash, uint32_t cell) { return ((hash << 7 | hash >> 57) ^ cell) * kHashMultiplier; }

// Starts a character from its first byte (>= 0x80) with the limits of
// Unicode's table of well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF). False for a byte that starts none.
bool start_utf8(uint8_t byte, GrammarMatcher::State& state) {
  uint8_t low = 0x80;
  uint8_t high = 0xBF;
  if (byte >= 0xC2 && byte <= 0xDF) {
    state.utf8_bits = byte & 0x1Fu;
    state.utf8_needed = 1;
  } else if (byte >= 0xE0 && byte <= 0xEF) {
    state.utf8_bits = byte & 0x0Fu;
    state.utf8_needed = 2;
    if (byte == 0xE0) low = 0xA0;
    if (byte == 0xED) high = 0x9F;
  } else if (byte >= 0xF0 && byte <= 0xF4) {
    state.utf8_bits = byte & 0x07u;
    state.utf8_needed = 3;
    if (byte == 0xF0) low = 0x90;
    if (byte == 0xF4) high = 0x8F;
  } else {
    return false;
  }
  state.utf8_next_low = low;
  state.utf8_next_high = high;
  return true;
}

}  // namespace

// The fields of an unfinished character count only while one is unfinished
// (after a character they keep its last values, which mean nothing).
bool GrammarMatcher::State::operator==(const State& other) const {
  const bool same_character =
      utf8_needed == other.utf8_needed &&
      (utf8_needed == 0 || (utf8_bits == other.utf8_bits && utf8_next_low == other.utf8_next_low &&
                            utf8_next_high == other.utf8_next_high));
  return same_character && over_limit == other.over_limit && cells == other.cells && stack_ends == other.stack_ends;
}

uint64_t GrammarMatcher::State::hash() const {
  uint64_t hash = kHashSeed;
  for (const uint32_t cell : cells) hash = hash_cell(hash, cell);
  for (const uint32_t end : stack_ends) hash = hash_cell(hash, end);
  if (utf8_needed != 0) {
    hash = hash_cell(hash, utf8_bits);
    hash = hash_cell(hash, static_cast<uint32_t>(utf8_needed) << 16 | static_cast<uint32_t>(utf8_next_low) << 8 |
                               static_cast<uint32_t>(utf8_next_high));
  }
  return hash_cell(hash, over_limit ? 1u : 0u);
}

const char* to_string(GrammarVerdict verdict) {
  switch (verdict) {
    case GrammarVerdict::kComplete: return "complete";
    case GrammarVerdict::kPrefix: return "prefix";
    case GrammarVerdict::kRejected: return "rejected";
    case GrammarVerdict::kOverLimit: return "over limit";
  }
  return "?";
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) { reset(); }

void GrammarMatcher::reset() {
  state_.cells.clear();
  state_.stack_ends.clear();
  state_.utf8_needed = 0;
  state_.over_limit = false;
  begin_advance();
  source_ = nullptr;
  source_hash_.assign(1, kHashSeed);
  work_.clear();
  work_.push_back(expand_calls(0, grammar_->root()));
  push_pending(0);
  expand_pending();
  end_advance();
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  for (const char byte : bytes) {
    if (!accept_byte(static_cast<uint8_t>(byte))) return false;
  }
  return alive();
}

bool GrammarMatcher::accept_byte(uint8_t byte) {
  if (!alive()) return false;
  State& state = state_;
  if (state.utf8_needed == 0) {
    if (byte < 0x80) return accept_code_point(byte);
    if (!start_utf8(byte, state)) return stop(false);
  } else {
    if (byte < state.utf8_next_low || byte > state.utf8_next_high) return stop(false);
    state.utf8_bits = state.utf8_bits << 6 | (byte & 0x3Fu);
    state.utf8_next_low = 0x80;
    state.utf8_next_high = 0xBF;
    if (--state.utf8_needed == 0) return accept_code_point(state.utf8_bits);
  }
  // The code points the character can still become: the next byte's range,
  // then any continuation bytes.
  const unsigned shift = 6u * state.utf8_needed;
  const uint32_t prefix = state.utf8_bits << shift;
  const uint32_t first = prefix | (state.utf8_next_low & 0x3Fu) << (shift - 6);
  const uint32_t last = prefix | (state.utf8_next_high & 0x3Fu) << (shift - 6) | ((1u << (shift - 6)) - 1);
  keep_stacks_intersecting(first, last);
  return alive() || stop(false);
}

bool GrammarMatcher::is_complete() const {
  if (state_.utf8_needed != 0) return false;
  uint32_t begin = 0;
  for (const uint32_t end : state_.stack_ends) {
    if (end == begin) return true;
    begin = end;
  }
  return false;
}

bool GrammarMatcher::can_continue() const {
  if (state_.utf8_needed != 0) return alive();
  uint32_t begin = 0;
  for (const uint32_t end : state_.stack_ends) {
    if (end != begin) return true;
    begin = end;
  }
  return false;
}

GrammarVerdict GrammarMatcher::verdict() const {
  if (over_limit()) return GrammarVerdict::kOverLimit;
  if (is_complete()) return GrammarVerdict::kComplete;
  return can_continue() ? GrammarVerdict::kPrefix : GrammarVerdict::kRejected;
}

bool GrammarMatcher::stop(bool over_limit) {
  state_.cells.clear();
  state_.stack_ends.clear();
  state_.utf8_needed = 0;
  state_.over_limit = over_limit;
  return false;
}

bool GrammarMatcher::accept_code_point(uint32_t code_point) {
  begin_advance();
  uint32_t begin = 0;
  for (const uint32_t end : state_.stack_ends) {
    const uint32_t stack_begin = begin;
    begin = end;
    if (end == stack_begin) continue;  // a finished parse takes no more text
    const uint32_t top = state_.cells[end - 1];
    if (!grammar_->char_set_contains(grammar_->element(top).arg, code_point)) continue;
    source_ = state_.cells.data() + stack_begin;
    const uint32_t base = end - stack_begin - 1;
    source_hash_.resize(base + 1);
    for (uint32_t i = 0; i < base; ++i) source_hash_[i + 1] = hash_cell(source_hash_[i], source_[i]);
    work_.assign(1, top + 1);
    push_pending(base);
    expand_pending();
    if (over_limit_) break;
  }
  end_advance();
  return alive() || stop(state_.over_limit);
}

void GrammarMatcher::keep_stacks_intersecting(uint32_t first, uint32_t last) {
  uint32_t begin = 0;
  uint32_t written = 0;
  size_t kept = 0;
  for (const uint32_t end : state_.stack_ends) {
    const uint32_t stack_begin = begin;
    begin = end;
    if (end == stack_begin) continue;
    if (!grammar_->char_set_intersects(grammar_->element(state_.cells[end - 1]).arg, first, last)) continue;
    std::copy(state_.cells.begin() + stack_begin, state_.cells.begin() + end, state_.cells.begin() + written);
    written += end - stack_begin;
    state_.stack_ends[kept++] = written;
  }
  state_.cells.resize(written);
  state_.stack_ends.resize(kept);
}

void GrammarMatcher::begin_advance() {
  next_.clear();
  expanded_.clear();
  over_limit_ = false;
  steps_ = 0;
}

void GrammarMatcher::end_advance() {
  next_.write(next_cells_, next_ends_);
  std::swap(state_.cells, next_cells_);
  std::swap(state_.stack_ends, next_ends_);
  if (over_limit_) stop(true);
}

// Queues work_ as a stack to expand, above the first `base` cells of the source.
void GrammarMatcher::push_pending(uint32_t base) {
  pending_.push_back({base, static_cast<uint32_t>(work_.size())});
  append_cells(pending_cells_, work_.data(), work_.size());
}

// Queues one stack per alternative of `rule` but the first, each with the
// alternative's start on top of the current one; returns the first's start.
uint32_t GrammarMatcher::expand_calls(uint32_t base, uint32_t rule) {
  const uint32_t* first = grammar_->alternatives_begin(rule);
  const uint32_t* last = grammar_->alternatives_end(rule);
  if (!spend(static_cast<size_t>(last - first) * (work_.size() + 1))) return *first;
  work_.push_back(0);
  for (const uint32_t* alternative = last; --alternative != first;) {
    work_.back() = *alternative;
    push_pending(base);
  }
  work_.pop_back();
  return *first;
}

// Expands the queued stacks until each top is a char set (or the stack is
// empty: a finished parse), and keeps each result once.
void GrammarMatcher::expand_pending() {
  while (!pending_.empty() && !over_limit_) {
    const Pending pending = pending_.back();
    pending_.pop_back();
    work_.assign(pending_cells_.end() - pending.suffix_size, pending_cells_.end());
    pending_cells_.resize(pending_cells_.size() - pending.suffix_size);
    uint32_t base = pending.base;
    while (spend(1)) {
      if (work_.empty() && base == 0) {
        emit(0);
        break;
      }
      const uint32_t position = work_.empty() ? source_[base - 1] : work_.back();
      const GrammarElement& element = grammar_->element(position);
      if (element.op == GrammarOp::kCharSet) {
        emit(base);
        break;
      }
      if (element.op == GrammarOp::kRule && !first_expansion(base)) break;
      if (work_.empty()) {
        --base;
      } else {
        work_.pop_back();
      }
      // The end of an alternative leaves its caller on top; a call leaves where
      // the caller resumes, then the callee's first alternative.
      if (element.op == GrammarOp::kRule) {
        if (!grammar_->ends_alternative(position + 1)) work_.push_back(position + 1);
        work_.push_back(expand_calls(base, element.arg));
      }
    }
  }
  pending_.clear();
  pending_cells_.clear();
}

bool GrammarMatcher::spend(size_t steps) {
  steps_ += steps;
  if (steps_ > kGrammarMaxExpansionSteps) over_limit_ = true;
  return !over_limit_;
}

// The hash of the stack source_[0, base) + work_.
uint64_t GrammarMatcher::hash_of(uint32_t base) const {
  uint64_t hash = source_hash_[base];
  for (const uint32_t cell : work_) hash = hash_cell(hash, cell);
  return hash;
}

// Whether the stack source_[0, base) + work_, a call on top, is met for the
// first time in this advance: parses that meet again (`x? y? z?` skipped in
// several ways, from several stacks) expand once.
bool GrammarMatcher::first_expansion(uint32_t base) {
  return spend(work_.size() + 1) && expanded_.add(source_, base, hash_of(base), work_);
}

// Keeps the stack source_[0, base) + work_ unless it is kept already.
void GrammarMatcher::emit(uint32_t base) {
  next_.add(source_, base, hash_of(base), work_);
  if (next_.size() > kGrammarMaxStacks || next_.cell_count() > kGrammarMaxStackCells) over_limit_ = true;
}

void GrammarMatcher::StackSet::clear() {
  entries_.clear();
  suffixes_.clear();
  cell_count_ = 0;
  if (table_.empty()) table_.resize(kFirstTableSize);
  std::fill(table_.begin(), table_.end(), 0);
}

bool GrammarMatcher::StackSet::add(const uint32_t* source, uint32_t base, uint64_t hash,
                                   const std::vector<uint32_t>& suffix) {
  const size_t mask = table_.size() - 1;
  size_t slot = hash & mask;
  for (; table_[slot] != 0; slot = (slot + 1) & mask) {
    if (holds(entries_[table_[slot] - 1], source, base, hash, suffix)) return false;
  }
  entries_.push_back(
      {source, base, static_cast<uint32_t>(suffixes_.size()), static_cast<uint32_t>(suffix.size()), hash});
  append_cells(suffixes_, suffix.data(), suffix.size());
  cell_count_ += base + suffix.size();
  table_[slot] = static_cast<uint32_t>(entries_.size());
  if (2 * entries_.size() > table_.size()) grow();
  return true;
}

bool GrammarMatcher::StackSet::holds(const Entry& entry, const uint32_t* source, uint32_t base, uint64_t hash,
                                     const std::vector<uint32_t>& suffix) const {
  const size_t size = base + suffix.size();
  if (entry.hash != hash || entry.base + entry.suffix_size != size) return false;
  const uint32_t* entry_suffix = suffixes_.data() + entry.suffix_begin;
  for (size_t i = 0; i < size; ++i) {
    const uint32_t held = i < entry.base ? entry.source[i] : entry_suffix[i - entry.base];
    const uint32_t given = i < base ? source[i] : suffix[i - base];
    if (held != given) return false;
  }
  return true;
}

void GrammarMatcher::StackSet::grow() {
  table_.assign(table_.size() * 2, 0);
  const size_t mask = table_.size() - 1;
  for (uint32_t index = 0; index < entries_.size(); ++index) {
    size_t slot = entries_[index].hash & mask;
    while (table_[slot] != 0) slot = (slot + 1) & mask;
    table_[slot] = index + 1;
  }
}

void GrammarMatcher::StackSet::write(std::vector<uint32_t>& cells, std::vector<uint32_t>& ends) const {
  cells.clear();
  ends.clear();
  for (const Entry& entry : entries_) {
    append_cells(cells, entry.source, entry.base);
    append_cells(cells, suffixes_.data() + entry.suffix_begin, entry.suffix_size);
    ends.push_back(static_cast<uint32_t>(cells.size()));
  }
}

GrammarVerdict grammar_verdict(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  GrammarMatcher matcher(grammar);
  matcher.accept_bytes(text);
  return matcher.verdict();
}

}  // namespace peak::sampling
