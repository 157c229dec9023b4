// Every op against a plain double-precision reference (test-backend-ops style):
// odd shapes, strided views, 1..4 threads, per-op NMSE bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core_test_support.h"
#include "kernels/kernels.h"

namespace peak::core::testing {

using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;

namespace {

// Bounds: exact-float ops should agree to float rounding; ops that convert
// activations (mul_mat) carry the partner's rounding error (core_test_support.h).
constexpr double kFloatOps = 1e-10;
constexpr double kTranscendental = 1e-9;

Dense same_shape(const Dense& a) { return Dense(a.ne); }

template <typename Fn>
Dense map(const Dense& a, Fn fn) {
  Dense out = same_shape(a);
  for (size_t i = 0; i < a.values.size(); ++i) out.values[i] = fn(a.values[i]);
  return out;
}

// out[i] = fn(a[i], b[i repeated])
template <typename Fn>
Dense zip_repeated(const Dense& a, const Dense& b, Fn fn) {
  Dense out = same_shape(a);
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < a.ne[0]; ++i0)
          out.at(i0, i1, i2, i3) = fn(a.at(i0, i1, i2, i3),
                                      b.at(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
  return out;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }
// Gemma's gelu_pytorch_tanh, straight from its definition (double does not
// cancel in 1 + tanh over the inputs used here, |x| <= 6).
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }

// ---- element-wise --------------------------------------------------------------

TEST(CoreOps, AddBroadcastsOverOddShapes) {
  Leaves leaves;
  for (auto shape : {std::initializer_list<int64_t>{1}, {37, 3}, {129, 5, 3, 2}, {4099, 2}}) {
    Tensor* a = leaves.random(GgmlType::F32, shape);
    Tensor* row = leaves.random(GgmlType::F32, {a->ne[0]});
    Tensor* b = leaves.random(GgmlType::F32, shape);
    const Dense da = read_dense(*a);
    expect_graph_matches([&](Graph& g) { return g.add(a, b); },
                         zip_repeated(da, read_dense(*b), [](double x, double y) { return x + y; }), kFloatOps);
    expect_graph_matches([&](Graph& g) { return g.add(a, row); },
                         zip_repeated(da, read_dense(*row), [](double x, double y) { return x + y; }), kFloatOps);
  }
}

TEST(CoreOps, BroadcastOfAScalarAndAColumn) {
  Leaves leaves;
  Tensor* a = leaves.random(GgmlType::F32, {6, 4, 3});
  Tensor* scalar = leaves.random(GgmlType::F32, {1});
  Tensor* column = leaves.random(GgmlType::F32, {1, 4});
  const Dense da = read_dense(*a);
  expect_graph_matches([&](Graph& g) { return g.add(a, scalar); },
                       zip_repeated(da, read_dense(*scalar), [](double x, double y) { return x + y; }), kFloatOps);
  expect_graph_matches([&](Graph& g) { return g.add(a, column); },
                       zip_repeated(da, read_dense(*column), [](double x, double y) { return x + y; }), kFloatOps);
}

TEST(CoreOps, ElementWiseOnTransposedAndPermutedViews) {
  Leaves leaves;
  Tensor* a = leaves.random(GgmlType::F32, {5, 7, 3});
  Tensor* b = leaves.random(GgmlType::F32, {7, 5, 3});
  // a viewed as [7, 5, 3] through a transpose: dimension 0 is strided.
  Dense at(b->ne);
  const Dense da = read_dense(*a);
  for (int64_t i2 = 0; i2 < 3; ++i2)
    for (int64_t i1 = 0; i1 < 5; ++i1)
      for (int64_t i0 = 0; i0 < 7; ++i0) at.at(i0, i1, i2) = da.at(i1, i0, i2);
  const Dense db = read_dense(*b);
  expect_graph_matches([&](Graph& g) { return g.add(g.transpose(a), b); },
                       zip_repeated(at, db, [](double x, double y) { return x + y; }), kFloatOps);
  expect_graph_matches([&](Graph& g) { return g.swiglu(g.transpose(a), b); },
                       zip_repeated(at, db, [](double x, double y) { return silu(x) * y; }), kTranscendental);
  expect_graph_matches([&](Graph& g) { return g.geglu(g.transpose(a), b); },
                       zip_repeated(at, db, [](double x, double y) { return gelu_tanh(x) * y; }), kTranscendental);
  expect_graph_matches([&](Graph& g) { return g.softcap(g.transpose(a), 0.75f); },
                       map(at, [](double x) { return 0.75 * std::tanh(x / 0.75); }), kTranscendental);
  expect_graph_matches([&](Graph& g) { return g.scale(g.transpose(a), -0.75f); },
                       map(at, [](double x) { return -0.75 * x; }), kFloatOps);
  // A permuted view: [5, 7, 3] -> [3, 5, 7].
  Dense dp({3, 5, 7, 1});
  for (int64_t i2 = 0; i2 < 3; ++i2)
    for (int64_t i1 = 0; i1 < 7; ++i1)
      for (int64_t i0 = 0; i0 < 5; ++i0) dp.at(i2, i0, i1) = da.at(i0, i1, i2);
  expect_graph_matches([&](Graph& g) { return g.scale(g.permute(a, 1, 2, 0, 3), 3.0f); },
                       map(dp, [](double x) { return 3.0 * x; }), kFloatOps);
}

// Shapes: one element, rows, and one long row (decode's gate, the logits),
// whose elements the threads share.
TEST(CoreOps, ScaleGatesAndSoftcap) {
  Leaves leaves;
  for (auto shape : {std::initializer_list<int64_t>{1}, {33, 3}, {1000, 7}, {50001}}) {
    Tensor* a = leaves.random(GgmlType::F32, shape, -6.0f, 6.0f);
    Tensor* up = leaves.random(GgmlType::F32, shape);
    const Dense da = read_dense(*a);
    expect_graph_matches([&](Graph& g) { return g.scale(a, 0.125f); },
                         map(da, [](double x) { return 0.125 * x; }), kFloatOps);
    expect_graph_matches([&](Graph& g) { return g.swiglu(a, up); },
                         zip_repeated(da, read_dense(*up), [](double x, double y) { return silu(x) * y; }),
                         kTranscendental);
    expect_graph_matches([&](Graph& g) { return g.geglu(a, up); },
                         zip_repeated(da, read_dense(*up), [](double x, double y) { return gelu_tanh(x) * y; }),
                         kTranscendental);
    expect_graph_matches([&](Graph& g) { return g.softcap(a, 4.0f); },
                         map(da, [](double x) { return 4.0 * std::tanh(x / 4.0); }), kTranscendental);
    expect_graph_matches([&](Graph& g) { return g.gelu(a); }, map(da, gelu_tanh), kTranscendental);
    expect_graph_matches([&](Graph& g) { return g.gelu_erf(a); },
                         map(da, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }),
                         kTranscendental);
  }
  // A strided source: the columns of a transposed view.
  Tensor* square = leaves.random(GgmlType::F32, {9, 9}, -4.0f, 4.0f);
  expect_graph_matches([&](Graph& g) { return g.gelu(g.transpose(square)); },
                       map(swap_axes(read_dense(*square), 0, 1), gelu_tanh), kTranscendental);
}

// ---- row normalisations ----------------------------------------------------------

Dense reference_rms_norm(const Dense& a, double eps) {
  Dense out = same_shape(a);
  for (size_t row = 0; row < a.values.size() / static_cast<size_t>(a.ne[0]); ++row) {
    const size_t n = static_cast<size_t>(a.ne[0]);
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += a.values[row * n + i] * a.values[row * n + i];
    const double inverse = 1.0 / std::sqrt(sum / static_cast<double>(n) + eps);
    for (size_t i = 0; i < n; ++i) out.values[row * n + i] = a.values[row * n + i] * inverse;
  }
  return out;
}

TEST(CoreOps, RmsNormOnOddShapesAndViews) {
  Leaves leaves;
  for (auto shape : {std::initializer_list<int64_t>{1}, {7, 1}, {131, 5, 2}, {4096, 3}}) {
    Tensor* a = leaves.random(GgmlType::F32, shape, -3.0f, 3.0f);
    expect_graph_matches([&](Graph& g) { return g.rms_norm(a, 1e-5f); },
                         reference_rms_norm(read_dense(*a), 1e-5), kFloatOps);
  }
  // Rows 1, 3, 5 of a [64, 6] tensor: a view with a doubled row stride.
  Tensor* wide = leaves.random(GgmlType::F32, {64, 6});
  Dense rows({64, 3, 1, 1});
  const Dense dw = read_dense(*wide);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 64; ++i) rows.at(i, r) = dw.at(i, 2 * r + 1);
  expect_graph_matches([&](Graph& g) { return g.rms_norm(g.view(wide, {64, 3}, {2 * wide->nb[1]}, wide->nb[1]), 1e-6f); },
                       reference_rms_norm(rows, 1e-6), kFloatOps);
}

