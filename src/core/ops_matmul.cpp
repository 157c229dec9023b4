// Ops that read weights of any type through the kernels interface: get_rows
// (embedding lookup, dequantizing rows) and mul_mat.
#include <cstring>

#include "core/ops.h"
#include "kernels/blocks.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::core {

using kernels::BlockQ8_0;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::kQ8_0KeyLaneMaxBlocks;
using kernels::kRepackRows;
using kernels::RowFromFloatFn;
using kernels::RowToFloatFn;
using kernels::TypeKernels;

// node F32 [n, k]; src0 table [n, rows] of any type, or keys in lanes
// (Tensor::key_lanes, read out of their lanes first); src1 I32 ids [k].
void compute_get_rows(const ComputeParams& params, Tensor& node) {
  const Tensor& table = *node.src[0];
  const auto* ids = static_cast<const int32_t*>(node.src[1]->data);
  const RowToFloatFn to_float = kernels_for(table.type).to_float;
  BlockQ8_0 lane_row[kQ8_0KeyLaneMaxBlocks];
  const Range rows = thread_share(node.ne[1], params);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    float* out = f32_row(node, {r, 0, 0});
    const int32_t id = ids[r];
    if (id < 0 || id >= table.ne[1]) {
      // Token ids are validated before they reach a graph; a stray one must
      // still not read outside the table.
      std::memset(out, 0, static_cast<size_t>(node.ne[0]) * sizeof(float));
      continue;
    }
    if (table.key_lanes) {
      get_key_lane_row(table, table.row_ptr(id), lane_row);
      to_float(lane_row, out, node.ne[0]);
    } else {
      to_float(table.row_ptr(id), out, node.ne[0]);
    }
  }
}

bool converts_privately(const Tensor& node) { return node.src[1]->row_count() <= kPrivateConversionRows; }

