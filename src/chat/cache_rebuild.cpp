#include "chat/cache_rebuild.h"

#include <algorithm>

#include "runtime/stopwatch.h"

namespace peak::chat {

CacheRebuild::CacheRebuild(const model::Model& model, Start start) : model_(model), start_(std::move(start)) {}

void CacheRebuild::run(const std::vector<int32_t>& summary_segment, const std::atomic<int>& cancel) {
  const runtime::Stopwatch stopwatch;
  staging_ = std::make_unique<runtime::Context>(model_, start_.params);
  staging_kv_bytes_ = staging_->kv().bytes();
  summary_segment_ = summary_segment;
  try {
    staging_->kv().restore(start_.prefix_cells, start_.prefix_positions);
    std::vector<uint8_t>().swap(start_.prefix_cells);  // in the staging cache now
    std::vector<int32_t> tokens = summary_segment;
    ImageList images;
    for (const Message& m : start_.recent) {
      tokens.insert(tokens.end(), m.tokens.begin(), m.tokens.end());
      add_images(images, m.images);
      staged_.emplace_back(m.serial, static_cast<int64_t>(m.tokens.size()));
    }
    std::vector<Message>().swap(start_.recent);
    if (!evaluate(tokens, images, cancel)) drop_staging();
  } catch (...) {
    drop_staging();
    throw;
  }
  seconds_ += stopwatch.seconds();
  if (staging_) drain(cancel);
}

bool CacheRebuild::update(uint64_t first_kept, uint64_t taken_back_from, std::vector<Message> added) {
  std::lock_guard<std::mutex> lock(mutex_);
  has_pending_ = true;
  pending_first_kept_ = first_kept;
  if (taken_back_from != kNoneTakenBack) {
    // Messages added since the last apply and taken back already never reach
    // the cache; those applied leave it in apply().
    pending_added_.erase(std::remove_if(pending_added_.begin(), pending_added_.end(),
                                        [taken_back_from](const Message& m) { return m.serial >= taken_back_from; }),
                         pending_added_.end());
    pending_taken_back_from_ = std::min(pending_taken_back_from_, taken_back_from);
  }
  for (Message& m : added) pending_added_.push_back(std::move(m));
  if (worker_active_) return true;
  worker_active_ = true;  // the caller's drain() will take it
  return false;
}

void CacheRebuild::drain(const std::atomic<int>& cancel) {
  const runtime::Stopwatch stopwatch;
  for (;;) {
    uint64_t first_kept = 0, taken_back_from = kNoneTakenBack;
    std::vector<Message> added;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!has_pending_) {
        worker_active_ = false;
        break;
      }
      has_pending_ = false;
      first_kept = pending_first_kept_;
      taken_back_from = pending_taken_back_from_;
      pending_taken_back_from_ = kNoneTakenBack;
      added.swap(pending_added_);
    }
    if (staging_ && !apply(first_kept, taken_back_from, added, cancel)) drop_staging();
  }
  seconds_ += stopwatch.seconds();
}

bool CacheRebuild::apply(uint64_t first_kept, uint64_t taken_back_from, const std::vector<Message>& added,
                         const std::atomic<int>& cancel) {
  // Messages taken back are the last ones (serials grow along staged_): their
  // cells are the last cells.
  int64_t taken_back = 0;
  while (!staged_.empty() && staged_.back().first >= taken_back_from) {
    taken_back += staged_.back().second;
    staged_.pop_back();
  }
  staging_->kv().drop_last(taken_back);
  // Recent drops whole messages from its front, so the removed ones lead staged_.
  size_t n_removed = 0;
  int64_t removed = 0, kept = 0;
  while (n_removed < staged_.size() && staged_[n_removed].first < first_kept) removed += staged_[n_removed++].second;
  for (size_t i = n_removed; i < staged_.size(); ++i) kept += staged_[i].second;
  if (removed > 0) {
    const auto first = static_cast<int64_t>(start_.prefix_positions.size() + summary_segment_.size());
    staging_->kv().remove(first, removed);
    // Their positions, more than their cells where a picture's tokens share one.
    staging_->shift_positions(first, kept, -staging_->kv().gap_before(first));
  }
  staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(n_removed));
  std::vector<int32_t> tokens;
  ImageList images;
  for (const Message& m : added) {
    tokens.insert(tokens.end(), m.tokens.begin(), m.tokens.end());
    add_images(images, m.images);
    staged_.emplace_back(m.serial, static_cast<int64_t>(m.tokens.size()));
  }
  return evaluate(tokens, images, cancel);
}

bool CacheRebuild::evaluate(const std::vector<int32_t>& tokens, const ImageList& images,
                            const std::atomic<int>& cancel) {
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t at = 0; at < n;) {
    if (cancel.load() != 0) return false;
    // A batch of text up to the next image, or one image's run whole (its
    // rows may attend to each other).
    int64_t end = at + 1;
    if (is_image_token(tokens[at])) {
      while (end < n && is_image_token(tokens[end]) && image_of(tokens[end]) == image_of(tokens[at])) ++end;
    } else {
      while (end < n && end - at < staging_->n_batch() && !is_image_token(tokens[end])) ++end;
    }
    evaluate_cells(*staging_, tokens.data() + at, end - at, images);
    at = end;
  }
  return cancel.load() == 0;
}

void CacheRebuild::drop_staging() {
  staging_.reset();
  staging_kv_bytes_ = 0;
}

std::unique_ptr<runtime::Context> CacheRebuild::take() {
  staging_kv_bytes_ = 0;  // the caller's cache from now on
  return std::move(staging_);
}

}  // namespace peak::chat