TEST(CoreOps, RmsNormWithWeightScalesEveryRow) {
  Leaves leaves;
  Tensor* a = leaves.random(GgmlType::F32, {131, 4, 3}, -3.0f, 3.0f);
  Tensor* weight = leaves.random(GgmlType::F32, {131}, 0.5f, 2.0f);
  Dense expected = reference_rms_norm(read_dense(*a), 1e-5);
  const Dense dw = read_dense(*weight);
  for (size_t i = 0; i < expected.values.size(); ++i) expected.values[i] *= dw.values[i % 131];
  expect_graph_matches([&](Graph& g) { return g.rms_norm(a, 1e-5f, weight); }, expected, kFloatOps);
}

// BERT's LayerNorm from its definition: (x - mean) / sqrt(variance + eps) * w + b,
// the variance the mean of the squared deviations.
Dense reference_layer_norm(const Dense& a, double eps, const Dense& weight, const Dense& bias) {
  Dense out = same_shape(a);
  const size_t n = static_cast<size_t>(a.ne[0]);
  for (size_t row = 0; row < a.values.size() / n; ++row) {
    const double* x = &a.values[row * n];
    double mean = 0.0;
    for (size_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
    double variance = 0.0;
    for (size_t i = 0; i < n; ++i) variance += (x[i] - mean) * (x[i] - mean);
    variance /= static_cast<double>(n);
    for (size_t i = 0; i < n; ++i) {
      out.values[row * n + i] = (x[i] - mean) / std::sqrt(variance + eps) * weight.values[i] + bias.values[i];
    }
  }
  return out;
}

// Rows far from zero (offset 100) so that a variance taken as the difference
// of two large sums would cancel; a row view with a doubled stride; one-row
// and long-row shapes.
TEST(CoreOps, LayerNormCentresScalesAndShiftsEveryRow) {
  Leaves leaves;
  for (auto shape : {std::initializer_list<int64_t>{1, 1}, {7, 3}, {384, 5, 2}, {4096, 2}}) {
    Tensor* a = leaves.random(GgmlType::F32, shape, 97.0f, 103.0f);
    Tensor* weight = leaves.random(GgmlType::F32, {a->ne[0]}, 0.5f, 2.0f);
    Tensor* bias = leaves.random(GgmlType::F32, {a->ne[0]});
    const Dense da = read_dense(*a), dw = read_dense(*weight), db = read_dense(*bias);
    expect_graph_matches([&](Graph& g) { return g.layer_norm(a, 1e-12f, weight, bias); },
                         reference_layer_norm(da, 1e-12, dw, db), kFloatOps);
  }
  Tensor* wide = leaves.random(GgmlType::F32, {64, 6}, -3.0f, 3.0f);
  Tensor* weight = leaves.random(GgmlType::F32, {64}, 0.5f, 2.0f);
  Tensor* bias = leaves.random(GgmlType::F32, {64});
  const Dense dw = read_dense(*wide);
  Dense rows({64, 3, 1, 1});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 64; ++i) rows.at(i, r) = dw.at(i, 2 * r + 1);
  expect_graph_matches(
      [&](Graph& g) {
        return g.layer_norm(g.view(wide, {64, 3}, {2 * wide->nb[1]}, wide->nb[1]), 1e-5f, weight, bias);
      },
      reference_layer_norm(rows, 1e-5, read_dense(*weight), read_dense(*bias)), kFloatOps);
}

