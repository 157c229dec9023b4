// Tensor descriptors, views, graph order and the graph allocator.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "core_test_support.h"
#include "llama_block.h"

namespace peak::core::testing {

using kernels::GgmlType;

namespace {

TEST(CoreTensor, DenseLayoutOfPlainAndBlockTypes) {
  Leaves leaves;
  Tensor* f = leaves.zeros(GgmlType::F32, {5, 3, 2});
  EXPECT_EQ(f->nb[0], 4u);
  EXPECT_EQ(f->nb[1], 20u);
  EXPECT_EQ(f->nb[2], 60u);
  EXPECT_EQ(f->byte_size(), 120u);
  EXPECT_TRUE(f->is_contiguous());
  Tensor* q = leaves.zeros(GgmlType::Q8_0, {64, 3});
  EXPECT_EQ(q->nb[0], 34u);  // one block
  EXPECT_EQ(q->nb[1], 68u);  // two blocks per row
  EXPECT_EQ(q->byte_size(), 204u);
  EXPECT_TRUE(q->is_contiguous());
  Tensor bad;
  EXPECT_THROW(set_dense_layout(bad, GgmlType::Q4_0, {33, 1, 1, 1}), std::invalid_argument);
}

TEST(CoreTensor, ViewsReshapePermuteTransposeShareMemory) {
  Leaves leaves;
  Tensor* a = leaves.zeros(GgmlType::F32, {6, 4, 3});
  Graph g(64);
  Tensor* r = g.reshape(a, {24, 3});
  EXPECT_EQ(r->ne[0], 24);
  EXPECT_EQ(r->view_src, a);
  EXPECT_TRUE(r->is_contiguous());
  Tensor* t = g.transpose(a);
  EXPECT_EQ(t->ne[0], 4);
  EXPECT_EQ(t->ne[1], 6);
  EXPECT_EQ(t->nb[0], a->nb[1]);
  EXPECT_EQ(t->nb[1], a->nb[0]);
  EXPECT_FALSE(t->is_contiguous());
  Tensor* p = g.permute(a, 2, 0, 1, 3);  // [6, 4, 3] -> [4, 3, 6]
  EXPECT_EQ(p->ne[0], 4);
  EXPECT_EQ(p->ne[1], 3);
  EXPECT_EQ(p->ne[2], 6);
  EXPECT_EQ(p->nb[2], a->nb[0]);
  // A view of a view points at the root with the summed offset.
  Tensor* rows = g.view(a, {6, 2}, {a->nb[1]}, a->nb[1]);
  Tensor* row = g.view(rows, {6}, {}, rows->nb[1]);
  EXPECT_EQ(row->view_src, a);
  EXPECT_EQ(row->view_offset, 2 * a->nb[1]);
  EXPECT_THROW(g.reshape(t, {24}), std::invalid_argument);
  EXPECT_THROW(g.reshape(a, {25}), std::invalid_argument);
  EXPECT_THROW(g.view(a, {6, 13}, {a->nb[1]}, 0), std::invalid_argument);
  EXPECT_THROW(g.permute(a, 0, 0, 1, 2), std::invalid_argument);
}

TEST(CoreGraph, InvalidShapesAreRefusedAtBuildTime) {
  Leaves leaves;
  Graph g(64);
  Tensor* w = leaves.zeros(GgmlType::Q4_0, {64, 8});
  Tensor* x = leaves.zeros(GgmlType::F32, {32, 2});
  EXPECT_THROW(g.mul_mat(w, x), std::invalid_argument);
  EXPECT_THROW(g.add(x, leaves.zeros(GgmlType::F32, {3})), std::invalid_argument);
  EXPECT_THROW(g.get_rows(w, x), std::invalid_argument);
  Tensor* q = leaves.zeros(GgmlType::F32, {64, 6, 1});
  Tensor* k = leaves.zeros(GgmlType::F16, {64, 4, 10});
  EXPECT_THROW(g.attention(q, k, k, AttentionParams{}), std::invalid_argument);  // 6 % 4 != 0
  EXPECT_THROW(g.geglu(x, leaves.zeros(GgmlType::F32, {32, 3})), std::invalid_argument);
  for (float cap : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    EXPECT_THROW(g.softcap(x, cap), std::invalid_argument) << cap;
  }
}

TEST(CoreGraph, InvalidAttentionParamsAreRefused) {
  Leaves leaves;
  Graph g(64);
  Tensor* q = leaves.zeros(GgmlType::F32, {64, 4, 3});
  Tensor* k = leaves.zeros(GgmlType::F16, {64, 2, 10});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto refused = [&](float scale, bool causal, int64_t window, float softcap) {
    AttentionParams p;
    p.scale = scale;
    p.causal = causal;
    p.window = window;
    p.softcap = softcap;
    try {
      g.attention(q, k, k, p);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  EXPECT_FALSE(refused(0.125f, true, 4, 50.0f));
  EXPECT_FALSE(refused(0.125f, true, 1000, 0.0f));  // longer than the cache: no window
  EXPECT_TRUE(refused(0.125f, true, -1, 0.0f));
  EXPECT_TRUE(refused(0.125f, false, 4, 0.0f));  // a window needs causal attention
  EXPECT_TRUE(refused(0.125f, true, 0, -1.0f));
  EXPECT_TRUE(refused(0.125f, true, 0, nan));
  EXPECT_TRUE(refused(0.125f, true, 0, inf));
  EXPECT_TRUE(refused(nan, true, 0, 0.0f));
  EXPECT_TRUE(refused(inf, false, 0, 0.0f));
  Graph tiny(2);
  tiny.input(GgmlType::F32, {4}, "a");
  tiny.input(GgmlType::F32, {4}, "b");
  EXPECT_THROW(tiny.input(GgmlType::F32, {4}, "c"), std::length_error);
}

TEST(CoreGraph, TopologicalOrderLeavesAndNodes) {
  Leaves leaves;
  Tensor* w = leaves.random(GgmlType::F32, {8, 8});
  Graph g(64);
  Tensor* x = g.input(GgmlType::F32, {8, 2}, "x");
  Tensor* h = g.mul_mat(w, x);
  Tensor* unused = g.scale(h, 2.0f);
  Tensor* y = g.add(g.rms_norm(h, 1e-5f), h);
  g.output(y);
  (void)unused;
  ASSERT_EQ(g.leafs().size(), 2u);  // w and x, each once
  EXPECT_EQ(g.leafs()[0], w);
  EXPECT_EQ(g.leafs()[1], x);
  ASSERT_EQ(g.nodes().size(), 3u);  // mul_mat, rms_norm, add: the unused scale is left out
  EXPECT_EQ(g.nodes()[0], h);
  EXPECT_EQ(g.nodes()[1]->op, Op::RmsNorm);
  EXPECT_EQ(g.nodes()[2], y);
  EXPECT_TRUE(y->is_output);
}

Tensor* scale_of_input(Graph& g, int64_t n) { return g.scale(g.input(GgmlType::F32, {n}, "x"), 0.5f); }

// reset() forgets the previous build (nodes, leaves, the visited set) but keeps
// the external leaves usable: a rebuilt graph equals a freshly built one.
TEST(CoreGraph, RebuildingAfterResetGivesTheSameGraphAndResult) {
  Leaves leaves;
  LlamaBlock block(leaves, LlamaShape{});
  Graph fresh(512);
  Tensor* expected_out = block.build(fresh, 3, 4);
  Graph reused(512);
  for (int64_t n_tokens : {5, 1, 3}) {
    reused.reset();
    block.build(reused, n_tokens, 4);
  }
  ASSERT_EQ(reused.nodes().size(), fresh.nodes().size());
  ASSERT_EQ(reused.leafs().size(), fresh.leafs().size());
  Tensor* out = reused.nodes().back();
  std::vector<float> results[2];
  for (int which = 0; which < 2; ++which) {
    const Graph& g = which == 0 ? fresh : reused;
    GraphAllocator allocator;
    allocator.reserve(g, 2);
    LlamaBlock::fill_inputs(g, 4);
    compute_graph(g, test_pool(), 2, allocator.work_buffer());
    const Tensor* result = which == 0 ? expected_out : out;
    const auto* values = static_cast<const float*>(result->data);
    results[which].assign(values, values + result->element_count());
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(CoreAllocator, ReusesDeadBuffersAndRunsElementWiseInPlace) {
  Leaves leaves;
  Tensor* w = leaves.random(GgmlType::F32, {64, 64});
  Graph g(64);
  Tensor* x = g.input(GgmlType::F32, {64, 4}, "x");
  Tensor* a = g.mul_mat(w, x);            // a: new block
  Tensor* b = g.scale(a, 0.5f);           // in place over a
  Tensor* c = g.scale(b, 2.0f);           // in place over b
  Tensor* d = g.mul_mat(w, c);            // x's block, dead since a was computed
  Tensor* e = g.mul_mat(w, d);            // c's block, dead since d was computed
  g.output(e);
  GraphAllocator allocator;
  allocator.reserve(g, 1);
  EXPECT_EQ(b->data, a->data);
  EXPECT_EQ(c->data, a->data);
  EXPECT_EQ(d->data, x->data);
  EXPECT_EQ(e->data, c->data);
  EXPECT_EQ(allocator.naive_bytes(), 6 * 1024u);
  EXPECT_EQ(allocator.planned_bytes(), 2 * 1024u);
}

TEST(CoreAllocator, RunsInPlaceThroughAReshapeButNotAPartialView) {
  Leaves leaves;
  Tensor* w = leaves.random(GgmlType::F32, {64, 64});
  Graph g(64);
  Tensor* x = g.input(GgmlType::F32, {64, 2}, "x");
  Tensor* projected = g.mul_mat(w, x);                          // [64, 2]
  Tensor* heads = g.scale(g.reshape(projected, {16, 4, 2}), 0.5f);  // in place: same bytes
  Tensor* h2 = g.mul_mat(w, g.reshape(heads, {64, 2}));
  Tensor* first_row = g.scale(g.view(h2, {64}, {}, 0), 0.5f);       // half of h2: not in place
  g.output(first_row);
  GraphAllocator allocator;
  allocator.reserve(g, 1);
  EXPECT_EQ(heads->data, projected->data);
  EXPECT_NE(first_row->data, h2->data);
}

TEST(CoreAllocator, OutputsAndSharedSourcesAreNotOverwritten) {
  Leaves leaves;
  Graph g(64);
  Tensor* x = g.input(GgmlType::F32, {16}, "x");
  Tensor* a = g.scale(x, 0.5f);  // inputs are never written over
  Tensor* b = g.scale(a, 2.0f);  // a is read again below: not in place
  Tensor* c = g.add(a, b);
  Tensor* d = g.scale(c, 3.0f);  // c is an output: not in place
  g.output(c);
  g.output(d);
  GraphAllocator allocator;
  allocator.reserve(g, 1);
  EXPECT_NE(a->data, x->data);
  EXPECT_NE(b->data, a->data);
  EXPECT_NE(d->data, c->data);
}

TEST(CoreAllocator, ReservingSeveralGraphsFitsEachOfThem) {
  Graph small(64);
  small.output(scale_of_input(small, 16));
  Graph large(128);
  large.output(scale_of_input(large, 1024));
  GraphAllocator allocator;
  allocator.reserve(large, 1);
  const size_t large_bytes = allocator.planned_bytes();
  allocator.reserve(small, 2);  // never shrinks
  EXPECT_EQ(allocator.planned_bytes(), large_bytes);
  EXPECT_NO_THROW(allocator.allocate(large));
  EXPECT_NO_THROW(allocator.allocate(small));
}

// A tiny decoder whose large output (logits over a 32000-word vocabulary) comes
// last. With one token the small tensors before it fragment the buffer
// differently from the reserved 64-token case, so best fit alone would need more
// than the worst case; the reserved plan's places still fit.
struct TinyDecoder {
  Tensor* w_up;    // [16, 48]
  Tensor* w_down;  // [48, 16]
  Tensor* w_out;   // [16, 32000]

  explicit TinyDecoder(Leaves& weights)
      : w_up(weights.random(GgmlType::F32, {16, 48})),
        w_down(weights.random(GgmlType::F32, {48, 16})),
        w_out(weights.random(GgmlType::F32, {16, 32000})) {}

  // Logits of the last token, [32000, 1].
  Tensor* build(Graph& g, int64_t n_tokens) const {
    Tensor* x = g.input(GgmlType::F32, {16, n_tokens}, "x");
    for (int layer = 0; layer < 2; ++layer) {
      x = g.add(x, g.mul_mat(w_down, g.scale(g.mul_mat(w_up, g.rms_norm(x, 1e-5f)), 0.5f)));
    }
    if (n_tokens > 1) x = g.view(x, {16, 1}, {x->nb[1]}, static_cast<size_t>(n_tokens - 1) * x->nb[1]);
    Tensor* logits = g.mul_mat(w_out, g.rms_norm(x, 1e-5f));
    g.output(logits);
    return logits;
  }
};

std::vector<float> compute_with_inputs_at_half(const Graph& g, const GraphAllocator& allocator, const Tensor* out) {
  for (Tensor* leaf : g.leafs()) {
    if (leaf->is_input) std::fill_n(static_cast<float*>(leaf->data), leaf->element_count(), 0.5f);
  }
  compute_graph(g, test_pool(), 2, allocator.work_buffer());
  const auto* values = static_cast<const float*>(out->data);
  return std::vector<float>(values, values + out->element_count());
}

TEST(CoreAllocator, SmallerGraphThatFragmentsDifferentlyFitsTheReservedPlan) {
  Leaves weights;
  const TinyDecoder decoder(weights);
  Graph g(128);
  decoder.build(g, 64);
  GraphAllocator allocator;
  allocator.reserve(g, 2);
  g.reset();
  Tensor* logits = decoder.build(g, 1);
  ASSERT_NO_THROW(allocator.allocate(g));
  const std::vector<float> replayed = compute_with_inputs_at_half(g, allocator, logits);

  Graph fresh(128);  // the same graph planned on its own
  Tensor* fresh_logits = decoder.build(fresh, 1);
  GraphAllocator own;
  own.reserve(fresh, 2);
  EXPECT_GT(own.planned_bytes(), allocator.planned_bytes());  // the premise: best fit alone would not fit
  EXPECT_EQ(replayed, compute_with_inputs_at_half(fresh, own, fresh_logits));
}

TEST(CoreAllocator, RefusesAGraphLargerThanTheReservedOne) {
  Graph g(64);
  g.output(scale_of_input(g, 16));
  GraphAllocator allocator;
  allocator.reserve(g, 1);
  g.reset();
  g.output(scale_of_input(g, 1024));
  EXPECT_THROW(allocator.allocate(g), std::length_error);
}

// The llama block with liveness reuse and in-place ops gives bit-identical
// results to the same block with every intermediate kept (no reuse at all).
TEST(CoreAllocator, LlamaBlockWithReuseMatchesNoReuse) {
  Leaves leaves;
  const LlamaShape shape;
  LlamaBlock block(leaves, shape);
  for (int n_threads : {1, 3}) {
    for (int64_t n_tokens : {1, 7}) {
      std::vector<float> results[2];
      for (int keep_all = 0; keep_all < 2; ++keep_all) {
        Graph g(512);
        Tensor* out = block.build(g, n_tokens, 5);
        if (keep_all != 0) {
          for (Tensor* node : g.nodes()) node->is_output = true;
        }
        GraphAllocator allocator;
        allocator.reserve(g, n_threads);
        LlamaBlock::fill_inputs(g, 5);
        compute_graph(g, test_pool(), n_threads, allocator.work_buffer());
        const auto* values = static_cast<const float*>(out->data);
        results[keep_all].assign(values, values + out->element_count());
      }
      EXPECT_EQ(results[0], results[1]) << n_tokens << " tokens, " << n_threads << " threads";
    }
  }
}

// Random graphs of element-wise ops over shared, reshaped and transposed
// intermediates: with reuse and in-place placement they must compute exactly what
// they compute when every intermediate keeps its own memory.
TEST(CoreAllocator, RandomGraphsWithReuseMatchNoReuse) {
  std::mt19937 rng(99);
  int in_place_nodes = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<float> results[2];
    const auto seed = static_cast<uint32_t>(rng());
    for (int keep_all = 0; keep_all < 2; ++keep_all) {
      std::mt19937 pick(seed);
      auto any = [&](const std::vector<Tensor*>& from) { return from[pick() % from.size()]; };
      Graph g(256);
      std::vector<Tensor*> made = {g.input(GgmlType::F32, {8, 6}, "a"), g.input(GgmlType::F32, {8, 6}, "b")};
      for (int step = 0; step < 24; ++step) {
        Tensor* x = any(made);
        Tensor* y = any(made);
        switch (pick() % 8) {
          case 0: made.push_back(g.add(x, y)); break;
          case 1: made.push_back(g.swiglu(x, y)); break;
          case 6: made.push_back(g.geglu(x, y)); break;
          case 7: made.push_back(g.softcap(x, 0.5f)); break;
          case 2: made.push_back(g.scale(x, -1.5f)); break;
          case 3: made.push_back(g.rms_norm(x, 1e-5f)); break;
          case 4: made.push_back(g.reshape(g.scale(g.reshape(x, {6, 8}), 0.5f), {8, 6})); break;
          default: made.push_back(g.add(x, g.transpose(g.transpose(y)))); break;
        }
      }
      Tensor* result = made.back();
      for (int extra = 0; extra < 3; ++extra) result = g.add(result, any(made));
      g.output(result);
      if (keep_all != 0) {
        for (Tensor* node : g.nodes()) node->is_output = true;
      }
      GraphAllocator allocator;
      allocator.reserve(g, 2);
      for (Tensor* leaf : g.leafs()) {
        auto* values = static_cast<float*>(leaf->data);
        for (int64_t i = 0; i < leaf->element_count(); ++i) values[i] = std::cos(static_cast<float>(i) + leaf->name[0]);
      }
      compute_graph(g, test_pool(), 2, allocator.work_buffer());
      for (const Tensor* node : g.nodes()) {
        if (node->op != Op::View && node->src[0] != nullptr && node->data == node->src[0]->data) ++in_place_nodes;
      }
      const auto* values = static_cast<const float*>(result->data);
      results[keep_all].assign(values, values + result->element_count());
    }
    ASSERT_EQ(results[0], results[1]) << "trial " << trial;
  }
  EXPECT_GT(in_place_nodes, 40);
}

// With OpTimes, each computed node is counted once under its op (views are free).
TEST(CoreExecutor, ProfilingCountsEveryComputedNodeOnce) {
  Leaves leaves;
  LlamaBlock block(leaves, LlamaShape{});
  Graph g(512);
  block.build(g, 2, 3);
  GraphAllocator allocator;
  allocator.reserve(g, 2);
  LlamaBlock::fill_inputs(g, 3);
  OpTimes times;
  compute_graph(g, test_pool(), 2, allocator.work_buffer(), &times);
  EXPECT_EQ(times.calls[static_cast<int>(Op::MulMat)], 7u);
  EXPECT_EQ(times.calls[static_cast<int>(Op::Attention)], 1u);
  EXPECT_EQ(times.calls[static_cast<int>(Op::Copy)], 2u);
  EXPECT_EQ(times.calls[static_cast<int>(Op::View)], 0u);
  EXPECT_GT(times.seconds[static_cast<int>(Op::MulMat)], 0.0);
}

// Decode matmuls that share an input run without barriers between them; one
// that reads another's result, or whose output reuses memory another still
// reads, must wait. Repeated runs at 2-4 threads give exactly the one-thread
// result (each row's dot is computed the same way whichever thread owns it).
TEST(CoreExecutor, IndependentDecodeMatmulsMatchOneThread) {
  Leaves leaves;
  const int64_t k = 512, n = 1024;
  Tensor* w_a = leaves.random(GgmlType::Q8_0, {k, n});
  Tensor* w_b = leaves.random(GgmlType::Q4_0, {k, n});
  Tensor* w_c = leaves.random(GgmlType::Q8_0, {n, k});
  Tensor* w_d = leaves.random(GgmlType::Q4_K, {k, k});
  Graph g(64);
  Tensor* x = g.input(GgmlType::F32, {k, 1}, "x");
  Tensor* a = g.mul_mat(w_a, x);  // independent of b
  Tensor* b = g.mul_mat(w_b, x);
  Tensor* c = g.mul_mat(w_c, a);  // reads a: waits
  Tensor* d = g.mul_mat(w_d, x);  // independent of c, but may land in a's memory
  Tensor* e = g.mul_mat(w_c, g.add(a, b));
  Tensor* out = g.add(g.add(c, d), e);
  g.output(out);
  GraphAllocator allocator;
  allocator.reserve(g, kMaxTestThreads);
  // The input's memory is reused once it is read: filled before every run.
  const auto compute = [&](int n_threads) {
    auto* input = static_cast<float*>(x->data);
    for (int64_t i = 0; i < k; ++i) input[i] = std::sin(0.37f * static_cast<float>(i));
    compute_graph(g, test_pool(), n_threads, allocator.work_buffer());
  };
  compute(1);
  const auto* values = static_cast<const float*>(out->data);
  const std::vector<float> want(values, values + out->element_count());
  for (int n_threads = 2; n_threads <= kMaxTestThreads; ++n_threads) {
    for (int run = 0; run < 50; ++run) {
      compute(n_threads);
      const std::vector<float> got(values, values + out->element_count());
      ASSERT_EQ(got, want) << n_threads << " threads, run " << run;
    }
  }
}

TEST(CoreExecutor, RefusesMoreThreadsThanThePoolOrTheReservedWorkMemory) {
  Graph g(16);
  g.output(scale_of_input(g, 8));
  GraphAllocator allocator;
  allocator.reserve(g, 2);
  EXPECT_THROW(compute_graph(g, test_pool(), 3, allocator.work_buffer()), std::invalid_argument);
  ThreadPool two(2);
  GraphAllocator roomy;
  roomy.reserve(g, kMaxTestThreads);
  EXPECT_THROW(compute_graph(g, two, 3, roomy.work_buffer()), std::invalid_argument);
  EXPECT_NO_THROW(compute_graph(g, two, 2, roomy.work_buffer()));
}

// Plans (without computing) a block of Llama-2-7B's shape (GQA 32/8 heads) for
// a 512-token batch over a 4096-token context.
TEST(CoreAllocator, LlamaBlockPlanAtModelScaleIsSmallerThanTheNaiveSum) {
  Leaves leaves;
  const LlamaShape shape{4096, 32, 8, 11008, 4096};
  LlamaBlock block(leaves, shape, LlamaBlock::Contents::ShapeOnly);
  Graph g(512);
  const int64_t n_batch = 512;
  block.build(g, n_batch, shape.n_ctx - n_batch);
  GraphAllocator allocator;
  allocator.reserve(g, 4);
  std::printf("llama block (n_embd 4096, n_ff 11008, 512 tokens, 4096 context): "
              "planned %.1f MiB, naive sum %.1f MiB, work %.1f MiB\n",
              static_cast<double>(allocator.planned_bytes()) / 1048576.0,
              static_cast<double>(allocator.naive_bytes()) / 1048576.0,
              static_cast<double>(allocator.work_buffer().size) / 1048576.0);
  EXPECT_LT(allocator.planned_bytes() * 2, allocator.naive_bytes());
}

}  // namespace
}  // namespace peak::core::testing
