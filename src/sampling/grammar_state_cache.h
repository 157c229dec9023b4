// What a grammar does with each byte, learnt once per matcher state, for one
// vocabulary. The states a sequence passes through are kept in a table, an id
// each; each has a row of byte transitions, filled as they are asked for (a
// miss runs the GrammarMatcher once), and, when asked for, the mask of the
// vocabulary's tokens it allows. Testing a token then costs one look-up per
// byte, and a mask walks the vocabulary's trie with look-ups, skipping a
// subtree at its first rejected byte. JSON and most grammars people write pass
// through few states (a string's inside is one state), so after the first
// tokens nearly everything is a look-up.
//
// Bounded: at most Limits::max_states states and max_transitions row entries
// (a state that is inside a UTF-8 character has a row of 64, the others of
// 256), and masks within mask_bytes (the oldest goes first). When a state or a
// row does not fit, the call returns kNoRoom and leaves the cache as it was;
// the owner then clears it, between two uses of its ids.
//
// Preserved control tokens (SamplerParams::preserved_tokens) are read as their
// text: a mask gets their bits after the walk, each followed over its bytes.
//
// One per sequence (it is not for threads to share); the grammar and the
// vocabulary it reads are shared. Once its tables have grown it allocates
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/grammar_vocabulary.h"

namespace peak::sampling {

class GrammarStateCache {
 public:
  static constexpr int32_t kRejected = -1;
  static constexpr int32_t kNoRoom = -2;

  struct Limits {
    size_t max_states = size_t{1} << 15;
    size_t max_transitions = size_t{1} << 22;  // 16 MiB of rows at most
    size_t mask_bytes = size_t{8} << 20;       // at least one mask is kept whatever this says
  };

  // preserved_tokens: control tokens of the vocabulary, increasing (as
  // GrammarVocabulary::check_preserved checks).
  GrammarStateCache(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary,
                    std::vector<int32_t> preserved_tokens, const Limits& limits);

  // Forgets every state: the ids given so far mean nothing any more.
  void clear();
  // The id of a state (a live one: not rejected), or kNoRoom.
  int32_t intern(const GrammarMatcher::State& state);
  // The state after one byte, after bytes, or kRejected / kNoRoom.
  int32_t next(int32_t id, uint8_t byte);
  int32_t follow(int32_t id, std::string_view bytes);
  // Whether `token` may come next in state id: a text token (or a preserved
  // one) whose bytes continue it, an end of generation where it is complete.
  // kNoRoom as a learnt transition did not fit (the answer is unknown then).
  int32_t allows(int32_t id, int32_t token);
  // The grammar reads the token's bytes: a text token, or a preserved one.
  bool reads_bytes(int32_t token) const;

  const GrammarMatcher::State& state(int32_t id) const { return states_[static_cast<size_t>(id)]; }
  bool complete(int32_t id) const { return info_[static_cast<size_t>(id)].complete; }
  bool can_continue(int32_t id) const { return info_[static_cast<size_t>(id)].can_continue; }

  // The tokens state id allows, one bit per token id (bit i % 64 of word i /
  // 64); nullptr when a transition the walk needs did not fit. Valid until the
  // next call that can add a mask or clear().
  const uint64_t* mask(int32_t id);
  // The mask when it was computed already, else nullptr.
  const uint64_t* cached_mask(int32_t id) const;
  // How many tokens a cached mask allows.
  size_t cached_mask_count(int32_t id) const;
  size_t mask_words() const { return mask_words_; }

  size_t state_count() const { return states_in_use_; }
  // Past three quarters of a bound: a good time to clear().
  bool crowded() const;
  const GrammarVocabulary& vocabulary() const { return *vocabulary_; }
  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }

 private:
  static constexpr int32_t kUnknown = -3;
  struct StateInfo {
    uint64_t hash;
    size_t row;         // in transitions_
    int32_t mask_slot;  // -1: none
    bool partial;       // inside a UTF-8 character: its row holds the continuation bytes 0x80..0xBF only
    bool complete;
    bool can_continue;
  };
  int32_t intern_matcher_state();
  int32_t learn(int32_t id, size_t slot, uint8_t byte);
  bool walk_trie(int32_t id, uint64_t* bits);      // false: no room
  bool add_preserved(int32_t id, uint64_t* bits);  // false: no room

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  std::vector<int32_t> preserved_;  // increasing
  Limits limits_;
  GrammarMatcher matcher_;  // learns the transitions that are not known yet
  // States by id: [0, states_in_use_) in use; the rest keep their buffers.
  std::vector<GrammarMatcher::State> states_;
  size_t states_in_use_ = 0;
  std::vector<StateInfo> info_;
  std::vector<int32_t> table_;  // ids by hash (open addressing), -1: free
  std::vector<int32_t> transitions_;
  // Masks: slot s is words [s * mask_words_, (s + 1) * mask_words_), held by
  // state slot_owner_[s] (-1: none); slots are reused oldest first.
  size_t mask_words_;
  std::vector<uint64_t> masks_;
  std::vector<int32_t> slot_owner_;
  std::vector<size_t> slot_count_;  // tokens the slot's mask allows
  size_t next_slot_ = 0;
  // The walk's stack: where each open node's subtree ends, and its state.
  std::vector<uint32_t> walk_ends_;
  std::vector<int32_t> walk_states_;
};

}  // namespace peak::sampling
