#include "core/ops.h"

namespace peak::core {

void compute_op(const ComputeParams& params, Tensor& node) {
  switch (node.op) {
    case Op::None:
    case Op::View:
      return;
    case Op::GetRows: return compute_get_rows(params, node);
    case Op::MulMat: return compute_mul_mat(params, node);
    case Op::Add:
    case Op::Scale:
    case Op::SwiGlu:
    case Op::GeGlu:
    case Op::Gelu:
    case Op::Softcap:
      return compute_element_wise(params, node);
    case Op::RmsNorm: return compute_rms_norm(params, node);
    case Op::LayerNorm: return compute_layer_norm(params, node);
    case Op::MeanRows: return compute_mean_rows(params, node);
    case Op::Rope: return compute_rope(params, node);
    case Op::Copy: return compute_copy(params, node);
    case Op::Attention: return compute_attention(params, node);
  }
}

size_t op_work_size(const Tensor& node, int n_threads) {
  switch (node.op) {
    case Op::MulMat: return mul_mat_work_size(node, n_threads);
    case Op::Rope: return rope_work_size(node, n_threads);
    case Op::Attention: return attention_work_size(node, n_threads);
    default: return 0;
  }
}

}  // namespace peak::core
