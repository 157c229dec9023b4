// Copy with conversion: F32 rows written into another tensor's memory in its
// type, e.g. the keys and values of a batch into their KV cache slots in F16,
// Q8_0 or Q4_0.
#include "core/ops.h"
#include "kernels/blocks.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::core {

using kernels::BlockQ8_0;
using kernels::kernels_for;
using kernels::kQ8_0KeyLaneMaxBlocks;
using kernels::RowFromFloatFn;

// node: the destination (memory of src1), same ne[0] and element count as the
// F32 source src0; rows are matched in flat order. Keys in lanes
// (Tensor::key_lanes) are quantized to a row, then written into its lane.
void compute_copy(const ComputeParams& params, Tensor& node) {
  const Tensor& src = *node.src[0];
  const RowFromFloatFn from_float = kernels_for(node.type).from_float;
  const int64_t n = node.ne[0];
  BlockQ8_0 lane_row[kQ8_0KeyLaneMaxBlocks];
  const Range rows = thread_share(node.row_count(), params);
  for (int64_t row = rows.begin; row < rows.end; ++row) {
    const RowIndex from = unflatten_row(src, row);
    const RowIndex to = unflatten_row(node, row);
    const auto* in = reinterpret_cast<const float*>(src.row_ptr(from.i1, from.i2, from.i3));
    char* out = node.row_ptr(to.i1, to.i2, to.i3);
    if (node.key_lanes) {
      from_float(in, lane_row, n);
      put_key_lane_row(node, out, lane_row);
    } else {
      from_float(in, out, n);
    }
  }
}

}  // namespace peak::core
