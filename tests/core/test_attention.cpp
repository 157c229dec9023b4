// Fused attention against a naive double-precision reference written from the
// definition: every cache type, grouped-query heads, causal or not, sliding
// windows in prefill (more tokens than the window) and in decode (a cache far
// longer than the window), soft-capped scores, 1..4 threads (decode with one
// kv head splits the keys into chunks across threads), strided cache views
// and the KV cache's head-major ones, Q8_0 keys in lanes among them;
// then a merge of chunks some of which no key of a row falls in, and cells
// outside every window that must never be read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core_test_support.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::core::testing {

using kernels::float_kernels;
using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::put_q8_0_key_lane;

namespace {

AttentionParams causal_params(float scale, int64_t window = 0, float softcap = 0.0f) {
  AttentionParams p;
  p.scale = scale;
  p.window = window;
  p.softcap = softcap;
  return p;
}

AttentionParams full_params(float scale) {
  AttentionParams p;
  p.scale = scale;
  p.causal = false;
  return p;
}

// q [d, n_head, n_tokens], k and v [d, n_head_kv, n_kv]. Query token t stands
// at cell n_kv - n_tokens + t; causal, it sees the cells up to its own, and
// with a window only the last `window` of those; with key ranges ([first,
// end) per token) exactly the cells of its range. Scores are scaled, then
// soft-capped. Cells a query does not see are never touched.
Dense reference_attention(const Dense& q, const Dense& k, const Dense& v, const AttentionParams& p,
                          const std::vector<int32_t>& key_ranges = {}) {
  const int64_t d = q.ne[0], n_head = q.ne[1], n_tokens = q.ne[2], n_kv = k.ne[2];
  const int64_t group = n_head / k.ne[1];
  Dense out(q.ne);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t own_cell = n_kv - n_tokens + t;
    std::vector<int64_t> seen;
    for (int64_t c = 0; c < n_kv; ++c) {
      if (!key_ranges.empty()) {
        if (c >= key_ranges[static_cast<size_t>(2 * t)] && c < key_ranges[static_cast<size_t>(2 * t + 1)]) {
          seen.push_back(c);
        }
      } else if (!p.causal || (c <= own_cell && (p.window == 0 || own_cell - c < p.window))) {
        seen.push_back(c);
      }
    }
    for (int64_t h = 0; h < n_head; ++h) {
      std::vector<double> weight(seen.size());
      double max = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < seen.size(); ++j) {
        double s = 0.0;
        for (int64_t i = 0; i < d; ++i) s += q.at(i, h, t) * k.at(i, h / group, seen[j]);
        s *= p.scale;
        if (p.softcap > 0.0f) s = p.softcap * std::tanh(s / p.softcap);
        weight[j] = s;
        max = std::max(max, s);
      }
      double sum = 0.0;
      for (double& w : weight) sum += (w = std::exp(w - max));
      for (int64_t i = 0; i < d; ++i) {
        double acc = 0.0;
        for (size_t j = 0; j < seen.size(); ++j) acc += weight[j] * v.at(i, h / group, seen[j]);
        out.at(i, h, t) = acc / sum;
      }
    }
  }
  return out;
}

constexpr GgmlType kCacheTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0};

// bf16 keeps an 8-bit significand: rounding moves a value by at most this
// fraction of itself.
constexpr double kBf16Rounding = 1.0 / 256;

bool bf16_attention() { return float_kernels().bf16.gemm != nullptr; }

// The normalised mean squared error allowed for attention over `type`'s cache.
// Prefill tiles on a path with bf16 kernels round three operands of every
// term (the scores through q and k, the softmax weights and the values), each
// by at most kBf16Rounding of the term; independent roundings add in
// quadrature, so the error's mean square stays within 3 of their squares of
// the output's: 4 of them leave room for the scores' spread.
double attention_bound(GgmlType type) {
  const double bf16 = 4.0 * kBf16Rounding * kBf16Rounding;
  return bf16_attention() ? std::max(partner_bound(type), bf16) : partner_bound(type);
}

