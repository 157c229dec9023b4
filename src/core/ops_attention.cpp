// Fused attention: out = softmax(Q K^T * scale + mask) V, one pass over the keys
// with an online softmax, so the [n_kv, n_tokens, n_head] score matrix is never
// stored and K and V are read straight from the cache in F16, Q8_0 or Q4_0.
//
// Keys: each query row is converted once to K's dot partner (Q8_0 for Q8_0/Q4_0,
// F16 for F16) and the scores come from the kernels' gemm, a step of keys against
// all query heads of the group at once. Quantizing one query row costs
// O(head_dim), paid once against n_kv dots, and the dots then run on the kernels'
// best SIMD path (integer dots for quantized keys, each K row read once for the
// whole group) instead of a dequantize-then-float-dot loop here.
// Values: each V row is dequantized once (to_float) and added, weighted, to the
// accumulators of all query heads that share its kv head, so grouped-query
// attention reads and dequantizes each K and V row once per group, not per head.
// Threads: one task is one query token and one kv head with its group of query
// heads. When there are fewer such tasks than threads (decode with few kv heads),
// the keys are split into chunks too; each chunk leaves a partial (max, sum,
// unnormalised output) and the partials are merged after a barrier.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

namespace {

constexpr int64_t kMinKeysPerChunk = 64;
constexpr int64_t kMaxKeyChunks = 64;
constexpr int64_t kKeysPerStep = 32;  // scores computed per gemm call
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

struct AttentionShape {
  int64_t head_dim, n_head, n_tokens, n_head_kv, n_kv, group;

  explicit AttentionShape(const Tensor& node)
      : head_dim(node.src[0]->ne[0]), n_head(node.src[0]->ne[1]), n_tokens(node.src[0]->ne[2]),
        n_head_kv(node.src[1]->ne[1]), n_kv(node.src[1]->ne[2]), group(n_head / n_head_kv) {}

  int64_t units() const { return n_tokens * n_head_kv; }  // (token, kv head) pairs

