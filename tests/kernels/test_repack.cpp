// Q4_0 repacked into the lane and quad layouts and Q8_0 into quads
// (kernels/repack.h): each layout's repack keeps every byte where its
// description puts it, its scalar gemm equals the scalar kernels of its type on
// the rows as stored, bit for bit, and every path's gemm_repacked equals its
// layout's reference bit for bit. Q8_0 key lanes: rows put into and read out of
// a group land where the layout says, every path's gemm_key_lanes equals its
// gemm on the rows as stored (bit for bit where both take the lanes: past the
// 8 activation rows that the stored rows' gemm decodes row by row) and a
// double-precision product, and its moves equal the scalar twin's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/repack.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;
using testing_util::quantize_rows;
using testing_util::random_floats;
using testing_util::row_bytes;

struct Layout {
  const char* name;
  GgmlType type;
  RepackFn repack;
  GemmFn scalar_gemm;
  // What a path's gemm_repacked and its kernels on the stored rows must equal
  // (repacking changes no result): the x86 lane gemms share their multiply and
  // store with the path's gemm on the stored rows; the arm64 kernels of Q4_0
  // and Q8_0, stored or repacked, keep the scalar kernels' float order, so they
  // equal the scalar twin.
  bool path_gemm_is_reference;
};
const Layout kLayouts[] = {
    {"Q4_0 lanes", GgmlType::Q4_0, repack_q4_0_lanes, gemm_q4_0_lanes_scalar, true},
    {"Q4_0 quads", GgmlType::Q4_0, repack_q4_0_quads, gemm_q4_0_quads_scalar, false},
    {"Q8_0 quads", GgmlType::Q8_0, repack_q8_0_quads, gemm_q8_0_quads_scalar, false},
};

struct Matrices {
  GgmlType type;
  int64_t n, rows_x, rows_y;
  std::vector<uint8_t> stored, repacked, y;
  size_t x_stride() const { return row_bytes(type, n); }
};

// rows_x rows of n elements of the layout's type (as stored and repacked) and
// rows_y Q8_0 activation rows.
Matrices make_matrices(const Layout& layout, int64_t n, int64_t rows_x, int64_t rows_y, uint32_t seed) {
  Matrices m{layout.type, n, rows_x, rows_y, {}, {}, {}};
  m.stored = quantize_rows(layout.type, random_floats(static_cast<size_t>(n * rows_x), seed), n, rows_x);
  m.repacked.assign(m.stored.size(), 0xAA);
  layout.repack(m.stored.data(), m.repacked.data(), n, rows_x);
  m.y = quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * rows_y), seed + 1), n, rows_y);
  return m;
}

// The product of rows first_x .. first_x + n_rows_x - 1 of x (first_x a
// multiple of 16) and the first rows_y activation rows.
std::vector<float> product(GemmFn gemm, const Matrices& m, const std::vector<uint8_t>& x, int64_t rows_y,
                           int64_t first_x = 0) {
  const int64_t n_rows_x = m.rows_x - first_x;
  std::vector<float> out(static_cast<size_t>(n_rows_x * rows_y), -1.0f);
  const size_t x_stride = m.x_stride();
  gemm(m.n, x.data() + static_cast<size_t>(first_x) * x_stride, x_stride, n_rows_x, m.y.data(),
       row_bytes(GgmlType::Q8_0, m.n), rows_y, out.data(), static_cast<size_t>(n_rows_x));
  return out;
}

// Columns first_x .. of a product of every row.
std::vector<float> columns_from(const std::vector<float>& full, int64_t rows_x, int64_t rows_y, int64_t first_x) {
  std::vector<float> out;
  for (int64_t ry = 0; ry < rows_y; ++ry) {
    const auto row = full.begin() + static_cast<std::ptrdiff_t>(ry * rows_x);
    out.insert(out.end(), row + static_cast<std::ptrdiff_t>(first_x), row + static_cast<std::ptrdiff_t>(rows_x));
  }
  return out;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << what << ": element " << i << " is " << got[i]
                                                                << ", expected " << want[i];
  }
}