struct AttentionCase {
  int64_t head_dim, n_head, n_head_kv, n_tokens, n_kv;
};

::testing::Message describe(GgmlType type, const AttentionCase& c) {
  return ::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " d " << c.head_dim << " heads "
                              << c.n_head << "/" << c.n_head_kv << " tokens " << c.n_tokens << " kv " << c.n_kv;
}

// Random queries in [-q_range, q_range), keys and values in [-1, 1) stored in
// `type`, what the kernels read back from them, and the usual scale.
struct RandomInputs {
  Leaves leaves;
  Tensor *q, *k, *v;
  Dense dq, dk, dv;
  float scale;

  RandomInputs(GgmlType type, int64_t head_dim, int64_t n_head, int64_t n_head_kv, int64_t n_tokens, int64_t n_kv,
               float q_range)
      : q(leaves.random(GgmlType::F32, {head_dim, n_head, n_tokens}, -q_range, q_range)),
        k(leaves.random(type, {head_dim, n_head_kv, n_kv})), v(leaves.random(type, {head_dim, n_head_kv, n_kv})),
        dq(read_dense(*q)), dk(read_dense(*k)), dv(read_dense(*v)),
        scale(1.0f / std::sqrt(static_cast<float>(head_dim))) {}
};

TEST(CoreAttention, EveryCacheTypeWithGroupedHeads) {
  const AttentionCase cases[] = {
      {64, 4, 4, 1, 1}, {64, 8, 2, 1, 37}, {32, 6, 3, 5, 19}, {128, 4, 1, 3, 300},
      {64, 4, 1, 1, 1000},  // one unit of work: keys are split across threads
      // Several tiles of query tokens (the last one partial) and key blocks.
      {64, 8, 1, 70, 300}, {32, 2, 2, 45, 200}, {128, 16, 8, 64, 64},
      {64, 4, 1, 10, 400},  // two tiles split into key chunks, merged
      // Decode steps (up to 8 query rows) over several of their longer key blocks.
      {128, 16, 8, 1, 1500}, {64, 8, 2, 2, 1300},
  };
  for (GgmlType type : kCacheTypes) {
    for (const AttentionCase& c : cases) {
      SCOPED_TRACE(describe(type, c));
      Leaves leaves;
      Tensor* q = leaves.random(GgmlType::F32, {c.head_dim, c.n_head, c.n_tokens});
      Tensor* k = leaves.random(type, {c.head_dim, c.n_head_kv, c.n_kv});
      Tensor* v = leaves.random(type, {c.head_dim, c.n_head_kv, c.n_kv});
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
      const Dense dq = read_dense(*q), dk = read_dense(*k), dv = read_dense(*v);
      const double bound = attention_bound(type);
      for (const AttentionParams& params : {full_params(scale), causal_params(scale)}) {
        expect_graph_matches([&](Graph& g) { return g.attention(q, k, v, params); },
                             reference_attention(dq, dk, dv, params), bound);
      }
    }
  }
}

// Heads whose size is not a multiple of 16 (SigLIP's 72, and smaller ones)
// take the fp32 tile products too (or bf16 ones for 32 x n elsewhere), their
// values and accumulators padded with zero columns: prefill tiles, a partial
// last one, keys split into blocks.
TEST(CoreAttention, HeadsOfAnyEvenSizeTakeThePackedProducts) {
  const AttentionCase cases[] = {{72, 4, 4, 70, 300}, {40, 6, 2, 33, 100}, {24, 2, 1, 20, 530}, {8, 2, 2, 16, 40}};
  for (GgmlType type : {GgmlType::F32, GgmlType::F16}) {
    for (const AttentionCase& c : cases) {
      SCOPED_TRACE(describe(type, c));
      const RandomInputs in(type, c.head_dim, c.n_head, c.n_head_kv, c.n_tokens, c.n_kv, 2.0f);
      for (const AttentionParams& params : {full_params(in.scale), causal_params(in.scale)}) {
        expect_graph_matches([&](Graph& g) { return g.attention(in.q, in.k, in.v, params); },
                             reference_attention(in.dq, in.dk, in.dv, params), attention_bound(type));
      }
    }
  }
}