// Ranges of one row (a sequence's first or last token), of several, of every
// row, overlapping and out of order: each column is its range's mean.
TEST(CoreOps, MeanRowsAveragesEachRange) {
  Leaves leaves;
  Tensor* a = leaves.random(GgmlType::F32, {131, 40}, -3.0f, 3.0f);
  const std::vector<int32_t> ranges = {0, 1, 39, 40, 0, 40, 5, 17, 12, 13, 3, 30};
  Tensor* row_ranges = leaves.ids(ranges);
  const Dense da = read_dense(*a);
  Dense expected({131, static_cast<int64_t>(ranges.size() / 2), 1, 1});
  for (size_t j = 0; j < ranges.size() / 2; ++j) {
    for (int64_t i = 0; i < 131; ++i) {
      double sum = 0.0;
      for (int32_t row = ranges[2 * j]; row < ranges[2 * j + 1]; ++row) sum += da.at(i, row);
      expected.at(i, static_cast<int64_t>(j)) = sum / (ranges[2 * j + 1] - ranges[2 * j]);
    }
  }
  expect_graph_matches(
      [&](Graph& g) {
        return g.mean_rows(a, g.reshape(row_ranges, {2, static_cast<int64_t>(ranges.size() / 2)}));
      },
      expected, kFloatOps);
}

