#include "core/tensor.h"

#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/blocks.h"
#include "kernels/repack.h"

namespace peak::core {

using kernels::get_q8_0_key_lane;
using kernels::ggml_type_name;
using kernels::ggml_type_traits;
using kernels::GgmlType;
using kernels::GgmlTypeTraits;
using kernels::kQ8_0KeyLaneRows;
using kernels::kQK;
using kernels::put_q8_0_key_lane;

const char* op_name(Op op) {
  switch (op) {
    case Op::None: return "none";
    case Op::View: return "view";
    case Op::GetRows: return "get_rows";
    case Op::MulMat: return "mul_mat";
    case Op::Add: return "add";
    case Op::Scale: return "scale";
    case Op::RmsNorm: return "rms_norm";
    case Op::LayerNorm: return "layer_norm";
    case Op::Rope: return "rope";
    case Op::SwiGlu: return "swiglu";
    case Op::GeGlu: return "geglu";
    case Op::Gelu: return "gelu";
    case Op::Softcap: return "softcap";
    case Op::Copy: return "copy";
    case Op::MeanRows: return "mean_rows";
    case Op::Attention: return "attention";
  }
  return "?";
}

size_t type_block_bytes(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr || traits->block_bytes == 0) {
    throw std::invalid_argument("tensor type without a storage layout");
  }
  return traits->block_bytes;
}

int64_t type_block_elements(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr || traits->block_bytes == 0) {
    throw std::invalid_argument("tensor type without a storage layout");
  }
  return traits->block_elems;
}

size_t Tensor::row_bytes() const {
  return static_cast<size_t>(ne[0] / type_block_elements(type)) * type_block_bytes(type);
}

size_t Tensor::byte_size() const {
  if (element_count() == 0) return 0;
  // Plain types may be strided along dimension 0 too (a transposed view); block
  // types always keep their blocks dense within a row.
  size_t bytes = type_block_elements(type) == 1
                     ? type_block_bytes(type) + static_cast<size_t>(ne[0] - 1) * nb[0]
                     : row_bytes();
  for (int d = 1; d < kMaxDims; ++d) bytes += static_cast<size_t>(ne[d] - 1) * nb[d];
  return bytes;
}

KeyLane key_lane_at(const Tensor& t, const char* row) {
  const Tensor& owner = t.view_src != nullptr ? *t.view_src : t;
  const auto offset = static_cast<size_t>(row - static_cast<const char*>(owner.data));
  const size_t head = offset / owner.nb[1];
  const size_t cell = offset % owner.nb[1] / owner.nb[2];
  const size_t first = cell - cell % kQ8_0KeyLaneRows;
  return {static_cast<char*>(owner.data) + head * owner.nb[1] + first * owner.nb[2],
          static_cast<int>(cell - first)};
}

void get_key_lane_row(const Tensor& t, const char* row, void* dst) {
  const KeyLane at = key_lane_at(t, row);
  get_q8_0_key_lane(at.group, at.lane, dst, t.ne[0] / kQK);
}

void put_key_lane_row(const Tensor& t, char* row, const void* src) {
  const KeyLane at = key_lane_at(t, row);
  put_q8_0_key_lane(at.group, at.lane, src, t.ne[0] / kQK);
}

bool Tensor::has_dense_rows() const {
  return nb[0] == type_block_bytes(type);
}

bool Tensor::is_contiguous() const {
  if (!has_dense_rows()) return false;
  size_t expected = row_bytes();
  for (int d = 1; d < kMaxDims; ++d) {
    if (ne[d] != 1 && nb[d] != expected) return false;
    expected *= static_cast<size_t>(ne[d]);
  }
  return true;
}

bool Tensor::same_shape(const Tensor& other) const {
  for (int d = 0; d < kMaxDims; ++d) {
    if (ne[d] != other.ne[d]) return false;
  }
  return true;
}

void Tensor::set_name(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(name, sizeof(name), format, args);
  va_end(args);
}

void set_dense_layout(Tensor& t, GgmlType type, const int64_t (&ne)[kMaxDims]) {
  const int64_t block = type_block_elements(type);
  if (ne[0] % block != 0) {
    throw std::invalid_argument(std::string("row length is not a multiple of the block size of ") +
                                ggml_type_name(static_cast<uint32_t>(type)));
  }
  t.type = type;
  for (int d = 0; d < kMaxDims; ++d) {
    if (ne[d] < 0) throw std::invalid_argument("negative tensor dimension");
    t.ne[d] = ne[d];
  }
  t.nb[0] = type_block_bytes(type);
  t.nb[1] = t.row_bytes();
  for (int d = 2; d < kMaxDims; ++d) t.nb[d] = t.nb[d - 1] * static_cast<size_t>(ne[d - 1]);
}

}  // namespace peak::core