// A batch of sequences side by side (an encoder's): each token sees its own
// sequence's cells only, all of them (bidirectional) or those up to itself
// (causal within the sequence). Sequences of 1 to 70 tokens, so tiles hold
// several sequences or part of one, and more tokens than one key block.
TEST(CoreAttention, KeyRangesKeepSequencesApart) {
  const int64_t lengths[] = {5, 1, 70, 13, 300, 2, 31};
  for (bool causal_within : {false, true}) {
    std::vector<int32_t> ranges;
    int64_t first = 0;
    for (int64_t n : lengths) {
      for (int64_t i = 0; i < n; ++i) {
        ranges.push_back(static_cast<int32_t>(first));
        ranges.push_back(static_cast<int32_t>(causal_within ? first + i + 1 : first + n));
      }
      first += n;
    }
    const int64_t n_tokens = first;
    for (GgmlType type : kCacheTypes) {
      SCOPED_TRACE(::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " causal " << causal_within);
      RandomInputs in(type, 32, 4, 2, n_tokens, n_tokens, 1.0f);
      Tensor* key_ranges = in.leaves.ids(ranges);
      const AttentionParams params = full_params(in.scale);
      expect_graph_matches(
          [&](Graph& g) {
            return g.attention(in.q, in.k, in.v, params, g.reshape(key_ranges, {2, n_tokens}));
          },
          reference_attention(in.dq, in.dk, in.dv, params, ranges), attention_bound(type));
    }
  }
}

// A sequence side by side with others gets the attention it gets alone: the
// batch-mates decide how many rows a tile holds (here 73 tokens, a prefill
// tile, against 3, a decode-sized one), and the result must not depend on
// them (an embedding or a rerank score does not change with the texts sent
// beside it). Only the order of float sums may differ: up to about 2e-5 here
// (Q8_0 keys), where bf16 products would differ by about 1e-3.
TEST(CoreAttention, ASequenceSideBySideGetsWhatItGetsAlone) {
  const int64_t head_dim = 64, n_head = 4, n_head_kv = 4, before = 70, alone = 3;
  const int64_t n_tokens = before + alone;
  std::vector<int32_t> ranges, alone_ranges;
  for (int64_t t = 0; t < n_tokens; ++t) {
    ranges.push_back(static_cast<int32_t>(t < before ? 0 : before));
    ranges.push_back(static_cast<int32_t>(t < before ? before : n_tokens));
  }
  for (int64_t t = 0; t < alone; ++t) alone_ranges.insert(alone_ranges.end(), {0, static_cast<int32_t>(alone)});
  for (GgmlType type : kCacheTypes) {
    SCOPED_TRACE(ggml_type_name(static_cast<uint32_t>(type)));
    RandomInputs in(type, head_dim, n_head, n_head_kv, n_tokens, n_tokens, 2.0f);
    Tensor* batch_ranges = in.leaves.ids(ranges);
    Tensor* own_ranges = in.leaves.ids(alone_ranges);
    const AttentionParams params = full_params(in.scale);
    const Dense side_by_side = compute_once(
        [&](Graph& g) {
          return g.attention(in.q, in.k, in.v, params, g.reshape(batch_ranges, {2, n_tokens}));
        },
        2);
    const Dense by_itself = compute_once(
        [&](Graph& g) {
          const auto last = [&](Tensor* t) {
            return g.view(t, {t->ne[0], t->ne[1], alone}, {t->nb[1], t->nb[2]}, static_cast<size_t>(before) * t->nb[2]);
          };
          return g.attention(last(in.q), last(in.k), last(in.v), params, g.reshape(own_ranges, {2, alone}));
        },
        2);
    double worst = 0;
    for (int64_t t = 0; t < alone; ++t) {
      for (int64_t h = 0; h < n_head; ++h) {
        for (int64_t i = 0; i < head_dim; ++i) {
          worst = std::max(worst, std::abs(side_by_side.at(i, h, before + t) - by_itself.at(i, h, t)));
        }
      }
    }
    EXPECT_LT(worst, 1e-4);
  }
}

