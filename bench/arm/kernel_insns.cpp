// kernel_insns: runs one kernel on one shape a given number of times, on the
// active path (PEAK_ISA lowers it), and nothing else. Under the qemu-user
// instruction counter (../shared/tools/qemu-insn), two runs that differ only in
// the repetition count give the instructions of one call, exactly; insn_count.sh
// in this folder does that for every matmul shape of a model.
//
//   kernel_insns gemm TYPE K N M REPS [stored]
//     weights TYPE [K, N] (N rows of K elements; repacked as the model loader
//     would when the path repacks TYPE and N is a multiple of 16, unless
//     `stored`: the loader never repacks a tied output, get_rows reads it) times M
//     activation rows, already converted to TYPE's dot partner: the work of one
//     mul_mat after its conversion phase, on one thread
//   kernel_insns convert TYPE K M REPS
//     M float rows of K elements converted to TYPE's dot partner (mul_mat's
//     first phase)
//
// The data is valid blocks of the type (one quantized row, copied to every
// row) so no path meets NaN or out-of-range codes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ggml_type.h"
#include "kernels/kernels.h"

namespace {

using peak::kernels::active_isa;
using peak::kernels::ggml_row_bytes;
using peak::kernels::ggml_type_from_name;
using peak::kernels::ggml_type_name;
using peak::kernels::ggml_type_traits;
using peak::kernels::GgmlType;
using peak::kernels::isa_name;
using peak::kernels::kernel_path_for;
using peak::kernels::kernels_for;
using peak::kernels::kRepackRows;
using peak::kernels::RowFromFloatFn;
using peak::kernels::TypeKernels;

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kernel_insns: %s\n"
               "usage: kernel_insns gemm TYPE K N M REPS [stored]\n"
               "       kernel_insns convert TYPE K M REPS\n",
               why);
  std::exit(2);
}

int64_t positive(const char* text, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0 || v > (int64_t{1} << 31)) usage((std::string(what) + " must be a positive integer").c_str());
  return v;
}

// Deterministic values in [-1, 1) with some spread between rows.
std::vector<float> pseudo_random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

size_t row_bytes(GgmlType t, int64_t k) { return ggml_row_bytes(static_cast<uint32_t>(t), static_cast<uint64_t>(k)); }

// `rows` rows of `k` elements of `t`: one row quantized, copied to the others.
std::vector<uint8_t> quantized_rows(GgmlType t, int64_t k, int64_t rows, uint32_t seed) {
  const TypeKernels& kernels = kernels_for(t);
  if (kernels.from_float == nullptr) usage("this type cannot be written");
  const size_t bytes = row_bytes(t, k);
  std::vector<uint8_t> out(bytes * static_cast<size_t>(rows));
  const std::vector<float> source = pseudo_random_floats(static_cast<size_t>(k), seed);
  kernels.from_float(source.data(), out.data(), k);
  for (int64_t r = 1; r < rows; ++r) std::memcpy(out.data() + bytes * static_cast<size_t>(r), out.data(), bytes);
  return out;
}

GgmlType parse_type(const char* name, int64_t k) {
  GgmlType t;
  if (!ggml_type_from_name(name, &t)) usage("unknown type");
  const uint32_t block = ggml_type_traits(static_cast<uint32_t>(t))->block_elems;
  if (k % block != 0) usage("K must be a multiple of the type's block size");
  return t;
}

