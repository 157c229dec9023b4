// The grammar stage of a sampler chain: a token is allowed only when its bytes
// can continue the text the grammar reads (a token may straddle rules and
// carry part of a UTF-8 character), an end-of-generation token only where
// the text is a whole string of the grammar, a control token or one that
// writes nothing never. A preserved control token (a tool-call marker the
// model was trained to emit as one token) is the exception: it counts as its
// text, allowed where those bytes can continue the grammar, and accepting it
// advances the grammar over them.
//
// It runs first in the chain, but lazily: when the next stage keeps the k best
// candidates (top-k, or greedy with k = 1) it tests candidates from the best
// down until k are allowed, which costs a few look-ups each
// (grammar_state_cache.h); only when that does not find them soon, or a stage
// needs the whole distribution, it takes the mask of every allowed token,
// cached per grammar state. Either way the candidates left are exactly what
// "drop every token the grammar refuses, then run the stage" leaves.
//
// Its state (where the accepted text stands in the grammar) is a
// GrammarMatcher::State: copying the stage copies it, restore() puts one back.
// The cache is the stage's own and starts empty in a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/grammar_state_cache.h"
#include "sampling/grammar_vocabulary.h"

namespace peak::sampling {

class GrammarStage {
 public:
  // At the start of the grammar. The vocabulary gives the chain's token ids.
  // Throws std::invalid_argument for preserved tokens that
  // GrammarVocabulary::check_preserved refuses.
  GrammarStage(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary,
               std::vector<int32_t> preserved_tokens = {}, const GrammarStateCache::Limits& limits = {});
  GrammarStage(const GrammarStage& other);
  // Of the same grammar, vocabulary and preserved tokens: takes the state,
  // keeping this stage's cache.
  GrammarStage& operator=(const GrammarStage& other);
  GrammarStage(GrammarStage&&) noexcept = default;
  GrammarStage& operator=(GrammarStage&&) noexcept = default;
  ~GrammarStage();

  // Both take the whole vocabulary's candidates in id order (as load_logits
  // leaves them; the penalties may have changed their logits), else throw
  // std::logic_error.
  //
  // Keeps the candidates the grammar allows, in id order. Throws
  // std::invalid_argument when it allows none of the vocabulary.
  void keep_allowed(Candidates& candidates);
  // Keeps the k best allowed candidates (ranks_before), sorted, or every
  // allowed one (unsorted; the caller's top-k then keeps the best k). Throws
  // as keep_allowed().
  void keep_best_allowed(Candidates& candidates, size_t k);
  bool allows(int32_t token);
  // Advances over the token's bytes (an end of generation changes nothing).
  // Throws std::invalid_argument, changing nothing, for a token the grammar
  // does not allow here.
  void accept(int32_t token);
  // Advances over text no token carried alone. Throws std::invalid_argument,
  // changing nothing, when the grammar does not allow it here.
  void accept_text(std::string_view text);

  // The text is a whole string of the grammar and nothing can follow it.
  bool finished() const { return matcher_.is_complete() && !matcher_.can_continue(); }
  const GrammarMatcher::State& state() const { return matcher_.state(); }
  void restore(const GrammarMatcher::State& state);
  void reset();
  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  const std::shared_ptr<const GrammarVocabulary>& vocabulary() const { return vocabulary_; }

 private:
  GrammarStateCache& cache();
  int32_t current();  // the matcher's state's id in the cache
  bool allows_uncached(int32_t token);
  void start(const Candidates& candidates);
  bool keep_best_if_allowed(Candidates& candidates);
  const uint64_t* current_mask();  // nullptr when the cache cannot hold one walk
  static void gather(Candidates& candidates, const uint64_t* bits);
  // Moves the candidates of [from, size) that the mask (or, without one, a
  // test each) allows to `to` onwards; returns the new size.
  size_t keep_allowed_from(Candidates& candidates, size_t from, size_t to);
  [[noreturn]] void refuse_all() const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  std::vector<int32_t> preserved_;  // increasing; the cache keeps its own copy
  GrammarStateCache::Limits limits_;
  GrammarMatcher matcher_;                    // the accepted text's state: the truth
  GrammarMatcher scratch_;                    // tests a token when the cache is full
  std::unique_ptr<GrammarStateCache> cache_;  // made at first use
  int32_t current_ = -1;                      // matcher_'s state in cache_; -1: not looked up yet
};

}  // namespace peak::sampling
