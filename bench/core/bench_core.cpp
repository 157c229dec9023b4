// Micro-benchmarks of the compute core: row ops, mul_mat through the op layer,
// decode-shaped fused attention over F16 / Q8_0 / Q4_0 KV caches, with and
// without a sliding window, and the per-graph cost of the executor itself.
//
//   build-core/bench/core/bench_core --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::core {

using kernels::GgmlType;
using kernels::kernels_for;
using kernels::kQ8_0KeyLaneRows;
using kernels::put_q8_0_key_lane;

namespace {

// Multi-threaded benchmarks report wall time (UseRealTime): the CPU time of the
// calling thread alone says little when a worker does half of the work.
constexpr int kThreads = 2;

ThreadPool& bench_pool() {
  static ThreadPool pool(kThreads);
  return pool;
}

// A leaf tensor with random contents in its own memory.
class BenchTensors {
 public:
  Tensor* random(GgmlType type, std::initializer_list<int64_t> ne) {
    Tensor* t = arena_.new_tensor(type, ne);
    auto memory = std::make_unique<AlignedBuffer>();
    memory->resize(t->byte_size());
    t->data = memory->data();
    memory_.push_back(std::move(memory));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(t->ne[0]));
    for (int64_t r = 0; r < t->row_count(); ++r) {
      for (float& v : row) v = uniform(rng_);
      kernels_for(type).from_float(row.data(), static_cast<char*>(t->data) + static_cast<size_t>(r) * t->nb[1],
                                   t->ne[0]);
    }
    return t;
  }

 private:
  TensorArena arena_{16};  // a benchmark makes at most a few leaves
  std::vector<std::unique_ptr<AlignedBuffer>> memory_;
  std::mt19937 rng_{7};
};

// Builds a one-output graph, allocates it and times compute_graph.
template <typename Build>
void time_graph(benchmark::State& state, int n_threads, Build build) {
  Graph graph(256);
  graph.output(build(graph));
  GraphAllocator allocator;
  allocator.reserve(graph, n_threads);
  for (Tensor* leaf : graph.leafs()) {
    if (leaf->is_input && leaf->type == GgmlType::I32) {
      auto* ids = static_cast<int32_t*>(leaf->data);
      for (int64_t i = 0; i < leaf->ne[0]; ++i) ids[i] = static_cast<int32_t>(100 + i);
    }
  }
  for (auto _ : state) compute_graph(graph, bench_pool(), n_threads, allocator.work_buffer());
}

void BM_RmsNorm(benchmark::State& state) {
  BenchTensors leaves;
  Tensor* x = leaves.random(GgmlType::F32, {4096, state.range(0)});
  time_graph(state, 1, [&](Graph& g) { return g.rms_norm(x, 1e-5f); });
}
BENCHMARK(BM_RmsNorm)->ArgName("tokens")->Arg(1)->Arg(32);

void BM_Rope(benchmark::State& state, RopeMode mode) {
  BenchTensors leaves;
  Tensor* x = leaves.random(GgmlType::F32, {128, 32, state.range(0)});
  const RopeParams rope{128, mode, 10000.0f, 1.0f};
  time_graph(state, 1, [&](Graph& g) {
    return g.rope(x, g.input(GgmlType::I32, {x->ne[2]}, "positions"), rope);
  });
}
BENCHMARK_CAPTURE(BM_Rope, normal, RopeMode::Normal)->ArgName("tokens")->Arg(1)->Arg(32);
BENCHMARK_CAPTURE(BM_Rope, neox, RopeMode::Neox)->ArgName("tokens")->Arg(1)->Arg(32);

// Weight x activations through the op layer (conversion to the dot partner,
// thread split, vec_dot / gemm): 4096 x 4096 weights, 1 token (decode) or 32.
void BM_MulMat(benchmark::State& state, GgmlType weight_type) {
  BenchTensors leaves;
  Tensor* w = leaves.random(weight_type, {4096, 4096});
  Tensor* x = leaves.random(GgmlType::F32, {4096, state.range(0)});
  time_graph(state, kThreads, [&](Graph& g) { return g.mul_mat(w, x); });
  state.counters["weight_GB/s"] = benchmark::Counter(
      static_cast<double>(w->byte_size()) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_MulMat, Q8_0, GgmlType::Q8_0)->ArgName("tokens")->Arg(1)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_MulMat, Q4_0, GgmlType::Q4_0)->ArgName("tokens")->Arg(1)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Swaps dimensions 1 and 2 of a contiguous [d, cells, heads] tensor in place.
Tensor* head_major(Tensor* t) {
  std::swap(t->ne[1], t->ne[2]);
  std::swap(t->nb[1], t->nb[2]);
  return t;
}

// Head-major keys as the KV cache keeps them: Q8_0 ones in lanes (cells a
// multiple of 16) on paths that score them there.
Tensor* cache_keys(BenchTensors& leaves, GgmlType type, int64_t cells) {
  Tensor* k = head_major(leaves.random(type, {128, cells, 8}));
  if (type != GgmlType::Q8_0 || kernels_for(type).gemm_key_lanes == nullptr) return k;
  const size_t row = k->nb[2];
  const auto* data = static_cast<const char*>(k->data);
  const std::vector<char> rows(data, data + row * static_cast<size_t>(cells * 8));
  for (int64_t h = 0; h < 8; ++h) {
    for (int64_t c = 0; c < cells; ++c) {
      put_q8_0_key_lane(k->row_ptr(h, c - c % kQ8_0KeyLaneRows), static_cast<int>(c % kQ8_0KeyLaneRows),
                        rows.data() + static_cast<size_t>(h * cells + c) * row, 128 / 32);
    }
  }
  k->key_lanes = true;
  return k;
}