int run_gemm(GgmlType t, int64_t k, int64_t n, int64_t m, int64_t reps, bool stored_layout) {
  const TypeKernels& kernels = kernels_for(t);
  if (kernels.vec_dot == nullptr) usage("this type has no dot product");
  const GgmlType partner = kernels.dot_partner;
  std::vector<uint8_t> weights = quantized_rows(t, k, n, 1);
  const bool repacked = !stored_layout && kernels.repack != nullptr && n % kRepackRows == 0;
  if (repacked) {
    std::vector<uint8_t> stored = weights;
    kernels.repack(stored.data(), weights.data(), k, n);
  }
  const size_t partner_bytes = partner == GgmlType::F32 ? static_cast<size_t>(k) * sizeof(float) : row_bytes(partner, k);
  std::vector<uint8_t> activations(partner_bytes * static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) {
    const std::vector<float> row = pseudo_random_floats(static_cast<size_t>(k), static_cast<uint32_t>(r) + 7);
    uint8_t* dst = activations.data() + partner_bytes * static_cast<size_t>(r);
    if (partner == GgmlType::F32) {
      std::memcpy(dst, row.data(), partner_bytes);
    } else {
      kernels_for(partner).from_float(row.data(), dst, k);
    }
  }
  std::vector<float> out(static_cast<size_t>(n * m));
  const size_t w_stride = row_bytes(t, k);
  for (int64_t i = 0; i < reps; ++i) {
    if (repacked) {
      kernels.gemm_repacked(k, weights.data(), w_stride, n, activations.data(), partner_bytes, m, out.data(),
                            static_cast<size_t>(n));
    } else if (kernels.gemm != nullptr) {
      kernels.gemm(k, weights.data(), w_stride, n, activations.data(), partner_bytes, m, out.data(),
                   static_cast<size_t>(n));
    } else {
      for (int64_t row = 0; row < n; ++row) {
        for (int64_t col = 0; col < m; ++col) {
          kernels.vec_dot(k, &out[static_cast<size_t>(col * n + row)], weights.data() + w_stride * static_cast<size_t>(row),
                          activations.data() + partner_bytes * static_cast<size_t>(col));
        }
      }
    }
  }
  std::printf("gemm %s [%lld, %lld] x %lld rows on %s%s: out[0] = %g\n", ggml_type_name(static_cast<uint32_t>(t)),
              static_cast<long long>(k), static_cast<long long>(n), static_cast<long long>(m),
              isa_name(kernel_path_for(t)), repacked ? ", repacked" : "", static_cast<double>(out[0]));
  return 0;
}

int run_convert(GgmlType t, int64_t k, int64_t m, int64_t reps) {
  const GgmlType partner = kernels_for(t).dot_partner;
  if (partner == GgmlType::F32) usage("this type multiplies float activations: nothing to convert");
  const std::vector<float> rows = pseudo_random_floats(static_cast<size_t>(k * m), 3);
  const size_t bytes = row_bytes(partner, k);
  std::vector<uint8_t> out(bytes * static_cast<size_t>(m));
  const RowFromFloatFn from_float = kernels_for(partner).from_float;
  for (int64_t i = 0; i < reps; ++i) {
    for (int64_t r = 0; r < m; ++r) from_float(rows.data() + k * r, out.data() + bytes * static_cast<size_t>(r), k);
  }
  std::printf("convert %lld rows of %lld to %s on %s: byte[0] = %d\n", static_cast<long long>(m),
              static_cast<long long>(k), ggml_type_name(static_cast<uint32_t>(partner)), isa_name(active_isa()),
              out[0]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("missing mode");
  const std::string mode = argv[1];
  if (mode == "gemm") {
    if (argc != 7 && !(argc == 8 && std::strcmp(argv[7], "stored") == 0)) usage("gemm takes TYPE K N M REPS [stored]");
    const int64_t k = positive(argv[3], "K");
    return run_gemm(parse_type(argv[2], k), k, positive(argv[4], "N"), positive(argv[5], "M"), positive(argv[6], "REPS"),
                    argc == 8);
  }
  if (mode == "convert") {
    if (argc != 6) usage("convert takes TYPE K M REPS");
    const int64_t k = positive(argv[3], "K");
    return run_convert(parse_type(argv[2], k), k, positive(argv[4], "M"), positive(argv[5], "REPS"));
  }
  usage("unknown mode");
}