  // Key chunks per unit so that every thread has work, keeping chunks long
  // enough that merging them stays cheap.
  int64_t key_chunks(int n_threads) const {
    if (units() >= n_threads) return 1;
    const int64_t wanted = (n_threads + units() - 1) / units();
    return std::max<int64_t>(1, std::min({wanted, n_kv / kMinKeysPerChunk, kMaxKeyChunks}));
  }
};

// Running softmax state of one group of query heads: unnormalised outputs
// [group][head_dim], then the running max [group] and sum [group].
struct GroupState {
  float* outputs;
  float* max;
  float* sum;
};

size_t group_state_bytes(const AttentionShape& s) {
  return round_up_to_cache_line(static_cast<size_t>(s.group * (s.head_dim + 2)) * sizeof(float));
}

GroupState group_state_at(char* memory, const AttentionShape& s) {
  auto* outputs = reinterpret_cast<float*>(memory);
  return {outputs, outputs + s.group * s.head_dim, outputs + s.group * s.head_dim + s.group};
}

// Work memory: per thread [queries in K's partner type][scores of one step of
// keys][one dequantized value row][a group state], then, when keys are split,
// one group state per (unit, chunk) for the merge.
struct AttentionWork {
  size_t query_row_bytes;  // 0 when K's partner is F32 (queries are used as they are)
  size_t scores_offset;
  size_t value_offset;
  size_t state_offset;
  size_t per_thread_bytes;
  size_t partials_offset;
  size_t total_bytes;
};

AttentionWork attention_work(const Tensor& node, int n_threads) {
  const AttentionShape s(node);
  const GgmlType partner = kernels_for(node.src[1]->type).dot_partner;
  AttentionWork w{};
  w.query_row_bytes = partner == GgmlType::F32
      ? 0
      : round_up_to_cache_line(static_cast<size_t>(s.head_dim / type_block_elements(partner)) *
                               type_block_bytes(partner));
  w.scores_offset = w.query_row_bytes * static_cast<size_t>(s.group);
  w.value_offset = w.scores_offset + round_up_to_cache_line(static_cast<size_t>(s.group * kKeysPerStep) * sizeof(float));
  w.state_offset = w.value_offset + round_up_to_cache_line(static_cast<size_t>(s.head_dim) * sizeof(float));
  w.per_thread_bytes = w.state_offset + group_state_bytes(s);
  w.partials_offset = w.per_thread_bytes * static_cast<size_t>(n_threads);
  const int64_t chunks = s.key_chunks(n_threads);
  const size_t partials = chunks > 1 ? static_cast<size_t>(s.units() * chunks) * group_state_bytes(s) : 0;
  w.total_bytes = w.partials_offset + partials;
  return w;
}

struct AttentionInputs {
  const Tensor& q;
  const Tensor& k;
  const Tensor& v;
  const Tensor* mask;
  float scale;
  const TypeKernels& k_kernels;
  RowFromFloatFn query_to_partner;
  RowToFloatFn value_to_float;
};

// scores[h * kKeysPerStep + j] = K[first_key + j] · query h, for n_keys keys and
// the group's query heads (rows of `queries`, `query_stride` bytes apart).
void score_keys(const AttentionInputs& in, const AttentionShape& s, int64_t kv_head, int64_t first_key,
                int64_t n_keys, const char* queries, size_t query_stride, float* scores) {
  const char* keys = in.k.row_ptr(kv_head, first_key);
  if (in.k_kernels.gemm != nullptr) {
    in.k_kernels.gemm(s.head_dim, keys, in.k.nb[2], n_keys, queries, query_stride, s.group, scores, kKeysPerStep);
    return;
  }
  for (int64_t h = 0; h < s.group; ++h) {
    for (int64_t j = 0; j < n_keys; ++j) {
      in.k_kernels.vec_dot(s.head_dim, scores + h * kKeysPerStep + j, keys + static_cast<size_t>(j) * in.k.nb[2],
                           queries + static_cast<size_t>(h) * query_stride);
    }
  }
}

// Value row j of kv head `kv_head` as floats: F32 rows as they are, others
// dequantized into `scratch`.
const float* value_row(const AttentionInputs& in, int64_t kv_head, int64_t j, int64_t d, float* scratch) {
  const char* stored = in.v.row_ptr(kv_head, j);
  if (in.v.type == GgmlType::F32) return reinterpret_cast<const float*>(stored);
  in.value_to_float(stored, scratch, d);
  return scratch;
}

// Online softmax step for head h: fold in one key's score and value row.
void accumulate(const GroupState& state, int64_t h, int64_t d, float score, const float* value) {
  float* out = state.outputs + h * d;
  if (score > state.max[h]) {
    // A new maximum: rescale what was summed so far to the new reference.
    const float rescale = std::exp(state.max[h] - score);
    state.sum[h] *= rescale;
    for (int64_t i = 0; i < d; ++i) out[i] *= rescale;
    state.max[h] = score;
  }
  const float weight = std::exp(score - state.max[h]);
  state.sum[h] += weight;
  for (int64_t i = 0; i < d; ++i) out[i] += weight * value[i];
}

// Folds keys [begin, end) of kv head `kv_head` into the state of the query heads
// of that group for query token `token`. `queries` holds the group's query rows
// in K's partner type, `query_stride` bytes apart; `scores` and `value` are scratch.
void attend(const AttentionInputs& in, const AttentionShape& s, int64_t token, int64_t kv_head,
            int64_t begin, int64_t end, const char* queries, size_t query_stride, float* scores,
            float* value, const GroupState& state) {
  const int64_t d = s.head_dim;
  const auto* mask_row = in.mask != nullptr ? reinterpret_cast<const float*>(in.mask->row_ptr(token)) : nullptr;
  for (int64_t h = 0; h < s.group; ++h) {
    state.max[h] = kMinusInfinity;
    state.sum[h] = 0.0f;
  }
  std::memset(state.outputs, 0, static_cast<size_t>(s.group * d) * sizeof(float));

  for (int64_t first_key = begin; first_key < end; first_key += kKeysPerStep) {
    const int64_t n_keys = std::min(kKeysPerStep, end - first_key);
    score_keys(in, s, kv_head, first_key, n_keys, queries, query_stride, scores);
    for (int64_t step = 0; step < n_keys; ++step) {
      const int64_t j = first_key + step;
      const float bias = mask_row != nullptr ? mask_row[j] : 0.0f;
      if (bias == kMinusInfinity) continue;
      const float* v = value_row(in, kv_head, j, d, value);
      for (int64_t h = 0; h < s.group; ++h) {
        accumulate(state, h, d, scores[h * kKeysPerStep + step] * in.scale + bias, v);
      }
    }
  }
}

// Writes head h of a group's merged states (one per key chunk) to `out`.
void merge_into(const GroupState* states, int64_t n_states, int64_t h, int64_t d, float* out) {
  float max = kMinusInfinity;
  for (int64_t c = 0; c < n_states; ++c) max = std::max(max, states[c].max[h]);
  float sum = 0.0f;
  for (int64_t i = 0; i < d; ++i) out[i] = 0.0f;
  if (max == kMinusInfinity) return;  // every key masked: attend to nothing
  for (int64_t c = 0; c < n_states; ++c) {
    if (states[c].max[h] == kMinusInfinity) continue;
    const float weight = std::exp(states[c].max[h] - max);
    sum += states[c].sum[h] * weight;
    const float* partial = states[c].outputs + h * d;
    for (int64_t i = 0; i < d; ++i) out[i] += weight * partial[i];
  }
  const float inverse_sum = 1.0f / sum;
  for (int64_t i = 0; i < d; ++i) out[i] *= inverse_sum;
}

}  // namespace

