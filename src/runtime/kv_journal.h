// A record of what an operation did to a KV cache's cells, to take it back.
//
// The operation changes the cells through the journal: removing a range,
// dropping cells off the end, putting removed cells back, shifting positions.
// The journal keeps what undoing each needs (the bytes and positions of the
// cells it took out, where it put cells back, the shift) and undo() undoes
// them last first, so each step sees the cells as its operation left them,
// the way a recovery stack is unwound.
//
// Between two of them the caller may change the cells after those the last
// operation left (evaluating tokens appends cells; it may drop some of them
// again), never those: undo() drops what was added before it undoes the
// operation before it. A shift moves the cells it covers; undone, it moves
// back those of them that stay (the cells added just before it are dropped
// first: moving them back would be work for nothing). A context's shift
// re-rotates keys, so an undone shift restores positions exactly and keys up
// to rounding; the rest is restored byte for byte.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/context.h"
#include "runtime/kv_cache.h"

namespace peak::runtime {

// The cells a journal works on: a cache, and how its cells move to other
// positions.
class KvCells {
 public:
  virtual KvCache& cache() = 0;
  // Adds `delta` to the positions of cells [first, first + n); changes
  // nothing when it throws.
  virtual void shift(int64_t first, int64_t n, int32_t delta) = 0;

 protected:
  ~KvCells() = default;
};

// A context's cells: a shift re-rotates their keys (Context::shift_positions).
class ContextCells final : public KvCells {
 public:
  explicit ContextCells(Context& ctx) : ctx_(ctx) {}
  KvCache& cache() override { return ctx_.kv(); }
  void shift(int64_t first, int64_t n, int32_t delta) override { ctx_.shift_positions(first, n, delta); }

 private:
  Context& ctx_;
};

class KvJournal {
 public:
  // Records from the cells as `cache` holds them now: undo() brings them back.
  explicit KvJournal(const KvCache& cache) : start_(cache.used()) {}

  // Each does what KvCache's (or KvCells::shift) does and records it; one that
  // throws has changed nothing and records nothing.
  void remove(KvCells& cells, int64_t first, int64_t n);
  void drop_last(KvCells& cells, int64_t n);
  void put_back(KvCells& cells, int64_t at, const std::vector<uint8_t>& bytes, const std::vector<int32_t>& positions,
                const std::vector<PicturePlace>& places = {});
  void shift(KvCells& cells, int64_t first, int64_t n, int32_t delta);

  // Undoes the recorded operations, last first, and drops the cells added
  // since the journal started. With `redo`, every step goes through `redo`
  // (which must have started on the cells as they are now), so that
  // redo->undo() puts them back as they were before this call. Throws
  // std::logic_error when cells the last operation left are gone; a step that
  // throws leaves the steps before it done (recorded in `redo`).
  void undo(KvCells& cells, KvJournal* redo = nullptr) const;

 private:
  enum class Op { Remove, PutBack, Shift };  // dropping the last cells removes them
  struct Entry {
    Op op;
    int64_t first;                     // the first cell it removed, put back or shifted
    int64_t n;                         // how many
    int32_t delta;                     // Shift: added to the positions
    int64_t used_after;                // cells used right after it
    std::vector<uint8_t> bytes;        // Remove: the cells taken out (KvCache::snapshot_cells)
    std::vector<int32_t> positions;    // and their positions
    std::vector<PicturePlace> places;  // and places (KvCache::keeps_places)
  };
  // Drops the cells after the first `used` (through `redo` when given).
  static void drop_to(KvCells& cells, int64_t used, KvJournal* redo);

  int64_t start_;
  std::vector<Entry> entries_;
};

}  // namespace peak::runtime
