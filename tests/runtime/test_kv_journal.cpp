// KvJournal: random sequences of cell operations (removes, drops off the end,
// put-backs, shifts, with cells appended and changed between them as
// evaluating tokens does) on a KvCache, then undone. The cells must come back
// exactly as they were before the first operation, every cell's bytes (each
// cell is written with bytes of its own) and position; and undone through a
// second journal, that one's undo must give back exactly the cells as they
// were before. The shift here adds to positions only (KvCache::add_to_positions),
// so that bytes can be compared: a context's shift re-rotates keys as well.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/kv_journal.h"

namespace peak::runtime {
using kernels::GgmlType;

namespace {

model::HParams small_hparams() {
  model::HParams hp;
  hp.n_layer = 2;
  hp.n_head = 2;
  hp.n_head_kv = 2;
  hp.head_dim = 32;
  return hp;
}

constexpr int64_t kCells = 96;

// Q8_0 keys (kept in lanes where the kernels score them there) and F16 values.
KvCacheParams cache_params() {
  KvCacheParams p;
  p.n_ctx = kCells;
  p.type_k = GgmlType::Q8_0;
  p.type_v = GgmlType::F16;
  return p;
}

class PositionCells final : public KvCells {
 public:
  explicit PositionCells(KvCache& cache) : cache_(cache) {}
  KvCache& cache() override { return cache_; }
  void shift(int64_t first, int64_t n, int32_t delta) override { cache_.add_to_positions(first, n, delta); }

 private:
  KvCache& cache_;
};

// Everything that tells cells apart: their bytes and positions, in order.
struct CellState {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> positions;
  bool operator==(const CellState& o) const { return bytes == o.bytes && positions == o.positions; }
};

CellState state_of(const KvCache& cache) { return {cache.snapshot(), cache.positions()}; }

// Makes cells whose every byte names them (a serial of their own), at random positions.
class CellMaker {
 public:
  CellMaker(const KvCache& cache, std::mt19937& rng) : cache_(cache), rng_(rng) {}
  void make(int64_t n, std::vector<uint8_t>& bytes, std::vector<int32_t>& positions) {
    // A snapshot of n cells: per layer, K then V, each cell's row bytes together.
    bytes.clear();
    positions.clear();
    std::vector<uint32_t> serials(static_cast<size_t>(n));
    for (uint32_t& s : serials) s = ++serial_;
    for (size_t l = 0; l < cache_.layers().size(); ++l) {
      for (const size_t row : {cache_.cell_bytes_k(), cache_.cell_bytes_v()}) {
        for (const uint32_t s : serials) {
          for (size_t i = 0; i < row; ++i) bytes.push_back(static_cast<uint8_t>((s * 131 + l * 7 + i) ^ (s >> 8)));
        }
      }
    }
    std::uniform_int_distribution<int32_t> position(0, 4000);
    for (int64_t i = 0; i < n; ++i) positions.push_back(position(rng_));
  }

 private:
  const KvCache& cache_;
  std::mt19937& rng_;
  uint32_t serial_ = 0;
};

// One random sequence: what it did, for a failure's message.
class RandomOperations {
 public:
  RandomOperations(KvCache& cache, unsigned seed) : cache_(cache), cells_(cache), rng_(seed), maker_(cache, rng_) {}

  void fill(int64_t n) {
    std::vector<uint8_t> bytes;
    std::vector<int32_t> positions;
    maker_.make(n, bytes, positions);
    cache_.put_back(cache_.used(), bytes, positions);
  }

  // Applies `count` operations through `journal`, with cells appended and
  // changed beyond what the last one left between them.
  void run(KvJournal& journal, int count) {
    int64_t level = cache_.used();  // what the last operation left
    for (int i = 0; i < count; ++i) {
      if (pick(3) == 0) change_tail(level);
      apply(journal);
      level = cache_.used();
    }
    if (pick(2) == 0) change_tail(level);
  }

  PositionCells& cells() { return cells_; }
  std::string log() const { return log_.str(); }

 private:
  int64_t pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }

  // Appends cells, then maybe removes some of the cells after `level` again.
  void change_tail(int64_t level) {
    const int64_t added = pick(std::min<int64_t>(8, cache_.free_cells()) + 1);
    fill(added);
    log_ << "append " << added << "; ";
    const int64_t after = cache_.used() - level;
    if (after > 0 && pick(2) == 0) {
      const int64_t first = level + pick(after), n = pick(cache_.used() - first + 1);
      cache_.remove(first, n);
      log_ << "remove tail [" << first << ", +" << n << "); ";
    }
  }