// ---- rope ------------------------------------------------------------------------

Dense reference_rope(const Dense& a, const std::vector<int32_t>& positions, const RopeParams& rope,
                     const Dense* freq_factors = nullptr) {
  Dense out = a;
  const int64_t n_dims = rope.n_dims;
  for (int64_t t = 0; t < a.ne[2]; ++t)
    for (int64_t h = 0; h < a.ne[1]; ++h)
      for (int64_t i = 0; i < n_dims / 2; ++i) {
        const double theta = positions[static_cast<size_t>(t)] *
                             std::pow(static_cast<double>(rope.freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(n_dims)) *
                             rope.freq_scale / (freq_factors != nullptr ? freq_factors->at(i) : 1.0);
        const int64_t first = rope.mode == RopeMode::Neox ? i : 2 * i;
        const int64_t second = rope.mode == RopeMode::Neox ? i + n_dims / 2 : 2 * i + 1;
        const double x0 = a.at(first, h, t);
        const double x1 = a.at(second, h, t);
        out.at(first, h, t) = (x0 * std::cos(theta) - x1 * std::sin(theta)) * rope.attn_factor;
        out.at(second, h, t) = (x0 * std::sin(theta) + x1 * std::cos(theta)) * rope.attn_factor;
      }
  return out;
}

// Vision mode (Qwen2.5-VL's ViT, HF's cat(freqs[h], freqs[w]) with
// rotate_half): neox pairs (i, i + n/2); pair i < n/4 turns by the row y at
// base^(-2i / (n/2)), pair i >= n/4 by the column x at base^(-2(i - n/4) / (n/2)).
TEST(CoreOps, RopeVisionTurnsByRowThenColumn) {
  Leaves leaves;
  const std::vector<int32_t> rows = {0, 1, 5, 2, 9}, cols = {3, 0, 7, 2, 11};
  std::vector<int32_t> positions = rows;
  positions.insert(positions.end(), cols.begin(), cols.end());
  Tensor* pos = leaves.ids(positions);
  Tensor* a = leaves.random(GgmlType::F32, {80, 2, 5});
  const Dense da = read_dense(*a);
  const RopeParams rope{80, RopeMode::Vision, 10000.0f, 1.0f};
  Dense expected = da;
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 40; ++i) {
        const bool by_row = i < 20;
        const double position = by_row ? rows[static_cast<size_t>(t)] : cols[static_cast<size_t>(t)];
        const double theta = position * std::pow(10000.0, -2.0 * static_cast<double>(by_row ? i : i - 20) / 40.0);
        const double x0 = da.at(i, h, t), x1 = da.at(i + 40, h, t);
        expected.at(i, h, t) = x0 * std::cos(theta) - x1 * std::sin(theta);
        expected.at(i + 40, h, t) = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
  expect_graph_matches([&](Graph& g) { return g.rope(a, pos, rope); }, expected, 1e-6);
}

// Multimodal mode (Qwen2-VL's M-RoPE, HF's apply_multimodal_rotary_pos_emb
// with mrope_section {16, 24, 24}): neox pairs (i, i + 64) at neox's
// frequencies base^(-2i / 128); pairs 0..15 turn by t, 16..39 by h, 40..63 by
// w. Text tokens have t = h = w and so turn as neox does.
TEST(CoreOps, RopeMultimodalTurnsEachSectionByItsPosition) {
  Leaves leaves;
  const std::vector<int32_t> t = {0, 5, 5, 5, 9}, h = {0, 5, 6, 7, 9}, w = {0, 7, 5, 8, 9};
  std::vector<int32_t> positions = t;
  positions.insert(positions.end(), h.begin(), h.end());
  positions.insert(positions.end(), w.begin(), w.end());
  Tensor* pos = leaves.ids(positions);
  Tensor* a = leaves.random(GgmlType::F32, {128, 2, 5});
  const Dense da = read_dense(*a);
  RopeParams rope{128, RopeMode::Multi, 1000000.0f, 1.0f};
  rope.sections[0] = 16;
  rope.sections[1] = 24;
  Dense expected = da;
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t hh = 0; hh < 2; ++hh)
      for (int64_t i = 0; i < 64; ++i) {
        const std::vector<int32_t>& section = i < 16 ? t : i < 40 ? h : w;
        const double theta =
            section[static_cast<size_t>(k)] * std::pow(1000000.0, -2.0 * static_cast<double>(i) / 128.0);
        const double x0 = da.at(i, hh, k), x1 = da.at(i + 64, hh, k);
        expected.at(i, hh, k) = x0 * std::cos(theta) - x1 * std::sin(theta);
        expected.at(i + 64, hh, k) = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
  expect_graph_matches([&](Graph& g) { return g.rope(a, pos, rope); }, expected, 1e-6);
  // Too few positions for the mode is refused.
  Graph g;
  EXPECT_THROW(g.rope(a, leaves.ids(t), rope), std::invalid_argument);
}

TEST(CoreOps, RopeNormalAndNeoxWithPartialDimsAndScaling) {
  Leaves leaves;
  const std::vector<int32_t> positions = {0, 1, 7, 100, 4095};
  Tensor* pos = leaves.ids(positions);
  Tensor* a = leaves.random(GgmlType::F32, {64, 3, 5});
  const Dense da = read_dense(*a);
  for (RopeMode mode : {RopeMode::Normal, RopeMode::Neox}) {
    for (int32_t n_dims : {64, 32}) {
      for (float freq_scale : {1.0f, 0.25f}) {
        RopeParams rope{n_dims, mode, 10000.0f, freq_scale};
        SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << " n_dims " << n_dims
                                        << " freq_scale " << freq_scale);
        expect_graph_matches([&](Graph& g) { return g.rope(a, pos, rope); },
                             reference_rope(da, positions, rope), 1e-8);
      }
    }
  }
  // Per-pair frequency factors (llama 3.1), with partial rotation.
  Tensor* factors = leaves.random(GgmlType::F32, {16}, 1.0f, 8.0f);
  const Dense df = read_dense(*factors);
  const RopeParams scaled{32, RopeMode::Neox, 500000.0f, 1.0f};
  expect_graph_matches([&](Graph& g) { return g.rope(a, pos, scaled, factors); },
                       reference_rope(da, positions, scaled, &df), 1e-8);
  // LongRoPE (Phi-3): factors and a magnitude factor on the rotated pairs
  // only; the 16 dimensions past n_dims 48 keep their values.
  Tensor* long_factors = leaves.random(GgmlType::F32, {24}, 1.0f, 40.0f);
  const Dense dl = read_dense(*long_factors);
  const RopeParams long_rope{48, RopeMode::Neox, 10000.0f, 1.0f, 1.19f};
  expect_graph_matches([&](Graph& g) { return g.rope(a, pos, long_rope, long_factors); },
                       reference_rope(da, positions, long_rope, &dl), 1e-8);
  // Head dim 6, one token, base 500000, on a [6, 2, 1] view of a wider tensor.
  Tensor* wide = leaves.random(GgmlType::F32, {8, 2, 1});
  Tensor* one = leaves.ids({3});
  Dense narrow({6, 2, 1, 1});
  const Dense dw = read_dense(*wide);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 6; ++i) narrow.at(i, h) = dw.at(i, h);
  const RopeParams rope{6, RopeMode::Neox, 500000.0f, 1.0f};
  expect_graph_matches([&](Graph& g) { return g.rope(g.view(wide, {6, 2, 1}, {wide->nb[1], wide->nb[2]}, 0), one, rope); },
                       reference_rope(narrow, {3}, rope), 1e-8);
  // Elements that are not adjacent (a transposed view) take the strided loops.
  Tensor* across = leaves.random(GgmlType::F32, {5, 64, 3});
  const Dense transposed = swap_axes(read_dense(*across), 0, 1);
  const std::vector<int32_t> three = {2, 50, 999};
  Tensor* pos3 = leaves.ids(three);
  for (RopeMode mode : {RopeMode::Normal, RopeMode::Neox}) {
    const RopeParams strided{64, mode, 10000.0f, 1.0f};
    expect_graph_matches([&](Graph& g) { return g.rope(g.transpose(across), pos3, strided); },
                         reference_rope(transposed, three, strided), 1e-8);
  }
}