// A pass of a few tokens (a token and the tokens drafted after it) attends as
// one-token steps do: each token gets what its own step gives it, up to the
// order of float sums, on a path with bf16 products too (which would move it
// by about 1e-3 and flip a near tie of the logits).
// A pass of a few tokens (a token and its draft) gives each token the bits its
// own one-token step gives: one ulp of difference in an attention output can
// move a Q8 code of the next projection's input and flip a near tie of the
// logits. Caches around a block's and a key chunk's end, one kv head (its keys
// split into chunks across the threads) and eight, a sliding window, 2 to 8
// tokens, every cache type.
TEST(CoreAttention, AFewTokensAttendAsOneTokenStepsDo) {
  struct Case {
    int64_t n_head_kv, n_tokens, n_kv, window;
  };
  const int64_t head_dim = 128, n_head = 16;
  for (const Case c : {Case{8, 5, 300, 0}, Case{8, 2, 4, 0}, Case{8, 5, 33, 0}, Case{8, 8, 130, 0}, Case{1, 5, 300, 0},
                       Case{1, 8, 700, 0}, Case{2, 3, 129, 0}, Case{8, 5, 300, 64}, Case{1, 4, 520, 256}}) {
    for (GgmlType type : kCacheTypes) {
      SCOPED_TRACE(::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " kv heads " << c.n_head_kv
                                        << " tokens " << c.n_tokens << " cells " << c.n_kv << " window " << c.window);
      RandomInputs in(type, head_dim, n_head, c.n_head_kv, c.n_tokens, c.n_kv, 2.0f);
      const AttentionParams params = causal_params(in.scale, c.window);
      const Dense together = compute_once([&](Graph& g) { return g.attention(in.q, in.k, in.v, params); }, 2);
      int64_t differing = 0;
      for (int64_t t = 0; t < c.n_tokens; ++t) {
        const int64_t cells = c.n_kv - c.n_tokens + t + 1;
        const Dense alone = compute_once(
            [&](Graph& g) {
              Tensor* q =
                  g.view(in.q, {head_dim, n_head, 1}, {in.q->nb[1], in.q->nb[2]}, static_cast<size_t>(t) * in.q->nb[2]);
              const auto first = [&](Tensor* cache) {
                return g.view(cache, {head_dim, c.n_head_kv, cells}, {cache->nb[1], cache->nb[2]}, 0);
              };
              return g.attention(q, first(in.k), first(in.v), params);
            },
            2);
        for (int64_t h = 0; h < n_head; ++h) {
          for (int64_t i = 0; i < head_dim; ++i) differing += together.at(i, h, t) != alone.at(i, h, 0) ? 1 : 0;
        }
      }
      EXPECT_EQ(differing, 0) << "values not equal bit for bit to the token's own step";
    }
  }
}