// Decode: 1 query token, 32 heads (llama-3's group of 4) or 16 (qwen3's group
// of 2) over 8 kv heads, head_dim 128, n_kv = context; K and V head-major, as
// the KV cache holds them.
void BM_Attention(benchmark::State& state, GgmlType kv_type) {
  const int64_t n_kv = state.range(0);
  BenchTensors leaves;
  Tensor* q = leaves.random(GgmlType::F32, {128, state.range(2), 1});
  Tensor* k = cache_keys(leaves, kv_type, n_kv);
  Tensor* v = head_major(leaves.random(kv_type, {128, n_kv, 8}));
  time_graph(state, static_cast<int>(state.range(1)),
             [&](Graph& g) { return g.attention(q, k, v, {1.0f / std::sqrt(128.0f)}); });
  state.counters["kv_MB/s"] = benchmark::Counter(
      static_cast<double>(k->byte_size() + v->byte_size()) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate);
}
// 1 thread gives the kernels' cost alone; 2 threads the split over kv heads.
// Up to 4096 cells the cache fits in L3 (9 MB for Q8_0); 32768 cells (71 MB)
// stream it from memory, as a model's decode does (every layer's cache).
void attention_contexts(benchmark::internal::Benchmark* b) {
  b->ArgNames({"ctx", "threads", "q_heads"})->Unit(benchmark::kMicrosecond)->UseRealTime();
  for (int64_t q_heads : {32, 16}) {
    for (int64_t threads : {1, kThreads}) {
      for (int64_t ctx : {512, 2048, 4096, 32768}) b->Args({ctx, threads, q_heads});
    }
  }
}
BENCHMARK_CAPTURE(BM_Attention, F16, GgmlType::F16)->Apply(attention_contexts);
BENCHMARK_CAPTURE(BM_Attention, Q8_0, GgmlType::Q8_0)->Apply(attention_contexts);
BENCHMARK_CAPTURE(BM_Attention, Q4_0, GgmlType::Q4_0)->Apply(attention_contexts);

// Prefill at depth: 512 query tokens (16 heads over 8 kv heads, head_dim 128,
// qwen3-0.6b's attention), causal, after `depth` cells already in the cache.
// One thread: the tile products' cost alone; counter: multiply-adds of the
// scores and the weighted sums per second.
void BM_AttentionPrefill(benchmark::State& state, GgmlType kv_type) {
  constexpr int64_t kTokens = 512;
  const int64_t n_kv = state.range(0) + kTokens;
  BenchTensors leaves;
  Tensor* q = leaves.random(GgmlType::F32, {128, 16, kTokens});
  // K and V head-major, as the KV cache holds them: [128, n_kv, 8] viewed as
  // [128, 8, n_kv], so a head's rows are one stream.
  Tensor* k = cache_keys(leaves, kv_type, n_kv);
  Tensor* v = head_major(leaves.random(kv_type, {128, n_kv, 8}));
  time_graph(state, 1, [&](Graph& g) { return g.attention(q, k, v, {1.0f / std::sqrt(128.0f)}); });
  const double seen = static_cast<double>(kTokens) * static_cast<double>(n_kv - kTokens) +
                      static_cast<double>(kTokens) * static_cast<double>(kTokens + 1) / 2;
  state.counters["GMAC/s"] = benchmark::Counter(2 * 16 * 128 * seen * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_AttentionPrefill, F16, GgmlType::F16)->ArgName("depth")->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AttentionPrefill, Q8_0, GgmlType::Q8_0)->ArgName("depth")->Arg(4096)->Unit(benchmark::kMillisecond);

// Decode over a long F16 cache with a sliding window (gemma's local layers)
// against the same cache without one: with the window only its cells are
// read, so the time should follow the window, not the cache.
void BM_AttentionWindow(benchmark::State& state) {
  const int64_t n_kv = state.range(0);
  BenchTensors leaves;
  Tensor* q = leaves.random(GgmlType::F32, {128, 32, 1});
  Tensor* k = leaves.random(GgmlType::F16, {128, 8, n_kv});
  Tensor* v = leaves.random(GgmlType::F16, {128, 8, n_kv});
  AttentionParams params;
  params.scale = 1.0f / std::sqrt(128.0f);
  params.window = state.range(1);
  time_graph(state, static_cast<int>(state.range(2)), [&](Graph& g) { return g.attention(q, k, v, params); });
}
BENCHMARK(BM_AttentionWindow)
    ->ArgNames({"ctx", "window", "threads"})
    ->Args({32768, 0, 1})->Args({32768, 512, 1})->Args({4096, 512, 1})
    ->Args({32768, 0, kThreads})->Args({32768, 512, kThreads})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

// The executor's own cost: 100 nodes that do next to nothing (scale one float),
// so the time is the wake-up plus 99 barriers (none with 1 thread).
void BM_EmptyGraph100Nodes(benchmark::State& state) {
  BenchTensors leaves;
  Tensor* x = leaves.random(GgmlType::F32, {1});
  time_graph(state, static_cast<int>(state.range(0)), [&](Graph& g) {
    Tensor* cur = x;
    for (int i = 0; i < 100; ++i) cur = g.scale(cur, 1.0f);
    return cur;
  });
}
BENCHMARK(BM_EmptyGraph100Nodes)->ArgName("threads")->Arg(1)->Arg(kThreads)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace peak::core
