// Runs a Grammar (grammar.h) over UTF-8 text fed byte by byte, telling whether
// what was read is a whole string of the grammar, can still be continued to
// one, or can no longer be.
//
// The matcher is a pushdown recognizer that follows every parse at once: each
// stack holds grammar positions, the top one the char set that must match the
// next code point, those below where each unfinished caller resumes. A code
// point advances every stack whose top matches it and expands the results
// until each top is a char set again. Identical stacks are kept once, and a
// call that several paths reach in one step (`x? y? z?` skipped in several
// ways) is expanded once, so an ambiguous grammar (`x* x*`) holds a few stacks
// and costs a few steps, not one per parse. Bytes of
// an unfinished character are kept; each one already drops the stacks that no
// code point starting with those bytes could advance. Input that is not strict
// UTF-8 (overlong forms, surrogates, above U+10FFFF) is rejected.
//
// The state that changes (State) is a plain value: copy it to snapshot, hand
// it to restore() to go back; no other memory is shared with the past. A
// matcher is for one thread; the Grammar it reads is shared.
//
// Bounds (a grammar can be ambiguous enough for the parses to multiply): when a
// code point would need more than kGrammarMaxStacks stacks, more than
// kGrammarMaxStackCells positions in all, or more than
// kGrammarMaxExpansionSteps steps to expand, the matcher stops with the
// verdict kOverLimit (it does not guess). Advancing costs time in the total
// size of the stacks; once the buffers have grown to the sizes a grammar
// needs, it allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sampling/grammar.h"

namespace peak::sampling {

inline constexpr size_t kGrammarMaxStacks = 4096;
inline constexpr size_t kGrammarMaxStackCells = size_t{1} << 16;
inline constexpr size_t kGrammarMaxExpansionSteps = size_t{1} << 18;  // per code point

enum class GrammarVerdict {
  kComplete,   // the text is a whole string of the grammar
  kPrefix,     // not yet, but it can be continued to one
  kRejected,   // no continuation makes it one
  kOverLimit,  // the matcher's bounds were reached before it could tell
};

const char* to_string(GrammarVerdict verdict);

class GrammarMatcher {
 public:
  struct State {
    std::vector<uint32_t> cells;       // the stacks one after another, each bottom to top
    std::vector<uint32_t> stack_ends;  // the end of each stack in cells
    // An unfinished UTF-8 character: its bits so far, how many bytes it still
    // needs, and the range its next byte must be in.
    uint32_t utf8_bits = 0;
    uint8_t utf8_needed = 0;
    uint8_t utf8_next_low = 0;
    uint8_t utf8_next_high = 0;
    bool over_limit = false;

    // Equal: the same stacks and the same unfinished character, so the same
    // verdicts on whatever follows. Equal states hash alike.
    bool operator==(const State& other) const;
    bool operator!=(const State& other) const { return !(*this == other); }
    uint64_t hash() const;
  };

  // At the start of the grammar's root rule.
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Reads bytes; false once the text can no longer become a string of the
  // grammar (or a bound was reached): the matcher then stays stopped until
  // restore() or reset().
  bool accept_byte(uint8_t byte);
  bool accept_bytes(std::string_view bytes);

  bool is_complete() const;   // what was read is a whole string of the grammar
  bool can_continue() const;  // some bytes can follow toward one
  bool over_limit() const { return state_.over_limit; }
  GrammarVerdict verdict() const;
  size_t stack_count() const { return state_.stack_ends.size(); }

  const State& state() const { return state_; }
  void restore(const State& state) { state_ = state; }
  void reset();

  const Grammar& grammar() const { return *grammar_; }

 private:
  // A stack waiting to be expanded: the first `base` cells of the stack being
  // advanced, then `suffix_size` positions at the end of pending_cells_.
  struct Pending {
    uint32_t base;
    uint32_t suffix_size;
  };

  // Stacks kept once each, found again by their hash. A stack is held as the
  // first `base` cells of the stack it was advanced from (which stays in place
  // for the whole advance) and a suffix of its own.
  class StackSet {
   public:
    void clear();
    // Adds source[0, base) + suffix, whose hash is `hash`; false if held already.
    bool add(const uint32_t* source, uint32_t base, uint64_t hash, const std::vector<uint32_t>& suffix);
    size_t size() const { return entries_.size(); }
    size_t cell_count() const { return cell_count_; }
    // Writes the stacks out as State's cells and stack ends.
    void write(std::vector<uint32_t>& cells, std::vector<uint32_t>& ends) const;

   private:
    struct Entry {
      const uint32_t* source;
      uint32_t base;
      uint32_t suffix_begin;  // in suffixes_
      uint32_t suffix_size;
      uint64_t hash;
    };
    bool holds(const Entry& entry, const uint32_t* source, uint32_t base, uint64_t hash,
               const std::vector<uint32_t>& suffix) const;
    void grow();

    std::vector<Entry> entries_;
    std::vector<uint32_t> suffixes_;
    std::vector<uint32_t> table_;  // entries by hash: index + 1, 0 for none
    size_t cell_count_ = 0;
  };

  bool alive() const { return !state_.stack_ends.empty(); }
  bool stop(bool over_limit);  // false, the matcher stopped
  bool accept_code_point(uint32_t code_point);
  void keep_stacks_intersecting(uint32_t first, uint32_t last);
  void begin_advance();
  void end_advance();
  void push_pending(uint32_t base);
  uint32_t expand_calls(uint32_t base, uint32_t rule);
  void expand_pending();
  bool first_expansion(uint32_t base);
  bool spend(size_t steps);
  uint64_t hash_of(uint32_t base) const;
  void emit(uint32_t base);

  std::shared_ptr<const Grammar> grammar_;
  State state_;
  // Scratch space of one code point's advance, kept for its capacity.
  std::vector<uint32_t> next_cells_;  // the next State's, before the swap
  std::vector<uint32_t> next_ends_;
  const uint32_t* source_ = nullptr;   // the stack being advanced, bottom to top
  std::vector<uint64_t> source_hash_;  // hash of its first i cells at [i]
  std::vector<uint32_t> work_;         // the suffix being expanded
  std::vector<Pending> pending_;
  std::vector<uint32_t> pending_cells_;
  StackSet next_;      // the stacks after the code point
  StackSet expanded_;  // the stacks whose top call was expanded already
  size_t steps_ = 0;
  bool over_limit_ = false;  // this advance passed a bound
};

// The verdict on a whole text, from the start of the grammar.
GrammarVerdict grammar_verdict(const std::shared_ptr<const Grammar>& grammar, std::string_view text);

}  // namespace peak::sampling