TEST(Repack, LanesKeepEveryByte) {
  const Matrices m = make_matrices(kLayouts[0], 32 * 7, 48, 1, 11);
  std::vector<uint8_t> a = m.stored, b = m.repacked;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

// Every byte where kernels/repack.h puts it, for rows of 1 to 130 blocks (the
// lane repacking copies 64 blocks of a group at a time); and groups repacked one
// by one give the same bytes as the whole matrix (threads split matrices there).
TEST(Repack, LanesPutEveryByteWhereTheLayoutSays) {
  for (const int64_t blocks : {1, 7, 64, 65, 130}) {
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    const Matrices m = make_matrices(kLayouts[0], 32 * blocks, 48, 1, static_cast<uint32_t>(blocks) + 200);
    const size_t group = m.x_stride() * kQ4_0LaneRows;
    for (int64_t r = 0; r < m.rows_x; ++r) {
      const uint8_t* repacked_group = m.repacked.data() + static_cast<size_t>(r / kQ4_0LaneRows) * group;
      const int lane = q4_0_lane_row(static_cast<int>(r % kQ4_0LaneRows));
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* stored_block = m.stored.data() + static_cast<size_t>(r) * m.x_stride() + static_cast<size_t>(b) * 18;
        // A stored block: the fp16 scale, then 16 bytes of codes.
        ASSERT_EQ(std::memcmp(repacked_group + q4_0_lane_scales_at(blocks, b) + 2 * lane, stored_block, 2), 0)
            << "scale of row " << r << ", block " << b;
        for (int k = 0; k < 4; ++k) {
          const uint8_t* dword = repacked_group + q4_0_lane_codes_at(b) + 64 * k + 4 * lane;
          ASSERT_EQ(std::memcmp(dword, stored_block + 2 + 4 * k, 4), 0)
              << "codes dword " << k << " of row " << r << ", block " << b;
        }
      }
    }
    std::vector<uint8_t> by_group(m.stored.size(), 0xAA);
    for (int64_t g = 0; g < m.rows_x / kQ4_0LaneRows; ++g) {
      const size_t at = static_cast<size_t>(g) * group;
      repack_q4_0_lanes(m.stored.data() + at, by_group.data() + at, m.n, kQ4_0LaneRows);
    }
    EXPECT_EQ(by_group, m.repacked);
  }
}

// Every code byte sits where kernels/repack.h says (Q4_0's flipped by 0x88),
// and every scale as it was; together they fill the groups.
template <typename Block>
void expect_bytes_where_the_quad_layout_says(const Layout& layout, uint8_t flip) {
  constexpr int64_t kBlocks = 7;
  constexpr size_t kCodeBytes = sizeof(Block::qs);
  const Matrices m = make_matrices(layout, 32 * kBlocks, 48, 1, 12);
  const size_t group_bytes = m.x_stride() * kQuadRows;
  std::vector<int> written(m.repacked.size(), 0);
  for (int64_t row = 0; row < m.rows_x; ++row) {
    const auto* blocks = reinterpret_cast<const Block*>(m.stored.data() + static_cast<size_t>(row) * m.x_stride());
    const size_t group = static_cast<size_t>(row / kQuadRows) * group_bytes;
    const int r = static_cast<int>(row % kQuadRows);
    for (int64_t b = 0; b < kBlocks; ++b) {
      for (int j = 0; j < static_cast<int>(kCodeBytes); ++j) {
        const size_t at = group + quad_code_at(kCodeBytes, b, r, j);
        ASSERT_EQ(m.repacked[at], static_cast<uint8_t>(blocks[b].qs[j] ^ flip))
            << layout.name << ": row " << row << " block " << b << " byte " << j;
        ++written[at];
      }
      for (int i = 0; i < 2; ++i) {
        const size_t at = group + quad_scale_at(kCodeBytes, b, r) + static_cast<size_t>(i);
        ASSERT_EQ(m.repacked[at], reinterpret_cast<const uint8_t*>(&blocks[b].d)[i])
            << layout.name << ": row " << row << " block " << b;
        ++written[at];
      }
    }
  }
  EXPECT_TRUE(std::all_of(written.begin(), written.end(), [](int w) { return w == 1; })) << layout.name;
}

TEST(Repack, QuadsPutEveryByteWhereTheLayoutSays) {
  expect_bytes_where_the_quad_layout_says<BlockQ4_0>(kLayouts[1], 0x88);
  expect_bytes_where_the_quad_layout_says<BlockQ8_0>(kLayouts[2], 0);
}

