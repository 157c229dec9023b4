// KvCache's head-major memory: every row a graph view reads (Tensor::row_ptr
// of head h, cell c) holds what was written for that (head, cell) after
// remove / insert / restore / copy_from, one head's cells are contiguous rows,
// and snapshot() gives the cell-major byte order (a cell's rows of heads 0, 1,
// ... together), built here from the written values alone.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "runtime/kv_cache.h"

namespace peak::runtime {
namespace {

constexpr int64_t kLayers = 2, kHeads = 3, kHeadDim = 32, kCells = 9;

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

// Calls visit(row address, expected bytes, where) for every (layer, K or V,
// head, cell c < tokens.size()), the expected bytes being token tokens[c]'s row.
template <class Visit>
void for_each_row(KvCache& kv, const std::vector<int64_t>& tokens, const Visit& visit) {
  for (int64_t l = 0; l < kLayers; ++l) {
    for (int which = 0; which < 2; ++which) {
      core::Tensor* t = tensor_of(kv, l, which);
      for (size_t c = 0; c < tokens.size(); ++c) {
        for (int64_t h = 0; h < kHeads; ++h) {
          visit(t->row_ptr(h, static_cast<int64_t>(c)), row_for(t->type, l, which, h, tokens[c]),
                ::testing::Message() << "layer " << l << (which == 0 ? " K" : " V") << " head " << h << " cell " << c);
        }
      }
    }
  }
}

// Writes token tokens[c]'s rows into cell c, for every cell listed.
void write_cells(KvCache& kv, const std::vector<int64_t>& tokens) {
  for_each_row(kv, tokens, [](char* at, const std::vector<uint8_t>& row, const ::testing::Message&) {
    std::memcpy(at, row.data(), row.size());
  });
}

// Every (head, cell) row of cells [0, tokens.size()) holds token tokens[c]'s row.
void expect_cells(KvCache& kv, const std::vector<int64_t>& tokens) {
  for_each_row(kv, tokens, [](const char* at, const std::vector<uint8_t>& row, const ::testing::Message& where) {
    EXPECT_EQ(std::memcmp(at, row.data(), row.size()), 0) << where;
  });
}

class KvCacheLayout : public ::testing::TestWithParam<GgmlType> {
 protected:
  KvCacheParams params() const { return {kCells, GetParam(), GgmlType::Q4_0}; }
};

TEST_P(KvCacheLayout, OneHeadsCellsAreContiguousRows) {
  KvCache kv(small_hparams(), params());
  for (core::Tensor* t : {kv.k(0), kv.v(1)}) {
    EXPECT_EQ(t->row_ptr(1, 5) - t->row_ptr(1, 4), static_cast<std::ptrdiff_t>(t->row_bytes()));
    EXPECT_EQ(t->row_ptr(1, 0) - t->row_ptr(0, kCells - 1), static_cast<std::ptrdiff_t>(t->row_bytes()));
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
      EXPECT_EQ(std::memcmp(kv.k(1)->row_ptr(h, c), row.data(), row.size()), 0) << "head " << h << " cell " << c;
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