namespace {

// The widest row packing of the kernels, and the row groups of repacked weights.
constexpr int64_t kWeightRowGranule = 16;
static_assert(kWeightRowGranule % kRepackRows == 0, "threads must split repacked weights between row groups");

// Bytes of `rows` rows of k elements converted to `weight`'s dot partner, or 0
// when the activations are used as they are (F32).
size_t partner_bytes(GgmlType weight, int64_t k, int64_t rows) {
  const GgmlType partner = kernels_for(weight).dot_partner;
  if (partner == GgmlType::F32) return 0;
  return static_cast<size_t>(k / type_block_elements(partner)) * type_block_bytes(partner) * static_cast<size_t>(rows);
}

// Bytes of one copy of the converted activations.
size_t converted_bytes(const Tensor& node) {
  const Tensor& x = *node.src[1];
  return round_up_to_cache_line(partner_bytes(node.src[0]->type, x.ne[0], x.row_count()));
}

// Per thread, mul_mat_low_rank's scratch beside w's converted activations: x
// as a's partner, then a · x as floats [rank, m].
size_t low_rank_bytes(const Tensor& node) {
  const Tensor& x = *node.src[1];
  const Tensor& a = *node.src[2];
  return round_up_to_cache_line(partner_bytes(a.type, x.ne[0], x.ne[1])) +
         round_up_to_cache_line(static_cast<size_t>(a.ne[1] * x.ne[1]) * sizeof(float));
}

bool low_rank(const Tensor& node) { return node.params.i[0] == kMulMatLowRank; }

// Converts the m rows of F32 [k, m] at x (row stride x_stride bytes) to
// `weight`'s dot partner at dst; returns the rows to multiply and their stride.
struct PartnerRows {
  const char* rows;
  size_t stride;
};
PartnerRows to_partner(GgmlType weight, const char* x, size_t x_stride, int64_t k, int64_t m, char* dst) {
  const GgmlType partner = kernels_for(weight).dot_partner;
  if (partner == GgmlType::F32) return {x, x_stride};
  const size_t row_bytes = partner_bytes(weight, k, 1);
  const RowFromFloatFn from_float = kernels_for(partner).from_float;
  for (int64_t row = 0; row < m; ++row) {
    from_float(reinterpret_cast<const float*>(x + static_cast<size_t>(row) * x_stride),
               dst + static_cast<size_t>(row) * row_bytes, k);
  }
  return {dst, row_bytes};
}

// out[col * out_stride + r] = w_row(r) · y_col for rows [0, n_rows) of w from
// w_rows (row stride w_stride bytes, as stored, or repacked when `repacked`)
// and the m partner rows y.
void multiply(const TypeKernels& kernels, int64_t k, const char* w_rows, size_t w_stride, int64_t n_rows, bool repacked,
              PartnerRows y, int64_t m, float* out, size_t out_stride) {
  if (repacked) {  // rows start at multiples of 16 (kWeightRowGranule)
    kernels.gemm_repacked(k, w_rows, w_stride, n_rows, y.rows, y.stride, m, out, out_stride);
  } else if (kernels.gemm != nullptr) {
    kernels.gemm(k, w_rows, w_stride, n_rows, y.rows, y.stride, m, out, out_stride);
  } else {
    for (int64_t row = 0; row < n_rows; ++row) {
      const char* w_row = w_rows + static_cast<size_t>(row) * w_stride;
      for (int64_t col = 0; col < m; ++col) {
        kernels.vec_dot(k, out + static_cast<size_t>(col) * out_stride + row, w_row,
                        y.rows + static_cast<size_t>(col) * y.stride);
      }
    }
  }
}

// mul_mat_low_rank's update of this thread's rows [rows.begin, rows.end) of
// out [n, m] (row stride out_stride floats): out += scale · b · (a · x), with
// a · x formed by this thread alone (all rank rows) from x as a's partner, and
// b · (a · x) as the sum of b_rows' rows weighted by it.
void add_low_rank(const Tensor& node, Range rows, char* scratch, float* out, size_t out_stride) {
  const Tensor& x = *node.src[1];
  const Tensor& a = *node.src[2];
  const Tensor& b_rows = *node.src[3];
  const int64_t k = x.ne[0];
  const int64_t m = x.ne[1];
  const int64_t rank = a.ne[1];
  auto* ax = reinterpret_cast<float*>(scratch + round_up_to_cache_line(partner_bytes(a.type, k, m)));

  // a · x [rank, m], scaled (as mul_mat(a, x, scale, nullptr) forms it).
  const PartnerRows xa = to_partner(a.type, static_cast<const char*>(x.data), x.nb[1], k, m, scratch);
  multiply(kernels_for(a.type), k, static_cast<const char*>(a.data), a.nb[1], rank, false, xa, m, ax,
           static_cast<size_t>(rank));
  const float scale = node.params.f[0];
  for (int64_t i = 0; i < rank * m; ++i) ax[i] *= scale;

  const char* first = static_cast<const char*>(b_rows.data) + static_cast<size_t>(rows.begin) * b_rows.nb[0];
  kernels_for(b_rows.type)
      .weighted_sum(rows.end - rows.begin, first, b_rows.nb[1], rank, ax, static_cast<size_t>(rank), m, out,
                    out_stride);
}

}  // namespace

size_t mul_mat_work_size(const Tensor& node, int n_threads) {
  const size_t per_copy = converted_bytes(node) + (low_rank(node) ? low_rank_bytes(node) : 0);
  return per_copy * static_cast<size_t>(converts_privately(node) ? n_threads : 1);
}