// The worst case, element by element, of a prefill on the active path against
// the double-precision reference. A score moves by at most
//   delta = scale * sum_i |q_i k_i| * (2u + u^2)
// with bf16 queries and keys (u = 2^-8), or by the Q8_0 queries' rounding,
// scale * sum_i |k_i| * (block max |q| / 254), for Q8_0 / Q4_0 keys. Scores
// that move by at most delta change the softmax weights by at most
// e^(2 delta) - 1 in sum; rounding the weights and the values adds 2u + u^2 of
// max |v|. On a path without bf16 kernels u is 0 (only fp32 sums remain: 1e-5).
// Measured max |error| of this case (AVX512_BF16 on Zen 4): F32 and F16
// caches 5.4e-4 and 5.1e-4 (fp32 path, PEAK_ISA=avx512: 1.2e-7, 1.4e-7);
// Q8_0 6.3e-4 and Q4_0 6.7e-4 (fp32: 5.6e-4, 5.4e-4, the Q8_0 queries').
TEST(CoreAttention, PrefillStaysWithinItsRoundingBound) {
  const double u = bf16_attention() ? kBf16Rounding : 0.0;
  const AttentionCase c{128, 16, 8, 64, 300};
  for (GgmlType type : kCacheTypes) {
    SCOPED_TRACE(describe(type, c));
    const RandomInputs in(type, c.head_dim, c.n_head, c.n_head_kv, c.n_tokens, c.n_kv, 2.0f);
    const Dense &dq = in.dq, &dk = in.dk, &dv = in.dv;
    const float scale = in.scale;
    const AttentionParams params = causal_params(scale);
    const Dense expected = reference_attention(dq, dk, dv, params);
    const Dense actual = compute_once([&](Graph& g) { return g.attention(in.q, in.k, in.v, params); }, 2);
    const bool integer_scores = kernels_for(type).dot_partner == GgmlType::Q8_0;
    double v_max = 0.0;
    for (double x : dv.values) v_max = std::max(v_max, std::fabs(x));
    for (int64_t t = 0; t < c.n_tokens; ++t) {
      for (int64_t h = 0; h < c.n_head; ++h) {
        double delta = 0.0;
        for (int64_t j = 0; j < c.n_kv; ++j) {
          double moved = 0.0;
          for (int64_t block = 0; block < c.head_dim; block += 32) {
            double q_max = 0.0;
            for (int64_t i = block; i < block + 32; ++i) q_max = std::max(q_max, std::fabs(dq.at(i, h, t)));
            for (int64_t i = block; i < block + 32; ++i) {
              const double k_abs = std::fabs(dk.at(i, h / (c.n_head / c.n_head_kv), j));
              moved += integer_scores ? k_abs * q_max / 254.0 : k_abs * std::fabs(dq.at(i, h, t)) * (2 * u + u * u);
            }
          }
          delta = std::max(delta, scale * moved);
        }
        const double bound = v_max * (std::expm1(2.0 * delta) * (1.0 + u) + 2.0 * u + u * u) + 1e-5;
        for (int64_t i = 0; i < c.head_dim; ++i) {
          ASSERT_LE(std::fabs(actual.at(i, h, t) - expected.at(i, h, t)), bound)
              << "token " << t << " head " << h << " element " << i;
        }
      }
    }
  }
}

struct WindowCase {
  int64_t head_dim, n_head, n_head_kv, n_tokens, n_kv, window;
};

TEST(CoreAttention, SlidingWindowAndSoftcapOverEveryCacheType) {
  const WindowCase cases[] = {
      // Prefills longer than the window, into an empty cache and after 30 cells.
      {64, 4, 2, 40, 40, 8}, {32, 8, 2, 70, 100, 16},
      {32, 2, 1, 20, 20, 1},  // a window of one cell: each query sees itself
      {64, 4, 1, 45, 400, 200},  // a window across key blocks, several tiles
      // Decode over a cache far longer than the window; with one kv head the
      // threads split the window into chunks.
      {128, 4, 1, 1, 2000, 512}, {64, 8, 2, 1, 1000, 100},
      {32, 2, 2, 5, 19, 19},  // a window as long as the cache hides nothing
  };
  for (GgmlType type : kCacheTypes) {
    for (const WindowCase& c : cases) {
      // Queries in [-4, 4]: scores of about +-1.3, which a cap of 1 bends.
      const RandomInputs in(type, c.head_dim, c.n_head, c.n_head_kv, c.n_tokens, c.n_kv, 4.0f);
      Tensor *q = in.q, *k = in.k, *v = in.v;
      const Dense &dq = in.dq, &dk = in.dk, &dv = in.dv;
      const float scale = in.scale;
      const Dense uncapped = reference_attention(dq, dk, dv, causal_params(scale, c.window));
      for (float softcap : {0.0f, 1.0f}) {
        SCOPED_TRACE(::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " d " << c.head_dim
                                        << " heads " << c.n_head << "/" << c.n_head_kv << " tokens " << c.n_tokens
                                        << " kv " << c.n_kv << " window " << c.window << " softcap " << softcap);
        const AttentionParams params = causal_params(scale, c.window, softcap);
        const Dense expected = reference_attention(dq, dk, dv, params);
        // The cap must matter wherever a query sees more than one cell.
        if (softcap > 0.0f && c.window != 1) {
          EXPECT_GT(nmse(uncapped, expected), 1e-3);
        }
        expect_graph_matches([&](Graph& g) { return g.attention(q, k, v, params); }, expected,
                             attention_bound(type));
      }
    }
  }
}

