#include "runtime/kv_journal.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace peak::runtime {

void KvJournal::remove(KvCells& cells, int64_t first, int64_t n) {
  KvCache& cache = cells.cache();
  std::vector<uint8_t> bytes = cache.snapshot_cells(first, n);  // checks the range
  std::vector<int32_t> positions(cache.positions().begin() + first, cache.positions().begin() + first + n);
  std::vector<PicturePlace> places;
  if (cache.keeps_places()) places.assign(cache.places().begin() + first, cache.places().begin() + first + n);
  cache.remove(first, n);
  entries_.push_back(
      {Op::Remove, first, n, 0, cache.used(), std::move(bytes), std::move(positions), std::move(places)});
}

void KvJournal::drop_last(KvCells& cells, int64_t n) { remove(cells, cells.cache().used() - n, n); }

void KvJournal::put_back(KvCells& cells, int64_t at, const std::vector<uint8_t>& bytes,
                         const std::vector<int32_t>& positions, const std::vector<PicturePlace>& places) {
  KvCache& cache = cells.cache();
  cache.put_back(at, bytes, positions, places);
  entries_.push_back({Op::PutBack, at, static_cast<int64_t>(positions.size()), 0, cache.used(), {}, {}, {}});
}

void KvJournal::shift(KvCells& cells, int64_t first, int64_t n, int32_t delta) {
  cells.shift(first, n, delta);
  entries_.push_back({Op::Shift, first, n, delta, cells.cache().used(), {}, {}, {}});
}

void KvJournal::undo(KvCells& cells, KvJournal* redo) const {
  KvCache& cache = cells.cache();
  for (size_t i = entries_.size(); i-- > 0;) {
    const Entry& e = entries_[i];
    if (e.op != Op::Shift) drop_to(cells, e.used_after, redo);
    if (e.op == Op::Remove) {
      if (redo) {
        redo->put_back(cells, e.first, e.bytes, e.positions, e.places);
      } else {
        cache.put_back(e.first, e.bytes, e.positions, e.places);
      }
    } else if (e.op == Op::PutBack) {
      if (redo) {
        redo->remove(cells, e.first, e.n);
      } else {
        cache.remove(e.first, e.n);
      }
    } else {
      // The cells added before the shift go next: they go first, and only
      // the shifted cells that stay move back.
      const int64_t before = i > 0 ? entries_[i - 1].used_after : start_;
      drop_to(cells, before, redo);
      const int64_t n = std::min(e.first + e.n, before) - e.first;
      if (n <= 0) continue;
      if (redo) {
        redo->shift(cells, e.first, n, -e.delta);
      } else {
        cells.shift(e.first, n, -e.delta);
      }
    }
  }
  drop_to(cells, start_, redo);
}

void KvJournal::drop_to(KvCells& cells, int64_t used, KvJournal* redo) {
  KvCache& cache = cells.cache();
  if (cache.used() < used) {
    throw std::logic_error("KV journal: " + std::to_string(cache.used()) + " cells are used, fewer than the " +
                           std::to_string(used) + " an operation it recorded left");
  }
  if (cache.used() == used) return;
  if (redo) {
    redo->drop_last(cells, cache.used() - used);
  } else {
    cache.drop_last(cache.used() - used);
  }
}

}  // namespace peak::runtime