// ---- weights: get_rows, mul_mat ------------------------------------------------------

TEST(CoreOps, GetRowsDequantizesEveryWeightType) {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    SCOPED_TRACE(ggml_type_name(static_cast<uint32_t>(type)));
    Leaves leaves;
    Tensor* table = leaves.random(type, {64, 11});
    const std::vector<int32_t> ids = {10, 0, 3, 3, 7};
    Tensor* id_tensor = leaves.ids(ids);
    const Dense dt = read_dense(*table);  // dequantized: get_rows must match exactly
    Dense expected({64, 5, 1, 1});
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t i = 0; i < 64; ++i) expected.at(i, r) = dt.at(i, ids[static_cast<size_t>(r)]);
    expect_graph_matches([&](Graph& g) { return g.get_rows(table, id_tensor); }, expected, 0.0);
  }
}

// Rows of a quantized cache viewed as a matrix [n_embd_kv, n_ctx] with the
// cache's cell stride (how a K-shift reads cached keys back).
TEST(CoreOps, GetRowsFromAStridedViewOfACache) {
  Leaves leaves;
  Tensor* cache = leaves.random(GgmlType::Q8_0, {32, 2, 9});  // [head_dim, n_head_kv, n_ctx]
  const std::vector<int32_t> cells = {8, 2, 5};
  Tensor* ids = leaves.ids(cells);
  const Dense dc = read_dense(*cache);
  Dense expected({64, 3, 1, 1});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 32; ++i) expected.at(h * 32 + i, r) = dc.at(i, h, cells[static_cast<size_t>(r)]);
  expect_graph_matches([&](Graph& g) { return g.get_rows(g.view(cache, {64, 9}, {cache->nb[2]}, 0), ids); },
                       expected, 0.0);
}