// 128 tokens into an empty cache with one head make 4 tiles of 32 query rows,
// so 8 threads split each tile's keys into 2 chunks. Tile 0 sees keys
// [0, 32): chunks [0, 16) and [16, 32), and tokens 0..14 see no key of the
// second, whose partial for them keeps max -inf and sum 0; the merge must
// leave it out (an exp(-inf - -inf) would make the row NaN).
TEST(CoreAttention, MergesChunksOfWhichARowSeesNoKey) {
  ThreadPool pool(8);
  for (GgmlType type : {GgmlType::F32, GgmlType::Q8_0}) {
    for (int64_t window : {0, 100}) {
      SCOPED_TRACE(::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " window " << window);
      Leaves leaves;
      Tensor* q = leaves.random(GgmlType::F32, {64, 1, 128});
      Tensor* k = leaves.random(type, {64, 1, 128});
      Tensor* v = leaves.random(type, {64, 1, 128});
      const AttentionParams params = causal_params(0.125f, window);
      const Dense expected = reference_attention(read_dense(*q), read_dense(*k), read_dense(*v), params);
      const Dense actual = compute_once([&](Graph& g) { return g.attention(q, k, v, params); }, 8, pool);
      const double error = nmse(expected, actual);
      EXPECT_FALSE(std::isnan(error));
      EXPECT_LE(error, attention_bound(type));
    }
  }
}

// Cells that no query's window reaches hold NaN. Had any block of them been
// read, scored and masked, its weight-0 values would still turn the weighted
// sum NaN (0 x NaN); so the result is right only if the op never reads them.
TEST(CoreAttention, AWindowReadsNoCellOutsideIt) {
  struct Case {
    int64_t n_tokens, n_kv, window;
  };
  // Decode, 4 heads on 1 kv head (key chunks with 2..4 threads), and a
  // prefill of 40 tokens after 500 cells: its first query sees cells from 485.
  for (const Case& c : {Case{1, 1000, 64}, Case{40, 540, 16}}) {
    for (GgmlType type : {GgmlType::F32, GgmlType::F16}) {
      SCOPED_TRACE(::testing::Message() << ggml_type_name(static_cast<uint32_t>(type)) << " tokens " << c.n_tokens
                                      << " kv " << c.n_kv << " window " << c.window);
      Leaves leaves;
      Tensor* q = leaves.random(GgmlType::F32, {64, 4, c.n_tokens});
      Tensor* k = leaves.random(type, {64, 1, c.n_kv});
      Tensor* v = leaves.random(type, {64, 1, c.n_kv});
      const int64_t first_seen = c.n_kv - c.n_tokens + 1 - c.window;
      const std::vector<float> nan_row(64, std::numeric_limits<float>::quiet_NaN());
      for (int64_t cell = 0; cell < first_seen; ++cell) {
        kernels_for(type).from_float(nan_row.data(), k->row_ptr(0, cell), 64);
        kernels_for(type).from_float(nan_row.data(), v->row_ptr(0, cell), 64);
      }
      const Dense dk = read_dense(*k), dv = read_dense(*v);
      ASSERT_TRUE(std::isnan(dk.at(0, 0, first_seen - 1)) && std::isnan(dv.at(63, 0, 0)));
      const AttentionParams params = causal_params(0.125f, c.window);
      expect_graph_matches([&](Graph& g) { return g.attention(q, k, v, params); },
                           reference_attention(read_dense(*q), dk, dv, params), attention_bound(type));
    }
  }
}