  void apply(KvJournal& journal) {
    const int64_t used = cache_.used();
    switch (pick(4)) {
      case 0: {
        const int64_t first = pick(used + 1), n = pick(used - first + 1);
        journal.remove(cells_, first, n);
        log_ << "remove [" << first << ", +" << n << "); ";
        break;
      }
      case 1: {
        const int64_t n = pick(used + 1);
        journal.drop_last(cells_, n);
        log_ << "drop_last " << n << "; ";
        break;
      }
      case 2: {
        const int64_t at = pick(used + 1), n = pick(std::min<int64_t>(8, cache_.free_cells()) + 1);
        std::vector<uint8_t> bytes;
        std::vector<int32_t> positions;
        maker_.make(n, bytes, positions);
        journal.put_back(cells_, at, bytes, positions);
        log_ << "put_back " << n << " at " << at << "; ";
        break;
      }
      default: {
        const int64_t first = pick(used + 1), n = pick(used - first + 1);
        const auto delta = static_cast<int32_t>(pick(2001) - 1000);
        try {
          journal.shift(cells_, first, n, delta);
          log_ << "shift [" << first << ", +" << n << ") by " << delta << "; ";
        } catch (const std::out_of_range&) {
          log_ << "(refused shift by " << delta << ") ";  // a position would go below 0: nothing changed
        }
      }
    }
  }

  KvCache& cache_;
  PositionCells cells_;
  std::mt19937 rng_;
  CellMaker maker_;
  std::ostringstream log_;
};

TEST(KvJournal, UndoingRandomOperationsRestoresTheCellsExactly) {
  KvCache cache(small_hparams(), cache_params());
  int shifted = 0;
  for (unsigned seed = 1; seed <= 3000; ++seed) {
    cache.clear();
    RandomOperations ops(cache, seed);
    ops.fill(static_cast<int64_t>(seed % 40));
    const CellState before = state_of(cache);
    KvJournal journal(cache);
    ops.run(journal, 1 + static_cast<int>(seed % 9));
    shifted += ops.log().find("shift [") != std::string::npos ? 1 : 0;
    const CellState done = state_of(cache);

    // Undone through a second journal, which can then put it all back.
    KvJournal redo(cache);
    journal.undo(ops.cells(), &redo);
    ASSERT_TRUE(state_of(cache) == before) << "seed " << seed << ": " << ops.log();
    redo.undo(ops.cells());
    ASSERT_TRUE(state_of(cache) == done) << "seed " << seed << " (redo): " << ops.log();
    journal.undo(ops.cells());
    ASSERT_TRUE(state_of(cache) == before) << "seed " << seed << " (plain undo): " << ops.log();
  }
  EXPECT_GT(shifted, 1000);  // the sequences shift often
}

// Appends `n` new cells at positions first_position, +1, ..., as evaluating tokens does.
void append_cells(KvCache& cache, CellMaker& maker, int32_t first_position, int64_t n) {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> positions;
  maker.make(n, bytes, positions);
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = first_position + static_cast<int32_t>(i);
  cache.put_back(cache.used(), bytes, positions);
}

// A cache whose cells sit at positions 0, 1, ..., and the cells a journal works on.
struct CompactCells {
  CompactCells(int64_t n, unsigned seed) : cache(small_hparams(), cache_params()), rng(seed), maker(cache, rng) {
    append_cells(cache, maker, 0, n);
  }
  KvCache cache;
  std::mt19937 rng;
  CellMaker maker;
  PositionCells cells{cache};
};

// Regenerating a turn: the turn's journal (Recent's oldest cells removed to
// make room, the turn's cells appended, the rest moved down over the gap) is
// taken back through a second journal, whose undo (a failed new turn) gives
// the turn back as it was.
TEST(KvJournal, ATurnTakenBackComesBackAsItWas) {
  CompactCells c(30, 7);
  KvCache& cache = c.cache;
  PositionCells& cells = c.cells;
  const CellState before = state_of(cache);

  KvJournal turn(cache);
  turn.remove(cells, 10, 6);                     // making room: cells 10..15 leave, the rest keeps its positions
  append_cells(cache, c.maker, 30, 5);           // the turn's tokens
  turn.shift(cells, 10, cache.used() - 10, -6);  // after the answer, over the gap
  for (int64_t i = 0; i < cache.used(); ++i) ASSERT_EQ(cache.positions()[static_cast<size_t>(i)], i);
  const CellState after = state_of(cache);

  KvJournal taken_back(cache);
  turn.undo(cells, &taken_back);
  EXPECT_TRUE(state_of(cache) == before);
  taken_back.undo(cells);
  EXPECT_TRUE(state_of(cache) == after);
}

TEST(KvJournal, RefusesToUndoOverCellsAnOperationLeftThatAreGone) {
  CompactCells c(12, 3);
  KvJournal journal(c.cache);
  journal.remove(c.cells, 2, 3);
  c.cache.drop_last(1);  // below what the remove left
  EXPECT_THROW(journal.undo(c.cells), std::logic_error);
}

}  // namespace
}  // namespace peak::runtime