Dense reference_mul_mat(const Dense& w, const Dense& x) {
  Dense out({w.ne[1], x.ne[1], x.ne[2], x.ne[3]});
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < x.ne[2]; ++i2)
      for (int64_t m = 0; m < x.ne[1]; ++m)
        for (int64_t n = 0; n < w.ne[1]; ++n) {
          double sum = 0.0;
          for (int64_t k = 0; k < w.ne[0]; ++k) {
            sum += w.at(k, n, i2 / (x.ne[2] / w.ne[2]), i3 / (x.ne[3] / w.ne[3])) * x.at(k, m, i2, i3);
          }
          out.at(n, m, i2, i3) = sum;
        }
  return out;
}

TEST(CoreOps, MulMatForEveryWeightTypeDecodeAndBatch) {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    SCOPED_TRACE(ggml_type_name(static_cast<uint32_t>(type)));
    Leaves leaves;
    for (int64_t n_tokens : {1, 3, 17}) {
      Tensor* w = leaves.random(type, {96, 37});
      Tensor* x = leaves.random(GgmlType::F32, {96, n_tokens});
      expect_graph_matches([&](Graph& g) { return g.mul_mat(w, x); },
                           reference_mul_mat(read_dense(*w), read_dense(*x)), partner_bound(type));
    }
  }
}

