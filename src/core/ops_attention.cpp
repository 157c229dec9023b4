// Fused attention: out = softmax(Q K^T * scale + mask) V, one pass over the keys
// with an online softmax, so the [n_kv, n_tokens, n_head] score matrix is never
// stored and K and V are read straight from the cache in F16, Q8_0 or Q4_0.
//
// Keys: each query row is converted once to K's dot partner (Q8_0 for Q8_0/Q4_0,
// F16 for F16) and every score is one kernels vec_dot. Quantizing one query row
// costs O(head_dim), paid once against n_kv dots, and the dots then run on the
// kernels' best SIMD path (integer dots for quantized keys) instead of a
// dequantize-then-float-dot loop here.
// Values: each V row is dequantized once (to_float) and added, weighted, to the
// accumulators of all query heads that share its kv head, so grouped-query
// attention reads and dequantizes each K and V row once per group, not per head.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

namespace {

// Per-thread scratch, each part rounded to a cache line:
//   queries [group][partner row of head_dim]   (absent when K's partner is F32)
//   accumulators [group][head_dim], value [head_dim], max [group], sum [group]
struct AttentionScratch {
  size_t query_row_bytes;
  size_t queries_bytes;
  size_t accumulators_bytes;
  size_t value_bytes;
  size_t stats_bytes;
  size_t per_thread_bytes;
};

AttentionScratch attention_scratch(const Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const int64_t head_dim = q.ne[0];
  const int64_t group = q.ne[1] / k.ne[1];
  const GgmlType partner = kernels_for(k.type).dot_partner;
  AttentionScratch s{};
  s.query_row_bytes = partner == GgmlType::F32
      ? 0
      : round_up_to_cache_line(static_cast<size_t>(head_dim / type_block_elements(partner)) *
                               type_block_bytes(partner));
  s.queries_bytes = s.query_row_bytes * static_cast<size_t>(group);
  s.accumulators_bytes = round_up_to_cache_line(static_cast<size_t>(group * head_dim) * sizeof(float));
  s.value_bytes = round_up_to_cache_line(static_cast<size_t>(head_dim) * sizeof(float));
  s.stats_bytes = round_up_to_cache_line(static_cast<size_t>(group) * sizeof(float));
  s.per_thread_bytes = s.queries_bytes + s.accumulators_bytes + s.value_bytes + 2 * s.stats_bytes;
  return s;
}

}  // namespace

size_t attention_work_size(const Tensor& node, int n_threads) {
  return attention_scratch(node).per_thread_bytes * static_cast<size_t>(n_threads);
}

// node F32 [head_dim, n_head, n_tokens]; src0 Q F32 [head_dim, n_head, n_tokens];
// src1 K, src2 V [head_dim, n_head_kv, n_kv]; src3 mask F32 [n_kv, >= n_tokens] or null.
// One task is one query token and one kv head with its group of query heads.
void compute_attention(const ComputeParams& params, Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const float scale = node.params.f[0];
  const bool causal = node.params.i[0] != 0;
  const int64_t head_dim = q.ne[0];
  const int64_t n_tokens = q.ne[2];
  const int64_t n_head_kv = k.ne[1];
  const int64_t n_kv = k.ne[2];
  const int64_t group = q.ne[1] / n_head_kv;

  const TypeKernels& k_kernels = kernels_for(k.type);
  const RowFromFloatFn query_to_partner = kernels_for(k_kernels.dot_partner).from_float;
  const RowToFloatFn value_to_float = kernels_for(v.type).to_float;
  const bool query_as_is = k_kernels.dot_partner == GgmlType::F32;
  const bool value_as_is = v.type == GgmlType::F32;

  const AttentionScratch layout = attention_scratch(node);
  char* scratch = static_cast<char*>(params.work) +
                  layout.per_thread_bytes * static_cast<size_t>(params.thread_index);
  char* queries = scratch;
  auto* accumulators = reinterpret_cast<float*>(scratch + layout.queries_bytes);
  auto* value = reinterpret_cast<float*>(scratch + layout.queries_bytes + layout.accumulators_bytes);
  auto* running_max = reinterpret_cast<float*>(reinterpret_cast<char*>(value) + layout.value_bytes);
  auto* running_sum = reinterpret_cast<float*>(reinterpret_cast<char*>(running_max) + layout.stats_bytes);
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

  const Range tasks = thread_share(n_tokens * n_head_kv, params);
  for (int64_t task = tasks.begin; task < tasks.end; ++task) {
    const int64_t kv_head = task % n_head_kv;
    const int64_t token = task / n_head_kv;
    const int64_t first_head = kv_head * group;
    const int64_t visible = causal ? n_kv - n_tokens + token + 1 : n_kv;
    const auto* mask_row = mask != nullptr ? reinterpret_cast<const float*>(mask->row_ptr(token)) : nullptr;

    // Query head h of the group, in K's dot partner type.
    auto query_row = [&](int64_t h) -> const void* {
      return query_as_is ? q.row_ptr(first_head + h, token)
                         : queries + static_cast<size_t>(h) * layout.query_row_bytes;
    };
    for (int64_t h = 0; h < group; ++h) {
      if (!query_as_is) {
        query_to_partner(reinterpret_cast<const float*>(q.row_ptr(first_head + h, token)),
                         queries + static_cast<size_t>(h) * layout.query_row_bytes, head_dim);
      }
      running_max[h] = kMinusInfinity;
      running_sum[h] = 0.0f;
    }
    std::memset(accumulators, 0, static_cast<size_t>(group * head_dim) * sizeof(float));

    for (int64_t j = 0; j < visible; ++j) {
      const float bias = mask_row != nullptr ? mask_row[j] : 0.0f;
      if (bias == kMinusInfinity) continue;
      const char* key = k.row_ptr(kv_head, j);
      const float* value_row = nullptr;
      for (int64_t h = 0; h < group; ++h) {
        float dot;
        k_kernels.vec_dot(head_dim, &dot, key, query_row(h));
        const float score = dot * scale + bias;
        float* acc = accumulators + h * head_dim;
        if (score > running_max[h]) {
          // A new maximum: rescale what was summed so far to the new reference.
          const float rescale = std::exp(running_max[h] - score);
          running_sum[h] *= rescale;
          for (int64_t i = 0; i < head_dim; ++i) acc[i] *= rescale;
          running_max[h] = score;
        }
        const float weight = std::exp(score - running_max[h]);
        running_sum[h] += weight;
        if (value_row == nullptr) {
          const char* stored = v.row_ptr(kv_head, j);
          if (value_as_is) {
            value_row = reinterpret_cast<const float*>(stored);
          } else {
            value_to_float(stored, value, head_dim);
            value_row = value;
          }
        }
        for (int64_t i = 0; i < head_dim; ++i) acc[i] += weight * value_row[i];
      }
    }

    for (int64_t h = 0; h < group; ++h) {
      float* out = f32_row(node, {first_head + h, token, 0});
      const float* acc = accumulators + h * head_dim;
      const float inverse_sum = running_sum[h] > 0.0f ? 1.0f / running_sum[h] : 0.0f;
      for (int64_t i = 0; i < head_dim; ++i) out[i] = acc[i] * inverse_sum;
    }
  }
}

}  // namespace peak::core