TEST(Repack, ARowChangesOnlyItsGroup) {
  for (const Layout& layout : kLayouts) {
    const Matrices m = make_matrices(layout, 32 * 7, 48, 1, 13);
    std::vector<uint8_t> changed = m.stored;
    changed[m.x_stride() * 20 + 5] ^= 0x11;  // row 20: group 1
    std::vector<uint8_t> repacked(changed.size());
    layout.repack(changed.data(), repacked.data(), m.n, m.rows_x);
    const auto group = static_cast<std::ptrdiff_t>(m.x_stride() * kRepackRows);
    EXPECT_TRUE(std::equal(repacked.begin(), repacked.begin() + group, m.repacked.begin())) << layout.name;
    EXPECT_FALSE(std::equal(repacked.begin() + group, repacked.begin() + 2 * group, m.repacked.begin() + group))
        << layout.name;
    EXPECT_TRUE(std::equal(repacked.begin() + 2 * group, repacked.end(), m.repacked.begin() + 2 * group)) << layout.name;
  }
}

TEST(Repack, ScalarGemmsEqualTheStoredRowsKernels) {
  for (const Layout& layout : kLayouts) {
    const TypeKernels& scalar = kernels_for_isa(layout.type, Isa::Scalar);
    for (const int64_t blocks : {1, 7, 45}) {
      const Matrices m = make_matrices(layout, 32 * blocks, 64, 5, static_cast<uint32_t>(blocks));
      std::vector<float> want(static_cast<size_t>(m.rows_x * m.rows_y));
      for (int64_t ry = 0; ry < m.rows_y; ++ry) {
        for (int64_t rx = 0; rx < m.rows_x; ++rx) {
          scalar.vec_dot(m.n, &want[static_cast<size_t>(ry * m.rows_x + rx)],
                         m.stored.data() + static_cast<size_t>(rx) * m.x_stride(),
                         m.y.data() + static_cast<size_t>(ry) * row_bytes(GgmlType::Q8_0, m.n));
        }
      }
      SCOPED_TRACE(std::string(layout.name) + ", blocks " + std::to_string(blocks));
      expect_same_bits(product(layout.scalar_gemm, m, m.repacked, m.rows_y), want, "scalar gemm");
      expect_same_bits(product(layout.scalar_gemm, m, m.repacked, m.rows_y, 32), columns_from(want, m.rows_x, m.rows_y, 32),
                       "scalar gemm, rows from 32");
    }
  }
}

// 45 blocks cross the x86 32-block chunks, 96 rows x 300 activation rows cross
// its 256-row panels, 128-row activation groups and 8-row tiles (partial ones
// too); the activation row counts cover every remainder of the arm64 tiles
// (SMMLA tiles of 8 and 4 rows, SDOT tiles of 1 to 4 rows) and every count of
// the x86 decode kernels (1 to 8 rows, one kernel each). Row ranges start
// at any multiple of 16 (threads split there).
void expect_path_equals_its_layouts_reference(Isa isa, const TypeKernels& k, const Layout& layout) {
  for (const int64_t blocks : {1, 8, 45}) {
    const Matrices m = make_matrices(layout, 32 * blocks, blocks == 8 ? 288 : 96, 300, static_cast<uint32_t>(blocks) + 100);
    const GemmFn reference = layout.path_gemm_is_reference ? k.gemm : layout.scalar_gemm;
    const std::vector<uint8_t>& reference_x = layout.path_gemm_is_reference ? m.stored : m.repacked;
    for (const int64_t rows_y : {1, 2, 3, 4, 5, 6, 7, 8, 9, 300}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + ", " + layout.name + ", blocks " + std::to_string(blocks) +
                   ", rows_y " + std::to_string(rows_y));
      const std::vector<float> want = product(reference, m, reference_x, rows_y);
      expect_same_bits(product(k.gemm_repacked, m, m.repacked, rows_y), want, "gemm_repacked");
      expect_same_bits(product(k.gemm, m, m.stored, rows_y), want, "gemm on the stored rows");
      if (rows_y == 1) {
        std::vector<float> dots(static_cast<size_t>(m.rows_x));
        for (int64_t rx = 0; rx < m.rows_x; ++rx) {
          k.vec_dot(m.n, &dots[static_cast<size_t>(rx)], m.stored.data() + static_cast<size_t>(rx) * m.x_stride(), m.y.data());
        }
        if (!layout.path_gemm_is_reference) expect_same_bits(dots, want, "vec_dot");
      }
      if (rows_y > 9 && rows_y != 300) continue;
      for (const int64_t first_x : {16, 48}) {
        expect_same_bits(product(k.gemm_repacked, m, m.repacked, rows_y, first_x),
                         columns_from(want, m.rows_x, rows_y, first_x), ("rows from " + std::to_string(first_x)).c_str());
      }
    }
  }
}