TEST(CoreAttention, ReadsStridedCacheViews) {
  Leaves leaves;
  // Cache of 50 positions, attention over the first 20 with all heads visible.
  Tensor* q = leaves.random(GgmlType::F32, {64, 4, 2}, -3.0f, 3.0f);
  Tensor* k_cache = leaves.random(GgmlType::Q8_0, {64, 2, 50});
  Tensor* v_cache = leaves.random(GgmlType::Q8_0, {64, 2, 50});
  const Dense dk = read_dense(*k_cache), dv = read_dense(*v_cache);
  Dense k20({64, 2, 20, 1}), v20({64, 2, 20, 1});
  for (int64_t j = 0; j < 20; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 64; ++i) {
        k20.at(i, h, j) = dk.at(i, h, j);
        v20.at(i, h, j) = dv.at(i, h, j);
      }
  const Dense expected = reference_attention(read_dense(*q), k20, v20, full_params(0.125f));
  expect_graph_matches([&](Graph& g) {
    Tensor* k = g.view(k_cache, {64, 2, 20}, {k_cache->nb[1], k_cache->nb[2]}, 0);
    Tensor* v = g.view(v_cache, {64, 2, 20}, {v_cache->nb[1], v_cache->nb[2]}, 0);
    return g.attention(q, k, v, full_params(0.125f));
  }, expected, kQ8Partner);
}

// Cells [0, n_kv) of a cache leaf [d, n_ctx, n_head_kv] as [d, n_head_kv, n_kv].
Dense first_cells(const Dense& cache, int64_t n_kv) {
  Dense cells({cache.ne[0], cache.ne[2], n_kv, 1});
  for (int64_t j = 0; j < n_kv; ++j)
    for (int64_t h = 0; h < cache.ne[2]; ++h)
      for (int64_t i = 0; i < cache.ne[0]; ++i) cells.at(i, h, j) = cache.at(i, j, h);
  return cells;
}

// The KV cache's head-major memory: leaves of [d, n_ctx, n_head_kv] (one
// head's cells contiguous) seen as [d, n_head_kv, n_kv] views, as the decoder
// builds them, for every cache type. Decode and prefill steps over key counts
// that leave a partial block of keys; one kv head makes decode split its keys
// into chunks, whose boundary then falls inside a block.
TEST(CoreAttention, ReadsHeadMajorCacheViews) {
  const AttentionCase cases[] = {
      {64, 8, 2, 1, 300}, {128, 2, 1, 1, 1000}, {64, 4, 1, 40, 259}, {32, 6, 3, 7, 130},
  };
  const int64_t n_ctx = 1100;
  for (GgmlType type : kCacheTypes) {
    for (const AttentionCase& c : cases) {
      SCOPED_TRACE(describe(type, c));
      Leaves leaves;
      Tensor* q = leaves.random(GgmlType::F32, {c.head_dim, c.n_head, c.n_tokens});
      Tensor* k_cache = leaves.random(type, {c.head_dim, n_ctx, c.n_head_kv});
      Tensor* v_cache = leaves.random(type, {c.head_dim, n_ctx, c.n_head_kv});
      const Dense dk = first_cells(read_dense(*k_cache), c.n_kv), dv = first_cells(read_dense(*v_cache), c.n_kv);
      const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
      const AttentionParams params = causal_params(scale);
      expect_graph_matches([&](Graph& g) {
        Tensor* k = g.view(k_cache, {c.head_dim, c.n_head_kv, c.n_kv}, {k_cache->nb[2], k_cache->nb[1]}, 0);
        Tensor* v = g.view(v_cache, {c.head_dim, c.n_head_kv, c.n_kv}, {v_cache->nb[2], v_cache->nb[1]}, 0);
        return g.attention(q, k, v, params);
      }, reference_attention(read_dense(*q), dk, dv, params), attention_bound(type));
    }
  }
}