TEST(CoreOps, MulMatBroadcastsWeightBatchesAndReadsStridedActivations) {
  Leaves leaves;
  // Grouped heads: w [32, 9, 2] against x [32, 5, 6] (each w batch serves three x batches).
  Tensor* w = leaves.random(GgmlType::F16, {32, 9, 2});
  Tensor* x = leaves.random(GgmlType::F32, {32, 5, 6});
  expect_graph_matches([&](Graph& g) { return g.mul_mat(w, x); },
                       reference_mul_mat(read_dense(*w), read_dense(*x)), kF16Partner);
  // Activations: every other row of a [64, 8] tensor.
  Tensor* q = leaves.random(GgmlType::Q8_0, {64, 1});
  Tensor* wide = leaves.random(GgmlType::F32, {64, 8});
  const Dense dw = read_dense(*wide);
  Dense every_other({64, 4, 1, 1});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t i = 0; i < 64; ++i) every_other.at(i, r) = dw.at(i, 2 * r);
  expect_graph_matches([&](Graph& g) { return g.mul_mat(q, g.view(wide, {64, 4}, {2 * wide->nb[1]}, 0)); },
                       reference_mul_mat(read_dense(*q), every_other), kQ8Partner);
}

TEST(CoreOps, MulMatWithStridedWeightRows) {
  Leaves leaves;
  // Every third row of a Q4_0 matrix, as weights [64, 5].
  Tensor* all = leaves.random(GgmlType::Q4_0, {64, 15});
  Tensor* x = leaves.random(GgmlType::F32, {64, 4});
  const Dense da = read_dense(*all);
  Dense rows({64, 5, 1, 1});
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t i = 0; i < 64; ++i) rows.at(i, r) = da.at(i, 3 * r + 1);
  expect_graph_matches([&](Graph& g) { return g.mul_mat(g.view(all, {64, 5}, {3 * all->nb[1]}, all->nb[1]), x); },
                       reference_mul_mat(rows, read_dense(*x)), kQ8Partner);
}

TEST(CoreOps, MulMatLargeDecodeRow) {
  Leaves leaves;
  Tensor* w = leaves.random(GgmlType::Q4_0, {2048, 257});
  Tensor* x = leaves.random(GgmlType::F32, {2048, 1});
  expect_graph_matches([&](Graph& g) { return g.mul_mat(w, x); },
                       reference_mul_mat(read_dense(*w), read_dense(*x)), kQ8Partner);
}

// w · x + scale · b · (a · x), from the dense values.
Dense reference_low_rank(const Dense& w, const Dense& a, const Dense& b, const Dense& x, double scale) {
  Dense out = reference_mul_mat(w, x);
  const Dense ax = reference_mul_mat(a, x);
  const Dense update = reference_mul_mat(b, ax);
  for (size_t i = 0; i < out.values.size(); ++i) out.values[i] += scale * update.values[i];
  return out;
}

// b [rank, n] transposed into a new leaf [n, rank] of `type` (F32 or F16).
Tensor* transposed(Leaves& leaves, const Tensor& b, GgmlType type) {
  const Dense db = read_dense(b);
  Tensor* t = leaves.zeros(type, {b.ne[1], b.ne[0]});
  std::vector<float> row(static_cast<size_t>(b.ne[1]));
  for (int64_t j = 0; j < b.ne[0]; ++j) {
    for (int64_t r = 0; r < b.ne[1]; ++r) row[static_cast<size_t>(r)] = static_cast<float>(db.at(j, r));
    kernels_for(type).from_float(row.data(), t->row_ptr(j), b.ne[1]);
  }
  return t;
}