// The stored-row kernels that must equal the quad gemms take 8, 4 and single
// rows in turn: any row count gives the scalar kernels' bits.
TEST(Repack, QuadPathsStoredRowGemmsEqualTheScalarKernelsForAnyRowCount) {
  constexpr int64_t kRows = 77;  // 9 passes of 8, one of 4, one single row
  for (const Isa isa : available_isas()) {
    for (const Layout& layout : kLayouts) {
      const TypeKernels& k = kernels_for_isa(layout.type, isa);
      if (layout.path_gemm_is_reference || k.repack != layout.repack) continue;
      const GemmFn scalar = kernels_for_isa(layout.type, Isa::Scalar).gemm;
      const Matrices m = make_matrices(layout, 32 * 9, 80, 5, 300);
      for (const int64_t rows_y : {1, 3, 5}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + ", " + layout.name + ", rows_y " + std::to_string(rows_y));
        std::vector<float> got(static_cast<size_t>(kRows * rows_y)), want(got.size());
        const size_t y_stride = row_bytes(GgmlType::Q8_0, m.n);
        k.gemm(m.n, m.stored.data(), m.x_stride(), kRows, m.y.data(), y_stride, rows_y, got.data(), kRows);
        scalar(m.n, m.stored.data(), m.x_stride(), kRows, m.y.data(), y_stride, rows_y, want.data(), kRows);
        expect_same_bits(got, want, "gemm on the stored rows");
      }
    }
  }
}

TEST(Repack, EveryPathEqualsItsLayoutsReference) {
  int paths = 0;
  for (const Isa isa : available_isas()) {
    for (const GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0}) {
      const TypeKernels& k = kernels_for_isa(type, isa);
      if (k.repack == nullptr) continue;
      ASSERT_NE(k.gemm_repacked, nullptr) << isa_name(isa);
      const Layout* layout = nullptr;
      for (const Layout& l : kLayouts) {
        if (l.type == type && l.repack == k.repack) layout = &l;
      }
      ASSERT_NE(layout, nullptr) << isa_name(isa) << " repacks " << ggml_type_name(static_cast<uint32_t>(type))
                                 << " into a layout without a scalar twin";
      ++paths;
      expect_path_equals_its_layouts_reference(isa, k, *layout);
    }
  }
  if (paths == 0) GTEST_SKIP() << "no path on this CPU repacks weights";
}

// Rows put into lanes land where kernels/repack.h says, the other lanes keep
// their bytes, and each row reads back as it went in.
TEST(Repack, KeyLanesPutEveryByteWhereTheLayoutSays) {
  for (const int64_t blocks : {1, 4, 16}) {
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    const int64_t n = 32 * blocks;
    const std::vector<uint8_t> rows = quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * 16), 7), n, 16);
    const size_t row = row_bytes(GgmlType::Q8_0, n);
    std::vector<uint8_t> group(16 * row, 0xAA);
    for (const int lane : {5, 0, 15}) put_q8_0_key_lane(group.data(), lane, rows.data() + lane * row, blocks);
    for (int lane = 0; lane < 16; ++lane) {
      const bool written = lane == 0 || lane == 5 || lane == 15;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* stored = rows.data() + static_cast<size_t>(lane) * row + static_cast<size_t>(b) * 34;
        const uint8_t* record = group.data() + static_cast<size_t>(b) * 544;
        const uint8_t* scale = record + 512 + 2 * lane;
        ASSERT_EQ(scale[0], written ? stored[0] : 0xAA) << "lane " << lane << ", block " << b;
        ASSERT_EQ(scale[1], written ? stored[1] : 0xAA) << "lane " << lane << ", block " << b;
        for (int j = 0; j < 32; ++j) {
          ASSERT_EQ(record[64 * (j / 4) + 4 * lane + j % 4], written ? stored[2 + j] : 0xAA)
              << "code " << j << " of lane " << lane << ", block " << b;
        }
      }
      if (!written) continue;
      std::vector<uint8_t> back(row);
      get_q8_0_key_lane(group.data(), lane, back.data(), blocks);
      ASSERT_EQ(std::memcmp(back.data(), rows.data() + static_cast<size_t>(lane) * row, row), 0) << "lane " << lane;
    }
  }
}

