#include "sampling/grammar_state_cache.h"

#include <algorithm>
#include <utility>

namespace peak::sampling {

namespace {

constexpr size_t kFullRow = 256;
constexpr size_t kContinuationRow = 64;  // bytes 0x80..0xBF, the only ones inside a character

size_t table_size_for(size_t max_states) {
  size_t size = 64;
  while (size < 2 * max_states) size *= 2;
  return size;
}

}  // namespace

GrammarStateCache::GrammarStateCache(std::shared_ptr<const Grammar> grammar,
                                     std::shared_ptr<const GrammarVocabulary> vocabulary,
                                     std::vector<int32_t> preserved_tokens, const Limits& limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      preserved_(std::move(preserved_tokens)),
      limits_(limits),
      matcher_(grammar_),
      table_(table_size_for(limits.max_states), -1),
      mask_words_((static_cast<size_t>(vocabulary_->size()) + 63) / 64) {
  const size_t mask_slots = std::max<size_t>(1, limits_.mask_bytes / (mask_words_ * sizeof(uint64_t)));
  slot_owner_.assign(mask_slots, -1);
  slot_count_.assign(mask_slots, 0);
  walk_ends_.reserve(vocabulary_->max_token_bytes() + 1);
  walk_states_.reserve(vocabulary_->max_token_bytes() + 1);
}

void GrammarStateCache::clear() {
  states_in_use_ = 0;
  info_.clear();
  std::fill(table_.begin(), table_.end(), -1);
  transitions_.clear();
  std::fill(slot_owner_.begin(), slot_owner_.end(), -1);
  next_slot_ = 0;
}

bool GrammarStateCache::crowded() const {
  return states_in_use_ * 4 > limits_.max_states * 3 || transitions_.size() * 4 > limits_.max_transitions * 3;
}

int32_t GrammarStateCache::intern(const GrammarMatcher::State& state) {
  matcher_.restore(state);
  return intern_matcher_state();
}

// The matcher's state, found or added.
int32_t GrammarStateCache::intern_matcher_state() {
  const GrammarMatcher::State& state = matcher_.state();
  const uint64_t hash = state.hash();
  const size_t wrap = table_.size() - 1;
  size_t at = static_cast<size_t>(hash) & wrap;
  for (; table_[at] >= 0; at = (at + 1) & wrap) {
    const auto id = static_cast<size_t>(table_[at]);
    if (info_[id].hash == hash && states_[id] == state) return table_[at];
  }
  const bool partial = state.utf8_needed != 0;
  const size_t row = partial ? kContinuationRow : kFullRow;
  if (states_in_use_ == limits_.max_states || transitions_.size() + row > limits_.max_transitions) return kNoRoom;
  const auto id = static_cast<int32_t>(states_in_use_++);
  if (states_.size() < states_in_use_) {
    states_.push_back(state);
  } else {
    states_[static_cast<size_t>(id)] = state;
  }
  info_.push_back(StateInfo{hash, transitions_.size(), -1, partial, matcher_.is_complete(), matcher_.can_continue()});
  transitions_.resize(transitions_.size() + row, kUnknown);
  table_[at] = id;
  return id;
}

int32_t GrammarStateCache::next(int32_t id, uint8_t byte) {
  const StateInfo& info = info_[static_cast<size_t>(id)];
  size_t slot = info.row + byte;
  if (info.partial) {
    if (byte < 0x80 || byte > 0xBF) return kRejected;
    slot -= 0x80;
  }
  const int32_t known = transitions_[slot];
  return known != kUnknown ? known : learn(id, slot, byte);
}

int32_t GrammarStateCache::learn(int32_t id, size_t slot, uint8_t byte) {
  matcher_.restore(states_[static_cast<size_t>(id)]);
  // A bound of the matcher reached counts as rejected: it cannot tell.
  const int32_t to = matcher_.accept_byte(byte) ? intern_matcher_state() : kRejected;
  if (to != kNoRoom) transitions_[slot] = to;
  return to;
}

int32_t GrammarStateCache::follow(int32_t id, std::string_view bytes) {
  for (const char byte : bytes) {
    id = next(id, static_cast<uint8_t>(byte));
    if (id < 0) return id;
  }
  return id;
}

bool GrammarStateCache::reads_bytes(int32_t token) const {
  const GrammarVocabulary::Kind kind = vocabulary_->kind(token);
  return kind == GrammarVocabulary::Kind::kText ||
         (kind == GrammarVocabulary::Kind::kControl && std::binary_search(preserved_.begin(), preserved_.end(), token));
}

int32_t GrammarStateCache::allows(int32_t id, int32_t token) {
  if (reads_bytes(token)) {
    const int32_t to = follow(id, vocabulary_->bytes(token));
    return to >= 0 ? 1 : to == kNoRoom ? kNoRoom : 0;
  }
  return vocabulary_->kind(token) == GrammarVocabulary::Kind::kEndOfGeneration && complete(id) ? 1 : 0;
}

const uint64_t* GrammarStateCache::cached_mask(int32_t id) const {
  const int32_t slot = info_[static_cast<size_t>(id)].mask_slot;
  return slot < 0 ? nullptr : masks_.data() + static_cast<size_t>(slot) * mask_words_;
}

size_t GrammarStateCache::cached_mask_count(int32_t id) const {
  const int32_t slot = info_[static_cast<size_t>(id)].mask_slot;
  return slot < 0 ? 0 : slot_count_[static_cast<size_t>(slot)];
}

const uint64_t* GrammarStateCache::mask(int32_t id) {
  if (const uint64_t* known = cached_mask(id)) return known;
  const size_t slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % slot_owner_.size();
  if (slot_owner_[slot] >= 0) info_[static_cast<size_t>(slot_owner_[slot])].mask_slot = -1;
  slot_owner_[slot] = -1;
  if (masks_.size() < (slot + 1) * mask_words_) masks_.resize((slot + 1) * mask_words_);
  uint64_t* bits = masks_.data() + slot * mask_words_;
  std::fill(bits, bits + mask_words_, 0);
  if (!walk_trie(id, bits) || !add_preserved(id, bits)) return nullptr;
  if (complete(id)) {
    for (const int32_t token : vocabulary_->end_of_generation_tokens()) {
      bits[static_cast<size_t>(token) / 64] |= uint64_t{1} << (token % 64);
    }
  }
  size_t count = 0;
  for (size_t w = 0; w < mask_words_; ++w) count += static_cast<size_t>(__builtin_popcountll(bits[w]));
  slot_count_[slot] = count;
  slot_owner_[slot] = id;
  info_[static_cast<size_t>(id)].mask_slot = static_cast<int32_t>(slot);
  return bits;
}

// Preserved tokens are in no trie (it holds text tokens only, shared by every
// chain): each is followed on its own.
bool GrammarStateCache::add_preserved(int32_t id, uint64_t* bits) {
  for (const int32_t token : preserved_) {
    const int32_t to = follow(id, vocabulary_->bytes(token));
    if (to == kNoRoom) return false;
    if (to >= 0) bits[static_cast<size_t>(token) / 64] |= uint64_t{1} << (token % 64);
  }
  return true;
}

// Depth first over the trie, a stack holding each open node's state: a node
// whose byte its parent's state rejects is skipped with its whole subtree.
bool GrammarStateCache::walk_trie(int32_t id, uint64_t* bits) {
  const std::vector<GrammarVocabulary::TrieNode>& nodes = vocabulary_->trie();
  const int32_t* tokens = vocabulary_->trie_tokens();
  const auto node_count = static_cast<uint32_t>(vocabulary_->trie_node_count());
  walk_ends_.clear();
  walk_states_.clear();
  walk_ends_.push_back(node_count);
  walk_states_.push_back(id);
  for (uint32_t i = 0; i < node_count;) {
    while (walk_ends_.back() <= i) {
      walk_ends_.pop_back();
      walk_states_.pop_back();
    }
    const GrammarVocabulary::TrieNode& node = nodes[i];
    const int32_t to = next(walk_states_.back(), node.byte);
    if (to == kNoRoom) return false;
    if (to < 0) {
      i = node.subtree_end;
      continue;
    }
    for (uint32_t t = node.tokens_begin; t < nodes[i + 1].tokens_begin; ++t) {
      bits[static_cast<size_t>(tokens[t]) / 64] |= uint64_t{1} << (tokens[t] % 64);
    }
    walk_ends_.push_back(node.subtree_end);
    walk_states_.push_back(to);
    ++i;
  }
  return true;
}

}  // namespace peak::sampling