size_t attention_work_size(const Tensor& node, int n_threads) {
  return attention_work(node, n_threads).total_bytes;
}

// node F32 [head_dim, n_head, n_tokens]; src0 Q F32 [head_dim, n_head, n_tokens];
// src1 K, src2 V [head_dim, n_head_kv, n_kv]; src3 mask F32 [n_kv, >= n_tokens] or null.
void compute_attention(const ComputeParams& params, Tensor& node) {
  const AttentionShape s(node);
  const TypeKernels& k_kernels = kernels_for(node.src[1]->type);
  const AttentionInputs in{*node.src[0], *node.src[1], *node.src[2], node.src[3], node.params.f[0],
                           k_kernels, kernels_for(k_kernels.dot_partner).from_float,
                           kernels_for(node.src[2]->type).to_float};
  const bool causal = node.params.i[0] != 0;
  const AttentionWork layout = attention_work(node, params.n_threads);
  char* work = static_cast<char*>(params.work);
  char* scratch = work + layout.per_thread_bytes * static_cast<size_t>(params.thread_index);
  auto* value = reinterpret_cast<float*>(scratch + layout.value_offset);
  auto* scores = reinterpret_cast<float*>(scratch + layout.scores_offset);
  const int64_t chunks = s.key_chunks(params.n_threads);
  const int64_t keys_per_chunk = (s.n_kv + chunks - 1) / chunks;

  const Range tasks = thread_share(s.units() * chunks, params);
  for (int64_t task = tasks.begin; task < tasks.end; ++task) {
    const int64_t unit = task / chunks;
    const int64_t chunk = task % chunks;
    const int64_t kv_head = unit % s.n_head_kv;
    const int64_t token = unit / s.n_head_kv;
    const int64_t visible = causal ? s.n_kv - s.n_tokens + token + 1 : s.n_kv;
    const int64_t begin = std::min(visible, chunk * keys_per_chunk);
    const int64_t end = std::min(visible, begin + keys_per_chunk);

    if (layout.query_row_bytes != 0) {
      for (int64_t h = 0; h < s.group; ++h) {
        in.query_to_partner(reinterpret_cast<const float*>(in.q.row_ptr(kv_head * s.group + h, token)),
                            scratch + static_cast<size_t>(h) * layout.query_row_bytes, s.head_dim);
      }
    }
    const GroupState state = chunks == 1
        ? group_state_at(scratch + layout.state_offset, s)
        : group_state_at(work + layout.partials_offset + static_cast<size_t>(task) * group_state_bytes(s), s);
    const bool queries_as_they_are = layout.query_row_bytes == 0;
    const char* queries = queries_as_they_are ? in.q.row_ptr(kv_head * s.group, token) : scratch;
    const size_t query_stride = queries_as_they_are ? in.q.nb[1] : layout.query_row_bytes;
    attend(in, s, token, kv_head, begin, end, queries, query_stride, scores, value, state);
    if (chunks == 1) {
      for (int64_t h = 0; h < s.group; ++h) {
        merge_into(&state, 1, h, s.head_dim, f32_row(node, {kv_head * s.group + h, token, 0}));
      }
    }
  }
  if (chunks == 1) return;

  // Merge the chunks of each unit; one head of one unit per step.
  params.barrier();
  GroupState states[kMaxKeyChunks];
  const Range heads = thread_share(s.units() * s.group, params);
  for (int64_t item = heads.begin; item < heads.end; ++item) {
    const int64_t unit = item / s.group;
    const int64_t h = item % s.group;
    for (int64_t c = 0; c < chunks; ++c) {
      states[c] = group_state_at(
          work + layout.partials_offset + static_cast<size_t>(unit * chunks + c) * group_state_bytes(s), s);
    }
    const int64_t kv_head = unit % s.n_head_kv;
    const int64_t token = unit / s.n_head_kv;
    merge_into(states, chunks, h, s.head_dim, f32_row(node, {kv_head * s.group + h, token, 0}));
  }
}

}  // namespace peak::core
