// Q4_0 repacked into lanes (kernels/repack.h): the scalar gemm over the layout
// equals the scalar Q4_0 kernels on the rows as stored, bit for bit, and every
// path's gemm_repacked equals that path's own gemm on the stored rows (both
// sum in the same order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/repack.h"

namespace peak {
namespace {

using testing_util::available_isas;
using testing_util::quantize_rows;
using testing_util::random_floats;
using testing_util::row_bytes;

struct Matrices {
  int64_t n, rows_x, rows_y;
  std::vector<uint8_t> stored, repacked, y;
};

// rows_x rows of n elements of Q4_0 (as stored and repacked) and rows_y Q8_0
// activation rows.
Matrices make_matrices(int64_t n, int64_t rows_x, int64_t rows_y, uint32_t seed) {
  Matrices m{n, rows_x, rows_y, {}, {}, {}};
  m.stored = quantize_rows(GgmlType::Q4_0, random_floats(static_cast<size_t>(n * rows_x), seed), n, rows_x);
  m.repacked.assign(m.stored.size(), 0xAA);
  repack_q4_0_lanes(m.stored.data(), m.repacked.data(), n, rows_x);
  m.y = quantize_rows(GgmlType::Q8_0, random_floats(static_cast<size_t>(n * rows_y), seed + 1), n, rows_y);
  return m;
}

std::vector<float> product(GemmFn gemm, const Matrices& m, const std::vector<uint8_t>& x, int64_t rows_y) {
  std::vector<float> out(static_cast<size_t>(m.rows_x * rows_y), -1.0f);
  gemm(m.n, x.data(), row_bytes(GgmlType::Q4_0, m.n), m.rows_x, m.y.data(), row_bytes(GgmlType::Q8_0, m.n), rows_y,
       out.data(), static_cast<size_t>(m.rows_x));
  return out;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << what << ": element " << i << " is " << got[i]
                                                                << ", expected " << want[i];
  }
}

TEST(RepackQ4_0, KeepsEveryByteOfEveryGroup) {
  const Matrices m = make_matrices(32 * 7, 48, 1, 11);
  std::vector<uint8_t> a = m.stored, b = m.repacked;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  // A row change moves only its own group's bytes.
  std::vector<uint8_t> changed = m.stored;
  changed[row_bytes(GgmlType::Q4_0, m.n) * 20 + 5] ^= 0x11;  // row 20: group 1
  std::vector<uint8_t> repacked(changed.size());
  repack_q4_0_lanes(changed.data(), repacked.data(), m.n, m.rows_x);
  const size_t group = row_bytes(GgmlType::Q4_0, m.n) * kQ4_0LaneRows;
  EXPECT_TRUE(std::equal(repacked.begin(), repacked.begin() + static_cast<std::ptrdiff_t>(group), m.repacked.begin()));
  EXPECT_FALSE(std::equal(repacked.begin() + static_cast<std::ptrdiff_t>(group),
                          repacked.begin() + static_cast<std::ptrdiff_t>(2 * group),
                          m.repacked.begin() + static_cast<std::ptrdiff_t>(group)));
}

// Every byte where kernels/repack.h puts it, for rows of 1 to 130 blocks (the
// repacking copies 64 blocks of a group at a time); and groups repacked one by
// one give the same bytes as the whole matrix (threads split matrices there).
TEST(RepackQ4_0, PutsEveryByteWhereTheLayoutSays) {
  for (const int64_t blocks : {1, 7, 64, 65, 130}) {
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    const Matrices m = make_matrices(32 * blocks, 48, 1, static_cast<uint32_t>(blocks) + 200);
    const size_t row = row_bytes(GgmlType::Q4_0, m.n);
    const size_t group = row * kQ4_0LaneRows;
    for (int64_t r = 0; r < m.rows_x; ++r) {
      const uint8_t* repacked_group = m.repacked.data() + static_cast<size_t>(r / kQ4_0LaneRows) * group;
      const int lane = q4_0_lane_row(static_cast<int>(r % kQ4_0LaneRows));
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* stored_block = m.stored.data() + static_cast<size_t>(r) * row + static_cast<size_t>(b) * 18;
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

TEST(RepackQ4_0, ScalarGemmEqualsTheStoredRowsKernels) {
  const TypeKernels& scalar = kernels_for_isa(GgmlType::Q4_0, Isa::Scalar);
  for (const int64_t blocks : {1, 7, 45}) {
    const Matrices m = make_matrices(32 * blocks, 64, 5, static_cast<uint32_t>(blocks));
    std::vector<float> want(static_cast<size_t>(m.rows_x * m.rows_y));
    for (int64_t ry = 0; ry < m.rows_y; ++ry) {
      for (int64_t rx = 0; rx < m.rows_x; ++rx) {
        scalar.vec_dot(m.n, &want[static_cast<size_t>(ry * m.rows_x + rx)],
                       m.stored.data() + static_cast<size_t>(rx) * row_bytes(GgmlType::Q4_0, m.n),
                       m.y.data() + static_cast<size_t>(ry) * row_bytes(GgmlType::Q8_0, m.n));
      }
    }
    expect_same_bits(product(gemm_q4_0_lanes_scalar, m, m.repacked, m.rows_y), want, "scalar lanes gemm");
  }
}

// 45 blocks cross the 32-block chunks, 96 rows x 300 activation rows cross the
// 256-row panels, 128-row activation groups and 8-row tiles (partial ones too).
TEST(RepackQ4_0, EveryPathMatchesItsGemmOnTheStoredRows) {
  int paths = 0;
  for (const Isa isa : available_isas()) {
    const TypeKernels& k = kernels_for_isa(GgmlType::Q4_0, isa);
    if (k.repack == nullptr) continue;
    ASSERT_NE(k.gemm_repacked, nullptr) << isa_name(isa);
    ++paths;
    for (const int64_t blocks : {1, 8, 45}) {
      const Matrices m = make_matrices(32 * blocks, blocks == 8 ? 288 : 96, 300, static_cast<uint32_t>(blocks) + 100);
      std::vector<uint8_t> repacked(m.stored.size());
      k.repack(m.stored.data(), repacked.data(), m.n, m.rows_x);
      EXPECT_EQ(repacked, m.repacked) << isa_name(isa);
      for (const int64_t rows_y : {int64_t{1}, int64_t{3}, int64_t{300}}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + ", blocks " + std::to_string(blocks) + ", rows_y " +
                     std::to_string(rows_y));
        expect_same_bits(product(k.gemm_repacked, m, repacked, rows_y), product(k.gemm, m, m.stored, rows_y),
                         "gemm_repacked");
        // Lane rows ranges start at any multiple of 16 (threads split there).
        std::vector<float> tail(static_cast<size_t>(m.rows_x - 32), -1.0f);
        const size_t offset = 32 * row_bytes(GgmlType::Q4_0, m.n);
        k.gemm_repacked(m.n, repacked.data() + offset, row_bytes(GgmlType::Q4_0, m.n), m.rows_x - 32, m.y.data(), 0, 1,
                        tail.data(), 1);
        const std::vector<float> full = product(k.gemm, m, m.stored, 1);
        expect_same_bits(tail, std::vector<float>(full.begin() + 32, full.end()), "rows from 32");
      }
    }
  }
  if (paths == 0) GTEST_SKIP() << "no path on this CPU repacks Q4_0";
}

}  // namespace
}  // namespace peak
