// Tensor descriptors: what a tensor is (type, shape, strides), where its bytes are,
// and which op produces it from which sources. Descriptors are small and hold no
// memory of their own: data lives in buffers owned elsewhere (the model's weight
// mapping, the KV cache, the graph allocator's compute buffer).
//
// Layout follows ggml: ne[0] is the innermost dimension (a row), nb[i] is the byte
// distance between neighbours along dimension i, and nb[0] is the size of one
// element (or, for block types, nb[1] is the byte size of a row of blocks).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/ggml_type.h"

namespace peak::core {

constexpr int kMaxDims = 4;
constexpr int kMaxSources = 4;
constexpr int kMaxNameLength = 48;

enum class Op : uint8_t {
  None,       // a leaf: a weight or an input, nothing to compute
  View,       // view / reshape / permute / transpose of view_src: nothing to compute
  GetRows,    // rows of src0 picked by the I32 ids in src1, dequantized to F32
  MulMat,     // src0 (weights, any type) x src1 (F32 activations)
  Add,        // src0 + src1, src1 broadcast over src0
  Scale,      // src0 * params.f[0]
  RmsNorm,    // src0 / sqrt(mean(src0^2) + eps) per row
  LayerNorm,  // (src0 - mean) / sqrt(variance + eps) per row, times src1, plus src2
  Rope,       // rotary position embedding of src0 at the I32 positions in src1
  SwiGlu,     // silu(src0) * src1
  GeGlu,      // gelu_tanh(src0) * src1
  Gelu,       // gelu_tanh(src0)
  Softcap,    // params.f[0] * tanh(src0 / params.f[0])
  Copy,       // src0 converted into the memory of src1 (a view, e.g. a KV cache slot)
  MeanRows,   // column j: the mean of src0's rows [src1[2j], src1[2j + 1])
  Attention,  // fused softmax(Q K^T * scale, masked) V with grouped-query heads
};
constexpr int kOpCount = static_cast<int>(Op::Attention) + 1;

const char* op_name(Op op);

// Small per-op parameters (eps, rope settings, scales); each op documents its use.
struct OpParams {
  float f[4] = {0, 0, 0, 0};
  int32_t i[4] = {0, 0, 0, 0};
};

struct Tensor {
  kernels::GgmlType type = kernels::GgmlType::F32;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};  // elements per dimension
  size_t nb[kMaxDims] = {0, 0, 0, 0};   // byte strides per dimension
  void* data = nullptr;

  Op op = Op::None;
  OpParams params;
  Tensor* src[kMaxSources] = {nullptr, nullptr, nullptr, nullptr};

  // Tensors that share memory with another one (views, and Copy results that live
  // in their destination) name the owner of that memory and the byte offset in it.
  // view_src is always the root owner, never itself a view.
  Tensor* view_src = nullptr;
  size_t view_offset = 0;

  bool is_input = false;   // the caller fills its data before each compute
  bool is_output = false;  // must stay readable after compute: never reused
  // Weights only: set for a matrix the model repacks into the kernels' layout
  // of the type (kernels.h, TypeKernels::repack; model/weight_repack.h). It
  // holds the repacked bytes' address once they are ready, null until then;
  // meanwhile `data` has the stored rows. Only mul_mat reads such a weight (its
  // repacked rows cannot be addressed one by one), loading the address once per
  // call: the repacking may finish while contexts run, and both layouts give
  // bit-identical results.
  const std::atomic<const void*>* repacked_data = nullptr;
  // Q8_0 rows along dimension 2 stored sixteen to a group in the key lane
  // layout (kernels/repack.h): the KV cache's Q8_0 keys, and views of them with
  // the same strides. row_ptr gives where a row would start in rows as
  // stored, which lies in its group; key_lane_at finds the group and the lane.
  // Only copy (into it), get_rows and attention read or write such a tensor.
  bool key_lanes = false;
  int32_t arena_index = -1;  // slot in a graph's tensor arena; -1 for tensors outside graphs

  char name[kMaxNameLength] = {};

  int64_t element_count() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t row_count() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const;  // bytes of one contiguous row of ne[0] elements
  // Bytes spanned from the first to one past the last byte of the tensor.
  size_t byte_size() const;
  // Rows are dense and stacked without gaps in dimension order.
  bool is_contiguous() const;
  // Each row (dimension 0) is dense, rows may sit anywhere.
  bool has_dense_rows() const;
  bool same_shape(const Tensor& other) const;

  // The repacked bytes, when ready (see repacked_data).
  const void* repacked_bytes() const {
    return repacked_data != nullptr ? repacked_data->load(std::memory_order_acquire) : nullptr;
  }

  // Address of element row (i1, i2, i3).
  char* row_ptr(int64_t i1, int64_t i2 = 0, int64_t i3 = 0) const {
    return static_cast<char*>(data) + i1 * static_cast<int64_t>(nb[1]) +
           i2 * static_cast<int64_t>(nb[2]) + i3 * static_cast<int64_t>(nb[3]);
  }

  void set_name(const char* format, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 2, 3)))
#endif
      ;
};

// Where row `row` (a row_ptr of t, or of a view of the same memory) of a
// tensor with key_lanes lies: the start of its group of 16 rows and its lane.
// The row's cell is its offset from the start of its head (nb[1] of the
// memory's owner) over the row bytes (nb[2]).
struct KeyLane {
  char* group;
  int lane;
};
KeyLane key_lane_at(const Tensor& t, const char* row);

// The row at `row` (a row_ptr of t, which keeps keys in lanes) as stored
// rows hold it (ne[0] / 32 Q8_0 blocks): read out of its lane into dst, or
// written from src into its lane.
void get_key_lane_row(const Tensor& t, const char* row, void* dst);
void put_key_lane_row(const Tensor& t, char* row, const void* src);

// Sets `t.type`, `t.ne` and dense strides `t.nb` for that shape. Throws
// std::invalid_argument when ne[0] is not a multiple of the type's block size.
void set_dense_layout(Tensor& t, kernels::GgmlType type, const int64_t (&ne)[kMaxDims]);

// Bytes per element for plain scalar types, per block for block types.
size_t type_block_bytes(kernels::GgmlType type);
int64_t type_block_elements(kernels::GgmlType type);

}  // namespace peak::core
