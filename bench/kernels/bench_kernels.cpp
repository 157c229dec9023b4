// Kernel micro-benchmarks, single thread.
//
//   read_bandwidth/<MiB>         streams a buffer much larger than L2/L3 with wide
//                                loads: the memory bandwidth a GEMV can hope for
//   gemv/<type>/<path>/<K>x<N>   decode: one activation row against N weight rows
//                                of K elements through GemmFn with one activation
//                                row; counters: weight GB/s streamed, GOP/s
//   vec_dot_rows/<type>/...      the same product as N vec_dot calls
//   gemv_repacked/<type>/...     the same product with the weights repacked at
//                                load time (TypeKernels::repack), on paths that do
//   gemm/<type>/<path>/<K>x<N>/512  prefill: 512 activation rows through GemmFn;
//                                counters: GOP/s (2 * K * N * 512 per iteration),
//                                weight GB/s streamed;
//                                also on 8192x16384 for Q4_0/Q8_0 (best path)
//   gemm_repacked/<type>/...     the same with repacked weights
//   gemm_rows/<type>/<path>/8192x16384/<m>  decode of m = 1, 2, 4, 8 sequences:
//                                m activation rows through GemmFn; at the
//                                bandwidth roof the time stays that of one row;
//                                /threads:2: each of two threads multiplies its
//                                half of the weight rows, as the core splits them
//   gemm_rows_repacked/...       the same with repacked weights (Q4_0), as a
//                                model multiplies them
//   quantize/<type>/<path>       activation quantization (from_float) of 512 rows
//                                of 4096 floats; counter: input GB/s
//
// Shapes: 2048x2048, 2048x8192 and 8192x2048 (K x N) as in a 1-2B model's
// attention and FFN, plus gemv on 8192x16384 (larger than L3) for Q4_0, Q8_0,
// Q4_K and Q6_K.
#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"

