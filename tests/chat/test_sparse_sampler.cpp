// The sparse sampler's exact choices, worked out by hand from its definition.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "chat/sparse_sampler.h"

namespace peak::chat {
namespace {

using V = std::vector<int64_t>;

TEST(SparseSampler, KeepsEverythingWhenTheInputFitsTheBudget) {
  EXPECT_EQ(sparse_sample(5, 8), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(sparse_sample(8, 8), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sparse_sample(0, 4), V{});
}

TEST(SparseSampler, KeepsBothQuartersAndSamplesTheMiddleUniformly) {
  // n 20, budget 8: head 2 {0,1}, tail 2 {18,19}; middle 4 from span [2,18) of 16:
  // 2 + (2j+1)*16/8 = 2 + 2, 6, 10, 14 -> 4, 8, 12, 16.
  EXPECT_EQ(sparse_sample(20, 8), (V{0, 1, 4, 8, 12, 16, 18, 19}));
  // n 100, budget 12: head 3, tail 3; middle 6 from span [3, 97) of 94:
  // 3 + floor((2j+1)*94/12) = 3 + 7, 23, 39, 54, 70, 86.
  EXPECT_EQ(sparse_sample(100, 12), (V{0, 1, 2, 10, 26, 42, 57, 73, 89, 97, 98, 99}));
}

TEST(SparseSampler, HandlesBudgetsNotDivisibleByFour) {
  // budget 10: head 2, tail 2, middle 6; n 30: span [2, 28) of 26:
  // 2 + floor((2j+1)*26/12) = 2 + 2, 6, 10, 15, 19, 23.
  EXPECT_EQ(sparse_sample(30, 10), (V{0, 1, 4, 8, 12, 17, 21, 25, 28, 29}));
  // budget 3: no head or tail, middle 3 from [0, 9): floor((2j+1)*9/6) = 1, 4, 7.
  EXPECT_EQ(sparse_sample(9, 3), (V{1, 4, 7}));
  // budget 1: the centre.
  EXPECT_EQ(sparse_sample(9, 1), (V{4}));
  EXPECT_EQ(sparse_sample(9, 0), V{});
}

TEST(SparseSampler, OneMoreThanTheBudgetDropsOneMiddleToken) {
  // n 9, budget 8: head 2, tail 2 {7, 8}, middle 4 from [2, 7) of 5:
  // 2 + floor((2j+1)*5/8) = 2 + 0, 1, 3, 4 -> 2, 3, 5, 6: only 4 is dropped.
  EXPECT_EQ(sparse_sample(9, 8), (V{0, 1, 2, 3, 5, 6, 7, 8}));
}

TEST(SparseSampler, IndicesAreAscendingUniqueAndWithinBounds) {
  for (int64_t n = 0; n < 200; n += 7) {
    for (int64_t budget = 0; budget < 60; budget += 3) {
      const V keep = sparse_sample(n, budget);
      EXPECT_EQ(static_cast<int64_t>(keep.size()), std::min(n, budget));
      for (size_t i = 0; i < keep.size(); ++i) {
        EXPECT_GE(keep[i], 0);
        EXPECT_LT(keep[i], n);
        if (i > 0) {
          EXPECT_LT(keep[i - 1], keep[i]);
        }
      }
    }
  }
  EXPECT_THROW(sparse_sample(-1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace peak::chat