// Keys in lanes against 1 to 5 and 9 query rows (a decode step's 1 to 4 take
// their own kernel), for key counts that end inside a group (the lanes past
// them hold other bytes and are not stored): equal to the path's gemm on the
// rows as stored bit for bit when both take the lane tiles (several query
// rows), and to a double-precision product within float rounding always.
TEST(Repack, EveryPathsKeyLaneGemmEqualsItsGemmOnTheStoredRows) {
  int paths = 0;
  for (const Isa isa : available_isas()) {
    const TypeKernels& k = kernels_for_isa(GgmlType::Q8_0, isa);
    if (k.gemm_key_lanes == nullptr) continue;
    ++paths;
    for (const int64_t blocks : {1, 4, 16}) {
      const int64_t n = 32 * blocks;
      const size_t row = row_bytes(GgmlType::Q8_0, n);
      constexpr int64_t kRows = 48, kQueries = 9;
      const std::vector<uint8_t> stored =
          quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * kRows), 40), n, kRows);
      std::vector<uint8_t> lanes(stored.size(), 0x7F);
      for (int64_t r = 0; r < kRows; ++r) {
        put_q8_0_key_lane(lanes.data() + static_cast<size_t>(r / 16) * 16 * row, static_cast<int>(r % 16),
                          stored.data() + static_cast<size_t>(r) * row, blocks);
      }
      const std::vector<uint8_t> y =
          quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * kQueries), 41), n, kQueries);
      for (const int64_t rows_x : {1, 15, 16, 17, 40, 48}) {
        // Lanes past rows_x in its last group hold codes and scales no row wrote.
        std::vector<uint8_t> x = lanes;
        for (int64_t r = rows_x; r < (rows_x + 15) / 16 * 16; ++r) {
          std::vector<uint8_t> other(row, static_cast<uint8_t>(0x3C + r));
          put_q8_0_key_lane(x.data() + static_cast<size_t>(r / 16) * 16 * row, static_cast<int>(r % 16), other.data(),
                            blocks);
        }
        for (const int64_t rows_y : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, kQueries}) {
          SCOPED_TRACE(std::string(isa_name(isa)) + ", blocks " + std::to_string(blocks) + ", rows_x " +
                       std::to_string(rows_x) + ", rows_y " + std::to_string(rows_y));
          const size_t out_stride = static_cast<size_t>(rows_x) + 3;
          std::vector<float> got(static_cast<size_t>(rows_y) * out_stride, -7.0f), want = got;
          k.gemm_key_lanes(n, x.data(), row, rows_x, y.data(), row, rows_y, got.data(), out_stride);
          k.gemm(n, stored.data(), row, rows_x, y.data(), row, rows_y, want.data(), out_stride);
          if (rows_y == kQueries) expect_same_bits(got, want, "gemm_key_lanes");
          for (int64_t ry = 0; ry < rows_y; ++ry) {
            for (int64_t rx = 0; rx < static_cast<int64_t>(out_stride); ++rx) {
              const float value = got[static_cast<size_t>(ry) * out_stride + static_cast<size_t>(rx)];
              if (rx >= rows_x) {
                ASSERT_EQ(value, -7.0f) << "wrote past the keys, row " << ry << " column " << rx;
                continue;
              }
              const auto* xb = reinterpret_cast<const BlockQ8_0*>(stored.data() + static_cast<size_t>(rx) * row);
              const auto* yb = reinterpret_cast<const BlockQ8_0*>(y.data() + static_cast<size_t>(ry) * row);
              double exact = 0.0, magnitude = 0.0;
              for (int64_t b = 0; b < blocks; ++b) {
                const double d = static_cast<double>(fp16_to_fp32(xb[b].d)) * fp16_to_fp32(yb[b].d);
                for (int j = 0; j < 32; ++j) {
                  exact += d * xb[b].qs[j] * yb[b].qs[j];
                  magnitude += std::fabs(d * xb[b].qs[j] * yb[b].qs[j]);
                }
              }
              ASSERT_NEAR(value, exact, 1e-6 * magnitude + 1e-30) << "row " << ry << ", key " << rx;
            }
          }
        }
      }
    }
  }
  if (paths == 0) GTEST_SKIP() << "no path on this CPU scores keys in lanes";
}