namespace peak::kernels {
namespace {

// ---------------------------------------------------------------- memory probe

#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t stream_sum_avx2(const uint8_t* p, size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

uint64_t stream_sum(const uint8_t* p, size_t bytes) {
#if defined(__x86_64__)
  if (cpu_has_isa(Isa::Avx2)) return stream_sum_avx2(p, bytes);
#endif
  uint64_t a[8] = {};
  const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
  for (size_t i = 0; i + 8 <= bytes / 8; i += 8) {
    for (int j = 0; j < 8; ++j) a[j] += w[i + static_cast<size_t>(j)];
  }
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

void read_bandwidth(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> buf(static_cast<uint8_t*>(std::aligned_alloc(64, bytes)));
  std::memset(buf.get(), 1, bytes);  // fault every page in before timing
  for (auto _ : state) benchmark::DoNotOptimize(stream_sum(buf.get(), bytes));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

// ---------------------------------------------------------------- operands

size_t row_bytes(GgmlType t, int64_t n) {
  return static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(t), static_cast<uint64_t>(n)));
}

// `rows` rows of `type`: 64 distinct random rows quantized with the scalar
// reference, repeated (quantizing every row of a large matrix with the search
// quantizers would dominate the run time; the kernels cannot tell).
std::vector<uint8_t> make_rows(GgmlType type, int64_t k, int64_t rows, uint32_t seed) {
  const int64_t distinct = rows < 64 ? rows : 64;
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> src(static_cast<size_t>(k));
  const size_t rb = row_bytes(type, k);
  std::vector<uint8_t> out(rb * static_cast<size_t>(rows));
  const TypeKernels& ref = kernels_for_isa(type, Isa::Scalar);
  for (int64_t r = 0; r < distinct; ++r) {
    for (float& v : src) v = dist(rng);
    ref.from_float(src.data(), out.data() + static_cast<size_t>(r) * rb, k);
  }
  for (int64_t r = distinct; r < rows; ++r) {
    std::memcpy(out.data() + static_cast<size_t>(r) * rb, out.data() + static_cast<size_t>(r % distinct) * rb, rb);
  }
  return out;
}

struct Shape {
  int64_t k, n;
};

// The weight rows, repacked when asked (the path must have a repacked layout).
std::vector<uint8_t> weight_rows(const TypeKernels& kern, GgmlType type, Shape s, bool repacked) {
  std::vector<uint8_t> w = make_rows(type, s.k, s.n, 1);
  if (!repacked) return w;
  std::vector<uint8_t> packed(w.size());
  kern.repack(w.data(), packed.data(), s.k, s.n);
  return packed;
}

enum class GemvVia { Gemm, VecDot, Repacked };

void gemv(benchmark::State& state, GgmlType type, Isa isa, Shape s, GemvVia via) {
  const TypeKernels& kern = kernels_for_isa(type, isa);
  const GgmlType partner = kern.dot_partner;
  const std::vector<uint8_t> w = weight_rows(kern, type, s, via == GemvVia::Repacked);
  const std::vector<uint8_t> x = make_rows(partner, s.k, 1, 2);
  std::vector<float> out(static_cast<size_t>(s.n));
  const size_t rb = row_bytes(type, s.k);
  for (auto _ : state) {
    if (via == GemvVia::VecDot) {
      for (int64_t r = 0; r < s.n; ++r) kern.vec_dot(s.k, &out[static_cast<size_t>(r)], w.data() + static_cast<size_t>(r) * rb, x.data());
    } else {
      (via == GemvVia::Repacked ? kern.gemm_repacked : kern.gemm)(s.k, w.data(), rb, s.n, x.data(),
                                                                  row_bytes(partner, s.k), 1, out.data(),
                                                                  static_cast<size_t>(s.n));
    }
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  state.counters["GOP/s"] = benchmark::Counter(2.0 * static_cast<double>(s.k * s.n),
                                               benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// With several benchmark threads each multiplies its own share of the N
// weight rows (whole groups of 16, as the core splits a matrix).
void gemm(benchmark::State& state, GgmlType type, Isa isa, Shape whole, int64_t batch, bool repacked) {
  const int64_t share = (whole.n / 16 + state.threads() - 1) / state.threads() * 16;
  const int64_t first = share * state.thread_index();
  const Shape s{whole.k, first + share < whole.n ? share : whole.n - first};
  const TypeKernels& kern = kernels_for_isa(type, isa);
  const GgmlType partner = kern.dot_partner;
  const std::vector<uint8_t> w = weight_rows(kern, type, s, repacked);
  const std::vector<uint8_t> x = make_rows(partner, s.k, batch, 2);
  std::vector<float> out(static_cast<size_t>(s.n * batch));
  for (auto _ : state) {
    (repacked ? kern.gemm_repacked : kern.gemm)(s.k, w.data(), row_bytes(type, s.k), s.n, x.data(), row_bytes(partner, s.k), batch, out.data(),
              static_cast<size_t>(s.n));
    benchmark::ClobberMemory();
  }
  state.counters["GOP/s"] = benchmark::Counter(2.0 * static_cast<double>(s.k * s.n * batch),
                                               benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  // The weights are read once per call however many rows there are.
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void quantize(benchmark::State& state, GgmlType type, Isa isa) {
  const int64_t k = 4096, rows = 512;
  const TypeKernels& kern = kernels_for_isa(type, isa);
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> src(static_cast<size_t>(k * rows));
  for (float& v : src) v = dist(rng);
  std::vector<uint8_t> dst(row_bytes(type, k) * static_cast<size_t>(rows));
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) kern.from_float(src.data() + r * k, dst.data() + static_cast<size_t>(r) * row_bytes(type, k), k);
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(src.size() * sizeof(float)),
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

std::string type_name(GgmlType t) { return ggml_type_name(static_cast<uint32_t>(t)); }
std::string shape_name(Shape s) { return std::to_string(s.k) + "x" + std::to_string(s.n); }

int register_all() {
  benchmark::RegisterBenchmark("read_bandwidth", read_bandwidth)->Arg(1024)->Unit(benchmark::kMillisecond);
  const Shape shapes[] = {{2048, 2048}, {2048, 8192}, {8192, 2048}};
  const GgmlType priority[] = {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16};
  const GgmlType others[] = {GgmlType::F32,  GgmlType::BF16, GgmlType::Q4_1, GgmlType::Q5_0,  GgmlType::Q5_1,
                             GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q5_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};
  std::vector<Isa> paths;
  for (int i = 0; i < kIsaCount; ++i) {
    if (cpu_has_isa(static_cast<Isa>(i))) paths.push_back(static_cast<Isa>(i));
  }
  const Isa best = best_cpu_isa();
  auto add_gemv = [](GgmlType t, Isa isa, Shape s) {
    const std::string suffix = type_name(t) + "/" + isa_name(isa) + "/" + shape_name(s);
    benchmark::RegisterBenchmark(("gemv/" + suffix).c_str(), gemv, t, isa, s, GemvVia::Gemm)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("vec_dot_rows/" + suffix).c_str(), gemv, t, isa, s, GemvVia::VecDot)
        ->Unit(benchmark::kMicrosecond);
    if (kernels_for_isa(t, isa).repack != nullptr) {
      benchmark::RegisterBenchmark(("gemv_repacked/" + suffix).c_str(), gemv, t, isa, s, GemvVia::Repacked)
          ->Unit(benchmark::kMicrosecond);
    }
  };
  auto add_gemm = [](GgmlType t, Isa isa, Shape s) {
    const std::string suffix = type_name(t) + "/" + isa_name(isa) + "/" + shape_name(s) + "/512";
    benchmark::RegisterBenchmark(("gemm/" + suffix).c_str(), gemm, t, isa, s, int64_t{512}, false)
        ->Unit(benchmark::kMillisecond);
    if (kernels_for_isa(t, isa).repack != nullptr) {
      benchmark::RegisterBenchmark(("gemm_repacked/" + suffix).c_str(), gemm, t, isa, s, int64_t{512}, true)
          ->Unit(benchmark::kMillisecond);
    }
  };
  for (GgmlType t : priority) {
    for (Isa isa : paths) {
      if (isa == Isa::Scalar) continue;  // minutes per shape; run with a filter when wanted
      for (const Shape& s : shapes) add_gemv(t, isa, s);
    }
  }
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) add_gemv(t, best, {8192, 16384});
  for (GgmlType t : others) add_gemv(t, best, {2048, 8192});
  for (GgmlType t : priority) {
    for (Isa isa : paths) {
      if (isa == Isa::Scalar) continue;
      for (const Shape& s : shapes) add_gemm(t, isa, s);
    }
  }
  for (GgmlType t : others) add_gemm(t, best, {2048, 2048});
  // The same matrix as the DRAM-bound GEMV: GEMM against GEMV where the GEMV
  // has to stream from memory.
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0}) add_gemm(t, best, {8192, 16384});
  // Decode steps of 1, 2, 4 and 8 sequences on the DRAM-bound matrix, on one
  // thread and on two, on the best path and (x86-64) on AVX2.
  std::vector<Isa> decode_paths{best};
  if (best != Isa::Avx2 && cpu_has_isa(Isa::Avx2)) decode_paths.push_back(Isa::Avx2);
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    for (Isa isa : decode_paths) {
      for (const bool repacked : {false, true}) {
        if (repacked && kernels_for_isa(t, isa).repack == nullptr) continue;
        for (int threads : {1, 2}) {
          for (int64_t batch : {1, 2, 4, 8}) {
            const std::string name = std::string(repacked ? "gemm_rows_repacked/" : "gemm_rows/") + type_name(t) + "/" +
                                     isa_name(isa) + "/8192x16384/" + std::to_string(batch);
            auto* b = benchmark::RegisterBenchmark(name.c_str(), gemm, t, isa, Shape{8192, 16384}, batch, repacked)
                          ->Unit(benchmark::kMicrosecond);
            if (threads > 1) b->Threads(threads)->UseRealTime();
          }
        }
      }
    }
  }
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_K}) {
    for (Isa isa : paths) {
      const std::string name = "quantize/" + type_name(t) + "/" + isa_name(isa);
      benchmark::RegisterBenchmark(name.c_str(), quantize, t, isa)->Unit(benchmark::kMillisecond);
    }
  }
  // Scalar references, one shape each.
  for (GgmlType t : priority) {
    add_gemv(t, Isa::Scalar, {2048, 2048});
  }
  return 0;
}

const int registered = register_all();

}  // namespace
}  // namespace peak::kernels
