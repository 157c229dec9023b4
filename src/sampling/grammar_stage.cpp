#include "sampling/grammar_stage.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace peak::sampling {

namespace {

// The best candidates tested one by one before the stage takes the mask
// instead: at least this many, and twice k. Ordering them costs a pass over
// the candidates, as the mask's does; finding k among them is the common case
// when the model writes what the grammar wants.
constexpr size_t kTestedOneByOne = 64;

bool has_bit(const uint64_t* bits, int32_t token) {
  return (bits[static_cast<size_t>(token) / 64] >> (token % 64) & 1u) != 0;
}

}  // namespace

GrammarStage::GrammarStage(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary,
                           std::vector<int32_t> preserved_tokens, const GrammarStateCache::Limits& limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      preserved_(std::move(preserved_tokens)),
      limits_(limits),
      matcher_(grammar_),
      scratch_(grammar_) {
  vocabulary_->check_preserved(preserved_);
}

GrammarStage::GrammarStage(const GrammarStage& other)
    : grammar_(other.grammar_),
      vocabulary_(other.vocabulary_),
      preserved_(other.preserved_),
      limits_(other.limits_),
      matcher_(other.matcher_),
      scratch_(other.scratch_) {}

GrammarStage& GrammarStage::operator=(const GrammarStage& other) {
  if (this == &other) return *this;
  if (other.grammar_ != grammar_ || other.vocabulary_ != vocabulary_ || other.preserved_ != preserved_) {
    *this = GrammarStage(other);
    return *this;
  }
  restore(other.matcher_.state());
  return *this;
}

GrammarStage::~GrammarStage() = default;

GrammarStateCache& GrammarStage::cache() {
  if (!cache_) cache_ = std::make_unique<GrammarStateCache>(grammar_, vocabulary_, preserved_, limits_);
  return *cache_;
}

int32_t GrammarStage::current() {
  GrammarStateCache& states = cache();
  if (current_ >= 0) return current_;
  current_ = states.intern(matcher_.state());
  if (current_ == GrammarStateCache::kNoRoom) {
    states.clear();
    current_ = states.intern(matcher_.state());  // an empty cache has room for one state
  }
  return current_;
}

void GrammarStage::restore(const GrammarMatcher::State& state) {
  matcher_.restore(state);
  current_ = -1;
}

void GrammarStage::reset() {
  matcher_.reset();
  current_ = -1;
}

bool GrammarStage::allows_uncached(int32_t token) {
  if (cache_->reads_bytes(token)) {
    scratch_.restore(matcher_.state());
    return scratch_.accept_bytes(vocabulary_->bytes(token));
  }
  return vocabulary_->kind(token) == GrammarVocabulary::Kind::kEndOfGeneration && matcher_.is_complete();
}

bool GrammarStage::allows(int32_t token) {
  if (token < 0 || token >= vocabulary_->size()) return false;
  const int32_t id = current();
  if (const uint64_t* bits = cache_->cached_mask(id)) return has_bit(bits, token);
  const int32_t allowed = cache_->allows(id, token);
  return allowed == GrammarStateCache::kNoRoom ? allows_uncached(token) : allowed == 1;
}

void GrammarStage::accept(int32_t token) {
  if (!allows(token)) {
    throw std::invalid_argument("sampling: token " + std::to_string(token) +
                                " cannot continue the grammar here (the text so far and the token's bytes are no "
                                "prefix of a string of the grammar" +
                                std::string(token >= 0 && token < vocabulary_->size() &&
                                                    vocabulary_->kind(token) == GrammarVocabulary::Kind::kControl &&
                                                    !std::binary_search(preserved_.begin(), preserved_.end(), token)
                                                ? "; a control token is allowed only when preserved)"
                                                : ")"));
  }
  if (!cache_->reads_bytes(token)) return;  // an end of generation
  const int32_t to = cache_->follow(current(), vocabulary_->bytes(token));
  if (to >= 0) {
    matcher_.restore(cache_->state(to));
    current_ = to;
    return;
  }
  matcher_.accept_bytes(vocabulary_->bytes(token));  // no room in the cache: allowed, as tested above
  current_ = -1;
}

void GrammarStage::accept_text(std::string_view text) {
  scratch_.restore(matcher_.state());
  if (!scratch_.accept_bytes(text)) {
    throw std::invalid_argument("sampling: the text '" + std::string(text) +
                                "' cannot continue the grammar here (the text so far and it are no prefix of a "
                                "string of the grammar)");
  }
  matcher_.restore(scratch_.state());
  current_ = -1;
}

const uint64_t* GrammarStage::current_mask() {
  const uint64_t* bits = cache_->mask(current());
  if (!bits && cache_->state_count() > 1) {
    cache_->clear();
    current_ = -1;
    bits = cache_->mask(current());
  }
  return bits;  // nullptr: one walk needs more than the whole cache
}

size_t GrammarStage::keep_allowed_from(Candidates& candidates, size_t from, size_t to) {
  const uint64_t* bits = current_mask();
  for (size_t i = from; i < candidates.size; ++i) {
    const int32_t token = candidates.data[i].id;
    if (bits ? has_bit(bits, token) : allows_uncached(token)) candidates.data[to++] = candidates.data[i];
  }
  return to;
}

// Candidates in id order: the allowed ones are read off the mask's set bits,
// touching only them (token id >= its new place, so in place).
void GrammarStage::gather(Candidates& candidates, const uint64_t* bits) {
  size_t kept = 0;
  const size_t words = (candidates.size + 63) / 64;
  for (size_t w = 0; w < words; ++w) {
    for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
      const size_t id = w * 64 + static_cast<size_t>(__builtin_ctzll(word));
      candidates.data[kept++] = candidates.data[id];
    }
  }
  candidates.size = kept;
  candidates.sorted = false;
}

