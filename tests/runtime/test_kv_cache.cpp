// KvCache's head-major memory: every row a graph view reads (Tensor::row_ptr
// of head h, cell c) holds what was written for that (head, cell) after
// remove / insert / restore / copy_from, one head's cells are contiguous rows,
// and snapshot() gives the cell-major byte order (a cell's rows of heads 0, 1,
// ... together), built here from the written values alone. Q8_0 keys are read
// and written here through the key lane layout as kernels/repack.h describes
// it, with this file's own indexing.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "runtime/kv_cache.h"

namespace peak::runtime {

using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;

namespace {

// Two groups of keys in lanes, the second partly padding.
constexpr int64_t kLayers = 2, kHeads = 3, kHeadDim = 64, kCells = 21;
constexpr int64_t kLaneCells = 16, kPaddedCells = 32;

model::HParams small_hparams() {
  model::HParams hp;
  hp.n_layer = kLayers;
  hp.n_head = kHeads;
  hp.n_head_kv = kHeads;
  hp.head_dim = kHeadDim;
  return hp;
}

// The bytes written for row (layer, K or V, head, token): `token` names the
// token whose row it is, so moved cells can be followed.
std::vector<uint8_t> row_for(GgmlType type, int64_t layer, int which, int64_t head, int64_t token) {
  std::vector<float> values(kHeadDim);
  for (int64_t i = 0; i < kHeadDim; ++i) {
    const int64_t id = ((layer * 2 + which) * 16 + head) * 64 + token;
    values[static_cast<size_t>(i)] = static_cast<float>(id) + 0.25f * static_cast<float>(i % 4);
  }
  const auto blocks = static_cast<size_t>(kHeadDim / core::type_block_elements(type));
  std::vector<uint8_t> row(blocks * core::type_block_bytes(type));
  kernels_for(type).from_float(values.data(), row.data(), kHeadDim);
  return row;
}

core::Tensor* tensor_of(KvCache& kv, int64_t layer, int which) { return which == 0 ? kv.k(layer) : kv.v(layer); }

// Where byte i of row (h, c) of t lies: in the row as stored, or for keys in
// lanes in its group of 16 cells (which starts where its first cell's row
// would): block b's record at 544 b, code byte j of lane l at 64 (j / 4) +
// 4 l + j % 4 after the block's 2-byte scale in the row, the scale at 512 + 2 l.
uint8_t* byte_of_row(const core::Tensor* t, int64_t h, int64_t c, size_t i) {
  if (!t->key_lanes) return reinterpret_cast<uint8_t*>(t->row_ptr(h, c)) + i;
  auto* group = reinterpret_cast<uint8_t*>(t->row_ptr(h, c - c % kLaneCells));
  const size_t lane = static_cast<size_t>(c % kLaneCells);
  const size_t b = i / 34, j = i % 34;
  uint8_t* record = group + 544 * b;
  return j < 2 ? record + 512 + 2 * lane + j : record + 64 * ((j - 2) / 4) + 4 * lane + (j - 2) % 4;
}

// Calls visit(byte of the row, expected byte, where) for every byte of every
// (layer, K or V, head, cell c < tokens.size()) row, the expected bytes being
// token tokens[c]'s row.
template <class Visit>
void for_each_row(KvCache& kv, const std::vector<int64_t>& tokens, const Visit& visit) {
  for (int64_t l = 0; l < kLayers; ++l) {
    for (int which = 0; which < 2; ++which) {
      core::Tensor* t = tensor_of(kv, l, which);
      for (size_t c = 0; c < tokens.size(); ++c) {
        for (int64_t h = 0; h < kHeads; ++h) {
          const std::vector<uint8_t> row = row_for(t->type, l, which, h, tokens[c]);
          for (size_t i = 0; i < row.size(); ++i) {
            visit(byte_of_row(t, h, static_cast<int64_t>(c), i), row[i],
                  ::testing::Message() << "layer " << l << (which == 0 ? " K" : " V") << " head " << h << " cell " << c
                                       << " byte " << i);
          }
        }
      }
    }
  }
}

// Writes token tokens[c]'s rows into cell c, for every cell listed.
void write_cells(KvCache& kv, const std::vector<int64_t>& tokens) {
  for_each_row(kv, tokens, [](uint8_t* at, uint8_t byte, const ::testing::Message&) { *at = byte; });
}

// Every (head, cell) row of cells [0, tokens.size()) holds token tokens[c]'s row.
void expect_cells(KvCache& kv, const std::vector<int64_t>& tokens) {
  for_each_row(kv, tokens, [](const uint8_t* at, uint8_t byte, const ::testing::Message& where) {
    ASSERT_EQ(*at, byte) << where;
  });
}

class KvCacheLayout : public ::testing::TestWithParam<GgmlType> {
 protected:
  KvCacheParams params() const { return {kCells, GetParam(), GgmlType::Q4_0}; }
};

// Keys in lanes: Q8_0 keys on paths that score them there, each head's cells
// rounded up to whole groups.
TEST_P(KvCacheLayout, OneHeadsCellsAreContiguousRows) {
  KvCache kv(small_hparams(), params());
  EXPECT_EQ(kv.k(0)->key_lanes,
            GetParam() == GgmlType::Q8_0 && kernels_for(GgmlType::Q8_0).gemm_key_lanes != nullptr);
  EXPECT_FALSE(kv.v(1)->key_lanes);
  for (core::Tensor* t : {kv.k(0), kv.v(1)}) {
    const int64_t cells = t->key_lanes ? kPaddedCells : kCells;
    EXPECT_EQ(t->row_ptr(1, 5) - t->row_ptr(1, 4), static_cast<std::ptrdiff_t>(t->row_bytes()));
    EXPECT_EQ(t->row_ptr(1, 0) - t->row_ptr(0, cells - 1), static_cast<std::ptrdiff_t>(t->row_bytes()));
  }
  EXPECT_EQ(kv.cell_bytes_k(), static_cast<size_t>(kHeads) * kv.k(0)->row_bytes());
  EXPECT_EQ(kv.cell_bytes_v(), static_cast<size_t>(kHeads) * kv.v(0)->row_bytes());
}

TEST_P(KvCacheLayout, SnapshotIsCellMajor) {
  KvCache kv(small_hparams(), params());
  kv.append(4, 0);
  write_cells(kv, {0, 1, 2, 3});
  std::vector<uint8_t> expected;
  for (int64_t l = 0; l < kLayers; ++l) {
    for (int which = 0; which < 2; ++which) {
      const GgmlType type = which == 0 ? kv.type_k() : kv.type_v();
      for (int64_t c = 0; c < 4; ++c) {
        for (int64_t h = 0; h < kHeads; ++h) {
          const std::vector<uint8_t> row = row_for(type, l, which, h, c);
          expected.insert(expected.end(), row.begin(), row.end());
        }
      }
    }
  }
  EXPECT_EQ(kv.snapshot(), expected);

  KvCache restored(small_hparams(), params());
  restored.restore(expected, {0, 1, 2, 3});
  expect_cells(restored, {0, 1, 2, 3});
  EXPECT_EQ(restored.positions(), kv.positions());
}

TEST_P(KvCacheLayout, RemoveAndInsertMoveEveryHeadsCells) {
  KvCache kv(small_hparams(), params());
  kv.append(7, 0);
  write_cells(kv, {0, 1, 2, 3, 4, 5, 6});
  kv.remove(1, 2);
  expect_cells(kv, {0, 3, 4, 5, 6});
  kv.insert(2, 3, 100);  // opens cells 2..4; 4, 5, 6 move to 5..7
  ASSERT_EQ(kv.used(), 8);
  for (const int64_t c : {0, 1, 5, 6, 7}) {
    const int64_t token = std::vector<int64_t>{0, 3, -1, -1, -1, 4, 5, 6}[static_cast<size_t>(c)];
    for (int64_t h = 0; h < kHeads; ++h) {
      const std::vector<uint8_t> row = row_for(kv.type_k(), 1, 0, h, token);
      for (size_t i = 0; i < row.size(); ++i) {
        ASSERT_EQ(*byte_of_row(kv.k(1), h, c, i), row[i]) << "head " << h << " cell " << c << " byte " << i;
      }
    }
  }
  kv.remove(7, 1);  // the last cell: nothing moves
  kv.remove(0, 3);
  ASSERT_EQ(kv.used(), 4);
  const std::vector<int32_t> positions = {101, 102, 4, 5};
  EXPECT_EQ(kv.positions(), positions);

  KvCache copy(small_hparams(), params());
  copy.copy_from(kv);
  EXPECT_EQ(copy.snapshot(), kv.snapshot());
}

// Moves by counts that are not whole groups carry rows across groups of keys
// in lanes, both ways.
TEST_P(KvCacheLayout, RemoveAndInsertAcrossGroups) {
  KvCache kv(small_hparams(), params());
  std::vector<int64_t> tokens(20);
  for (size_t c = 0; c < tokens.size(); ++c) tokens[c] = static_cast<int64_t>(c);
  kv.append(20, 0);
  write_cells(kv, tokens);
  kv.remove(3, 5);  // cells 8..19 move down to 3..14
  tokens.erase(tokens.begin() + 3, tokens.begin() + 8);
  expect_cells(kv, tokens);
  kv.insert(2, 5, 50);  // cells 2..14 move up to 7..19
  tokens.insert(tokens.begin() + 2, 5, -1);
  write_cells(kv, {0, 1, 40, 41, 42, 43, 44});
  for (int64_t i = 0; i < 5; ++i) tokens[static_cast<size_t>(2 + i)] = 40 + i;
  expect_cells(kv, tokens);
  KvCache restored(small_hparams(), params());
  restored.restore(kv.snapshot(), kv.positions());
  expect_cells(restored, tokens);
}

// A turn that drops messages removes their cells and puts them back if it
// fails: snapshot_cells then put_back gives the same rows and positions, and
// bad sizes, positions or places change nothing.
TEST_P(KvCacheLayout, PutBackUndoesRemoveExactly) {
  KvCache kv(small_hparams(), params());
  kv.append(3, 0);
  kv.append(4, 10);  // a gap in positions, as a dropped Summary or Recent leaves
  write_cells(kv, {0, 1, 2, 3, 4, 5, 6});
  const std::vector<uint8_t> before = kv.snapshot();
  const std::vector<int32_t> positions_before = kv.positions();
  const std::vector<uint8_t> cells = kv.snapshot_cells(2, 3);
  ASSERT_EQ(cells.size(), before.size() / 7 * 3);
  const std::vector<int32_t> removed_positions(positions_before.begin() + 2, positions_before.begin() + 5);
  kv.remove(2, 3);
  expect_cells(kv, {0, 1, 5, 6});
  kv.append(1, 14);  // a turn's cell, then dropped again as a failed turn's
  kv.drop_last(1);

  std::vector<int32_t> wrong_positions = removed_positions;
  wrong_positions.pop_back();
  EXPECT_THROW(kv.put_back(2, cells, wrong_positions), std::invalid_argument);
  wrong_positions = removed_positions;
  wrong_positions[1] = -1;
  EXPECT_THROW(kv.put_back(2, cells, wrong_positions), std::invalid_argument);
  EXPECT_THROW(kv.put_back(5, cells, removed_positions), std::out_of_range);
  EXPECT_THROW(kv.snapshot_cells(3, 2), std::out_of_range);
  kv.append(kCells - 4, 20);  // full: no room for them
  EXPECT_THROW(kv.put_back(2, cells, removed_positions), ContextFull);
  kv.drop_last(kCells - 4);
  expect_cells(kv, {0, 1, 5, 6});

  kv.put_back(2, cells, removed_positions);
  EXPECT_EQ(kv.snapshot(), before);
  EXPECT_EQ(kv.positions(), positions_before);
  expect_cells(kv, {0, 1, 2, 3, 4, 5, 6});
}

INSTANTIATE_TEST_SUITE_P(Types, KvCacheLayout,
                         ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0),
                         [](const ::testing::TestParamInfo<GgmlType>& type) {
                           return std::string(ggml_type_name(static_cast<uint32_t>(type.param)));
                         });

}  // namespace
}  // namespace peak::runtime