// One node for a few rows (decode), the three nodes of the chain for more;
// every thread count, odd row counts (threads' shares and b's chunks of rows
// end mid-way), the adapter's types with their own partners beside w's.
TEST(CoreOps, MulMatLowRankAddsTheUpdateInOneNodeForFewRows) {
  struct Case {
    GgmlType w, a, b;
    int64_t k, rank;
  };
  const Case cases[] = {{GgmlType::Q4_0, GgmlType::F16, GgmlType::F16, 96, 16},
                        {GgmlType::Q8_0, GgmlType::F32, GgmlType::F32, 64, 8},
                        {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q8_0, 128, 32},
                        {GgmlType::Q4_K, GgmlType::F16, GgmlType::Q8_0, 256, 32}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ggml_type_name(static_cast<uint32_t>(c.w))) + " with " +
                 ggml_type_name(static_cast<uint32_t>(c.a)) + " and " + ggml_type_name(static_cast<uint32_t>(c.b)));
    Leaves leaves;
    const int64_t n = 150;
    Tensor* w = leaves.random(c.w, {c.k, n});
    Tensor* a = leaves.random(c.a, {c.k, c.rank});
    Tensor* b = leaves.random(c.b, {c.rank, n});
    Tensor* b_rows = transposed(leaves, *b, c.b == GgmlType::F32 ? GgmlType::F32 : GgmlType::F16);
    for (int64_t n_tokens : {1, 3, 4, 5, 9}) {
      SCOPED_TRACE(n_tokens);
      Tensor* x = leaves.random(GgmlType::F32, {c.k, n_tokens});
      size_t nodes = 0;
      const auto build = [&](Graph& g) {
        Tensor* y = g.mul_mat_low_rank(w, x, a, b, b_rows, 0.25f);
        g.expand(y);
        nodes = g.nodes().size();
        return y;
      };
      const double bound = std::max({partner_bound(c.w), partner_bound(c.a), partner_bound(c.b), kF16Partner});
      expect_graph_matches(
          build, reference_low_rank(read_dense(*w), read_dense(*a), read_dense(*b), read_dense(*x), 0.25), bound);
      EXPECT_EQ(nodes, n_tokens <= kPrivateConversionRows ? 1u : 3u);
    }
  }
}

// ---- copy into a cache ------------------------------------------------------------------

TEST(CoreOps, CopyConvertsIntoACacheSlot) {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    SCOPED_TRACE(ggml_type_name(static_cast<uint32_t>(type)));
    Leaves leaves;
    // Cache [head_dim 64, n_head_kv 2, n_ctx 10]; write 3 tokens at position 4.
    Tensor* cache = leaves.zeros(type, {64, 2, 10});
    Tensor* cur = leaves.random(GgmlType::F32, {64, 2, 3});
    // Expected: what the kernels make of the source, at positions 4..6; zeros elsewhere.
    Dense expected = read_dense(*cache);
    std::vector<char> converted(cur->row_bytes() * 2);
    std::vector<float> back(64);
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t h = 0; h < 2; ++h) {
        const size_t bytes = static_cast<size_t>(64 / type_block_elements(type)) * type_block_bytes(type);
        converted.resize(bytes);
        kernels_for(type).from_float(reinterpret_cast<const float*>(cur->row_ptr(h, t)), converted.data(), 64);
        kernels_for(type).to_float(converted.data(), back.data(), 64);
        for (int64_t i = 0; i < 64; ++i) expected.at(i, h, 4 + t) = back[static_cast<size_t>(i)];
      }
    for (int n_threads = 1; n_threads <= kMaxTestThreads; ++n_threads) {
      compute_once([&](Graph& g) {
        return g.copy(cur, g.view(cache, {64, 2, 3}, {cache->nb[1], cache->nb[2]}, 4 * cache->nb[2]));
      }, n_threads);
      EXPECT_EQ(nmse(expected, read_dense(*cache)), 0.0) << n_threads << " threads";
    }
  }
}

}  // namespace
}  // namespace peak::core::testing