// Q8_0 keys in lanes (Tensor::key_lanes), as the KV cache keeps them on paths
// that score them there: the cache's own memory order ([d, n_head_kv, n_ctx]
// with a head's cells contiguous), views of its first n_kv cells. Key counts
// and windows start and end blocks and key chunks inside groups of 16 cells;
// one token with one query head per kv head takes the GEMV.
TEST(CoreAttention, ReadsKeysInLanes) {
  if (kernels_for(GgmlType::Q8_0).gemm_key_lanes == nullptr) GTEST_SKIP() << "this path keeps Q8_0 keys as rows";
  const WindowCase cases[] = {
      {64, 8, 2, 1, 300, 0},    {128, 2, 1, 1, 1000, 0}, {64, 2, 2, 1, 77, 0},  {64, 4, 1, 40, 259, 0},
      {32, 6, 3, 7, 130, 0},    {64, 4, 1, 1, 1000, 203}, {64, 4, 2, 45, 400, 37}, {128, 16, 8, 70, 333, 0},
  };
  const int64_t n_ctx = 1008;  // 63 groups of 16 cells
  for (const WindowCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "d " << c.head_dim << " heads " << c.n_head << "/" << c.n_head_kv
                                      << " tokens " << c.n_tokens << " kv " << c.n_kv << " window " << c.window);
    Leaves leaves;
    Tensor* q = leaves.random(GgmlType::F32, {c.head_dim, c.n_head, c.n_tokens});
    // [d, n_ctx, n_head_kv] rows, then the same memory seen as [d, n_head_kv, n_ctx].
    Tensor* k_cache = leaves.random(GgmlType::Q8_0, {c.head_dim, n_ctx, c.n_head_kv});
    Tensor* v_cache = leaves.random(GgmlType::Q8_0, {c.head_dim, n_ctx, c.n_head_kv});
    const Dense dk = first_cells(read_dense(*k_cache), c.n_kv), dv = first_cells(read_dense(*v_cache), c.n_kv);
    for (Tensor* t : {k_cache, v_cache}) {
      std::swap(t->ne[1], t->ne[2]);
      std::swap(t->nb[1], t->nb[2]);
    }
    const size_t row = k_cache->nb[2];
    const std::vector<char> rows(static_cast<const char*>(k_cache->data),
                                 static_cast<const char*>(k_cache->data) + row * static_cast<size_t>(n_ctx * c.n_head_kv));
    for (int64_t h = 0; h < c.n_head_kv; ++h) {
      for (int64_t cell = 0; cell < n_ctx; ++cell) {
        put_q8_0_key_lane(k_cache->row_ptr(h, cell - cell % 16), static_cast<int>(cell % 16),
                          rows.data() + static_cast<size_t>(h * n_ctx + cell) * row, c.head_dim / 32);
      }
    }
    k_cache->key_lanes = true;
    const AttentionParams params = causal_params(1.0f / std::sqrt(static_cast<float>(c.head_dim)), c.window);
    expect_graph_matches([&](Graph& g) {
      Tensor* k = g.view(k_cache, {c.head_dim, c.n_head_kv, c.n_kv}, {k_cache->nb[1], k_cache->nb[2]}, 0);
      Tensor* v = g.view(v_cache, {c.head_dim, c.n_head_kv, c.n_kv}, {v_cache->nb[1], v_cache->nb[2]}, 0);
      return g.attention(q, k, v, params);
    }, reference_attention(read_dense(*q), dk, dv, params), attention_bound(GgmlType::Q8_0));
  }
}

}  // namespace
}  // namespace peak::core::testing