// node F32 [n, m, c2, c3] = w [k, n, b2, b3] · x F32 [k, m, c2, c3], w batches
// repeated over x's. Phase 1 converts every row of x to w's dot partner once (so
// each weight row is dotted against ready-made partner rows), shared between the
// threads, or by each thread for itself when there are only a few rows; phase 2
// splits the weight rows across threads, in multiples of 16 rows, and calls gemm
// (also for one column: the kernels then stream several weight rows per
// activation load), or vec_dot per pair for types without gemm. A low-rank
// update (2-D, few rows, so converted privately) is added to each thread's rows.
void compute_mul_mat(const ComputeParams& params, Tensor& node) {
  const Tensor& w = *node.src[0];
  const Tensor& x = *node.src[1];
  const TypeKernels& kernels = kernels_for(w.type);
  const int64_t k = w.ne[0];
  const int64_t m = x.ne[1];
  const size_t partner_row_bytes = partner_bytes(w.type, k, 1);
  const bool convert = partner_row_bytes != 0;
  const bool privately = converts_privately(node);
  // [partner rows of k, m * c2 * c3], one copy per thread when converted privately.
  // Private copies sit in equal shares of the whole buffer, the same for every
  // node: the executor lets a thread start the next independent matmul while
  // another still reads its copy for this one, so a thread's share must not
  // depend on the node (the buffer holds at least n_threads of any node's copy).
  const size_t private_share = params.work_size / static_cast<size_t>(params.n_threads) / kCacheLine * kCacheLine;
  char* converted = static_cast<char*>(params.work) +
                    (privately ? private_share * static_cast<size_t>(params.thread_index) : 0);

  if (convert) {
    const RowFromFloatFn from_float = kernels_for(kernels.dot_partner).from_float;
    const Range rows = privately ? Range{0, x.row_count()} : thread_share(x.row_count(), params);
    for (int64_t row = rows.begin; row < rows.end; ++row) {
      const RowIndex r = unflatten_row(x, row);
      from_float(reinterpret_cast<const float*>(x.row_ptr(r.i1, r.i2, r.i3)),
                 converted + static_cast<size_t>(row) * partner_row_bytes, k);
    }
    if (!privately) params.barrier();
  }

  // Read once: the repacking may finish during the call (core::Tensor).
  const char* repacked = static_cast<const char*>(w.repacked_bytes());
  const bool scaled_sum = node.params.i[0] == kMulMatScaledSum;
  const int64_t repeat2 = x.ne[2] / w.ne[2];
  const int64_t repeat3 = x.ne[3] / w.ne[3];
  const Range weight_rows = thread_share(w.ne[1], params, kWeightRowGranule);
  if (weight_rows.begin == weight_rows.end) return;
  for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
      const char* w_rows = repacked != nullptr ? repacked + static_cast<size_t>(weight_rows.begin) * w.nb[1]
                                               : w.row_ptr(weight_rows.begin, i2 / repeat2, i3 / repeat3);
      const PartnerRows y =
          convert ? PartnerRows{converted + static_cast<size_t>((i3 * x.ne[2] + i2) * m) * partner_row_bytes,
                                partner_row_bytes}
                  : PartnerRows{x.row_ptr(0, i2, i3), x.nb[1]};
      float* out = f32_row(node, {0, i2, i3}) + weight_rows.begin;
      const size_t out_stride = node.nb[1] / sizeof(float);
      multiply(kernels, k, w_rows, w.nb[1], weight_rows.end - weight_rows.begin, repacked != nullptr, y, m, out,
               out_stride);
      if (low_rank(node)) {
        add_low_rank(node, weight_rows, converted + converted_bytes(node), out, out_stride);
      } else if (scaled_sum) {
        // This thread's rows of every column: out = scale * out + addend.
        const float scale = node.params.f[0];
        const Tensor* addend = node.src[2];
        for (int64_t col = 0; col < m; ++col) {
          float* o = out + static_cast<size_t>(col) * out_stride;
          const float* c = addend ? f32_row(*addend, {col, i2, i3}) + weight_rows.begin : nullptr;
          for (int64_t r = 0; r < weight_rows.end - weight_rows.begin; ++r) o[r] = o[r] * scale + (c ? c[r] : 0.0f);
        }
      }
    }
  }
}

}  // namespace peak::core