void GrammarStage::start(const Candidates& candidates) {
  if (candidates.size != static_cast<size_t>(vocabulary_->size()) || candidates.sorted) {
    throw std::logic_error("sampling: the grammar stage takes the candidates in id order, as load_logits leaves them");
  }
  if (cache().crowded()) {
    cache_->clear();
    current_ = -1;
  }
}

// Greedy's usual case, the model's best token allowed: one scan (in id
// order, so the first of equal logits is the lowest id, as ranks_before has it).
bool GrammarStage::keep_best_if_allowed(Candidates& candidates) {
  size_t best = 0;
  for (size_t i = 1; i < candidates.size; ++i) {
    if (candidates.data[i].logit > candidates.data[best].logit) best = i;
  }
  if (!allows(candidates.data[best].id)) return false;
  candidates.data[0] = candidates.data[best];
  candidates.size = 1;
  candidates.sorted = true;
  return true;
}

void GrammarStage::keep_allowed(Candidates& candidates) {
  start(candidates);
  if (const uint64_t* bits = current_mask()) {
    gather(candidates, bits);
  } else {
    candidates.size = keep_allowed_from(candidates, 0, 0);
  }
  if (candidates.size == 0) refuse_all();
}

void GrammarStage::keep_best_allowed(Candidates& candidates, size_t k) {
  start(candidates);
  if (k == 0) {
    keep_allowed(candidates);
    return;
  }
  // A mask known to allow few tokens: reading them off it costs less than
  // testing the best candidates one by one.
  const int32_t id = current();
  if (const uint64_t* bits = cache_->cached_mask(id); bits && cache_->cached_mask_count(id) * 8 < candidates.size) {
    gather(candidates, bits);
    if (candidates.size == 0) refuse_all();
    return;
  }
  if (k == 1 && keep_best_if_allowed(candidates)) return;
  // The best `chunk` candidates sorted and tested, the allowed ones moved to
  // the front; if fewer than k, the rest by the mask.
  const size_t chunk = std::min(candidates.size, std::max(kTestedOneByOne, 2 * k));
  std::partial_sort(candidates.data, candidates.data + chunk, candidates.data + candidates.size, ranks_before);
  size_t found = 0;
  for (size_t i = 0; i < chunk; ++i) {
    if (!allows(candidates.data[i].id)) continue;
    candidates.data[found++] = candidates.data[i];
    if (found == k) {
      candidates.size = found;
      candidates.sorted = true;
      return;
    }
  }
  if (chunk == candidates.size) {
    candidates.size = found;
    candidates.sorted = true;
  } else {
    candidates.size = keep_allowed_from(candidates, chunk, found);
    candidates.sorted = false;
  }
  if (candidates.size == 0) refuse_all();
}

void GrammarStage::refuse_all() const {
  if (matcher_.is_complete()) {
    throw std::invalid_argument(
        "sampling: the text is a whole string of the grammar here and no token can follow it: the vocabulary has "
        "no end-of-generation token, and no token's bytes continue the grammar");
  }
  throw std::invalid_argument(
      "sampling: no token of the vocabulary can continue the grammar here (the grammar asks for bytes that no "
      "token's bytes begin with, or its matcher reached a bound)");
}

}  // namespace peak::sampling