// Moves of keys in lanes by every path that has them equal the scalar twin's,
// row by row through get/put, byte for byte, over a buffer of exactly the rows'
// groups (so that a read of a group outside it shows under AddressSanitizer):
// moves down and up, overlapping or not, by whole groups and by any count of
// rows, starting and ending inside groups.
TEST(Repack, EveryPathsKeyLaneMoveEqualsTheScalarTwin) {
  int paths = 0;
  for (const Isa isa : available_isas()) {
    const TypeKernels& k = kernels_for_isa(GgmlType::Q8_0, isa);
    ASSERT_EQ(k.move_key_lanes != nullptr, k.gemm_key_lanes != nullptr) << isa_name(isa);
    if (k.move_key_lanes == nullptr) continue;
    ++paths;
    for (const int64_t blocks : {1, 4}) {
      constexpr int64_t kRows = 80;  // 5 groups
      const int64_t n = 32 * blocks;
      const std::vector<uint8_t> start =
          quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * kRows), 50), n, kRows);
      struct Move {
        int64_t from, to, n;
      };
      for (const Move m : {Move{20, 3, 50}, Move{3, 20, 50}, Move{16, 0, 64}, Move{0, 32, 48}, Move{5, 6, 70},
                           Move{6, 5, 70}, Move{79, 0, 1}, Move{0, 79, 1}, Move{17, 49, 14}, Move{40, 1, 39},
                           Move{1, 40, 39}, Move{0, 0, 80}, Move{10, 30, 0}}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + ", blocks " + std::to_string(blocks) + ": " + std::to_string(m.n) +
                     " rows from " + std::to_string(m.from) + " to " + std::to_string(m.to));
        std::vector<uint8_t> got = start, want = start;
        k.move_key_lanes(got.data(), m.from, m.to, m.n, blocks);
        move_q8_0_key_lanes_scalar(want.data(), m.from, m.to, m.n, blocks);
        ASSERT_EQ(got, want);
      }
    }
  }
  if (paths == 0) GTEST_SKIP() << "no path on this CPU keeps keys in lanes";
}

// The scalar twin moves like memmove on rows as stored.
TEST(Repack, KeyLaneMoveIsMemmoveOfTheRows) {
  constexpr int64_t kRows = 48, kBlocks = 2, kN = 32 * kBlocks;
  const size_t row = row_bytes(GgmlType::Q8_0, kN);
  std::vector<uint8_t> rows = quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(kN * kRows), 60), kN, kRows);
  std::vector<uint8_t> lanes(rows.size());
  for (int64_t r = 0; r < kRows; ++r) {
    put_q8_0_key_lane(lanes.data() + static_cast<size_t>(r / 16) * 16 * row, static_cast<int>(r % 16),
                      rows.data() + static_cast<size_t>(r) * row, kBlocks);
  }
  move_q8_0_key_lanes_scalar(lanes.data(), 7, 2, 30, kBlocks);
  std::memmove(rows.data() + 2 * row, rows.data() + 7 * row, 30 * row);
  for (int64_t r = 0; r < kRows; ++r) {
    std::vector<uint8_t> back(row);
    get_q8_0_key_lane(lanes.data() + static_cast<size_t>(r / 16) * 16 * row, static_cast<int>(r % 16), back.data(),
                      kBlocks);
    ASSERT_EQ(std::memcmp(back.data(), rows.data() + static_cast<size_t>(r) * row, row), 0) << "row " << r;
  }
}

}  // namespace
}  // namespace peak::kernels
