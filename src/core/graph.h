// The graph builder: one call per op, reading like the maths, e.g.
//
//   Tensor* x = g.rms_norm(inp, eps, layer.attn_norm);  // [n_embd, n_tokens]
//   Tensor* q = g.mul_mat(layer.wq, x);                  // [n_embd, n_tokens]
//
// Calls only describe tensors; nothing is computed or allocated until the graph
// allocator places the intermediates and the executor runs the nodes. Descriptors
// live in a fixed-capacity arena owned by the graph, so rebuilding a graph of the
// same size for every batch allocates nothing.
//
// Shape conventions (ggml's): ne[0] first. Attention tensors use the natural
// projection / cache layout: Q [head_dim, n_head, n_tokens], K and V
// [head_dim, n_head_kv, n_kv].
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace peak::core {

// Fixed-capacity storage of tensor descriptors; pointers stay valid until reset().
class TensorArena {
 public:
  explicit TensorArena(size_t capacity);

  // A dense tensor of `type` and shape `ne` (trailing dimensions default to 1),
  // without data. Throws std::length_error when the arena is full.
  Tensor* new_tensor(kernels::GgmlType type, std::initializer_list<int64_t> ne);
  Tensor* new_tensor(kernels::GgmlType type, const int64_t (&ne)[kMaxDims]);

  void reset() { used_ = 0; }
  size_t size() const { return used_; }
  size_t capacity() const { return tensors_.size(); }

 private:
  std::vector<Tensor> tensors_;
  size_t used_ = 0;
};

enum class RopeMode : int32_t {
  Normal = 0,  // rotates neighbouring pairs (x[2i], x[2i+1]) (llama)
  Neox = 2,    // rotates halves (x[i], x[i + n_dims/2]) (gpt-neox, qwen)
  // Two-dimensional, for vision transformers (ggml's GGML_ROPE_TYPE_VISION
  // with sections {n/4, n/4}): neox's pairs (x[i], x[i + n_dims/2]), the first
  // half of them rotated by the token's row y and the second by its column x,
  // each half with the frequencies base^(-2k / (n_dims/2)), k from 0 (so
  // theta_i = y base^(-4i/n_dims) for i < n_dims/4, x base^(-4(i - n_dims/4)/n_dims)
  // after). Positions: I32 [2 n_tokens], every token's y, then every token's x.
  // n_dims must be a multiple of 4. Qwen2.5-VL's vision tower (HF:
  // cat(freqs[h], freqs[w]) then rotate_half).
  Vision = 24,
  // Multimodal (ggml's GGML_ROPE_TYPE_MROPE, Qwen2-VL's M-RoPE): neox's pairs
  // and frequencies (theta_i = p base^(-2i/n_dims)), but pair i turns by one
  // of three positions of the token, by its section: p = t for i <
  // sections[0], h for i < sections[0] + sections[1], w for the rest up to
  // n_dims/2. Positions: I32 [3 n_tokens], every token's t, then every
  // token's h, then every token's w (a text token: all three its position;
  // an image token: its picture's position, plus its row, plus its column).
  Multi = 8,
};

struct RopeParams {
  int32_t n_dims = 0;  // leading dimensions of each head that rotate; 0 = all
  RopeMode mode = RopeMode::Normal;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // theta_i = pos * freq_base^(-2i/n_dims) * freq_scale
  // The rotated dimensions are also multiplied by it (LongRoPE's magnitude
  // factor, llama.cpp's attn_factor); dimensions past n_dims are not.
  float attn_factor = 1.0f;
  // RopeMode::Multi: the pairs turned by t and by h (w turns the remaining
  // n_dims/2 - sections[0] - sections[1]).
  int32_t sections[2] = {0, 0};
};

// How many positions a token takes in the rope's positions input: 2 in
// vision mode, 3 in multimodal mode, else 1.
constexpr int64_t rope_positions_per_token(RopeMode mode) {
  return mode == RopeMode::Vision ? 2 : mode == RopeMode::Multi ? 3 : 1;
}

// How attention scores and masks query tokens against kv cells (Graph::attention).
struct AttentionParams {
  float scale = 1.0f;    // scores = (q . k) * scale
  bool causal = true;    // query token t sees kv cells up to n_kv - n_tokens + t
  // > 0: sliding window; a query sees only the last `window` cells of its
  // causal range (itself included): cells c with t_cell - c < window, where
  // t_cell = n_kv - n_tokens + t. Needs causal.
  int64_t window = 0;
  // > 0: scores become softcap * tanh(scores / softcap) before the softmax
  // (gemma2's attn_logit_softcapping).
  float softcap = 0.0f;
};

class Graph {
 public:
  explicit Graph(size_t max_tensors = 8192);

  // Forgets every tensor and node built so far; capacity is kept.
  void reset();

  // ---- leaves ------------------------------------------------------------
  // A tensor whose data the caller writes before each compute (token ids,
  // positions); the graph allocator gives it memory.
  Tensor* input(kernels::GgmlType type, std::initializer_list<int64_t> ne, const char* name);

  // ---- views: no copy, no compute ---------------------------------------
  // ne and nb list the first dimensions; the rest are 1.
  Tensor* view(Tensor* a, std::initializer_list<int64_t> ne, std::initializer_list<size_t> nb,
               size_t offset);
  Tensor* reshape(Tensor* a, std::initializer_list<int64_t> ne);  // a must be contiguous
  // Dimension i of `a` becomes dimension axes[i] of the result (ggml_permute).
  Tensor* permute(Tensor* a, int axis0, int axis1, int axis2, int axis3);
  Tensor* transpose(Tensor* a);  // swaps dimensions 0 and 1

  // ---- ops ---------------------------------------------------------------
  Tensor* get_rows(Tensor* table, Tensor* ids);  // table [n, rows], ids I32 [k] -> [n, k]
  // w [k, n, b2, b3] (any type), x F32 [k, m, c2, c3] with c2 % b2 == 0 and
  // c3 % b3 == 0 -> [n, m, c2, c3]: out = w · x per column.
  Tensor* mul_mat(Tensor* w, Tensor* x);
  // scale · (w · x) + addend (null: none; else F32 of the result's shape, dense
  // rows) in one node: each thread scales and adds its own rows, so a low-rank
  // product (LoRA's) costs no nodes of its own for either.
  Tensor* mul_mat(Tensor* w, Tensor* x, float scale, Tensor* addend);
  // w · x + scale · (b · (a · x)): a weight with a low-rank update beside it
  // (LoRA), a [k, rank] and b [rank, n] of any types with kernels, 2-D;
  // b_rows is b transposed, [n, rank] in F32 or F16. For a few activation rows
  // (decode) one node: each thread forms scale · a · x itself (rank · k
  // multiply-adds per row, a few microseconds) and adds to its own rows the sum
  // of b_rows' rows weighted by it (no dot products of length rank), so the
  // update costs no barrier and the node still runs beside the other matmuls
  // that read x. For more rows, or a repacked a, the nodes of
  // mul_mat(b, mul_mat(a, x, scale, nullptr), 1, mul_mat(w, x)).
  Tensor* mul_mat_low_rank(Tensor* w, Tensor* x, Tensor* a, Tensor* b, Tensor* b_rows, float scale);
  Tensor* add(Tensor* a, Tensor* b);  // b is repeated to a's shape
  Tensor* scale(Tensor* a, float s);
  // With `weight` (F32 [a->ne[0]], contiguous) each normalised row is also
  // multiplied by it element-wise: the usual norm-then-scale of a decoder in
  // one pass (one node, so one thread barrier fewer per norm).
  Tensor* rms_norm(Tensor* a, float eps, Tensor* weight = nullptr);
  // Each row centred on its mean and divided by sqrt(variance + eps), then
  // times `weight` and plus `bias` (each F32 [a->ne[0]], contiguous, or null):
  // the LayerNorm of encoders (BERT), in one node.
  Tensor* layer_norm(Tensor* a, float eps, Tensor* weight, Tensor* bias);
  // a [head_dim, n_head, n_tokens], positions I32 [rope_positions_per_token
  // n_tokens] (RopeMode). freq_factors
  // (F32 [n_dims / 2], e.g. llama 3.1's rope_freqs or Phi-3's LongRoPE
  // factors) divide each pair's theta.
  Tensor* rope(Tensor* a, Tensor* positions, const RopeParams& rope, Tensor* freq_factors = nullptr);
  Tensor* swiglu(Tensor* gate, Tensor* up);  // silu(gate) * up
  // gelu_tanh(gate) * up, gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  // (Gemma's gelu_pytorch_tanh).
  Tensor* geglu(Tensor* gate, Tensor* up);
  // gelu_tanh(a) element-wise: the ungated feed-forward activation of encoders (BERT).
  Tensor* gelu(Tensor* a);
  // 0.5 x (1 + erf(x / sqrt 2)), the exact gelu (torch's nn.GELU()).
  Tensor* gelu_erf(Tensor* a);
  // cap * tanh(a / cap) element-wise, cap > 0 (gemma2's final_logit_softcapping).
  Tensor* softcap(Tensor* a, float cap);
  // Writes `src` (F32) converted to dst's type into dst's memory (F32, F16, BF16,
  // Q8_0, Q4_0, ...); the result aliases dst. Expand it before the nodes that read
  // dst's memory (e.g. the attention over the KV cache).
  Tensor* copy(Tensor* src, Tensor* dst);
  // Fused attention: softmax over the visible cells of the (scaled, maybe
  // soft-capped) scores, times V. q F32 [head_dim, n_head, n_tokens]; k, v
  // [head_dim, n_head_kv, n_kv] in F32, F16, Q8_0 or Q4_0 (dense rows, any
  // strides); n_head a multiple of n_head_kv. Which cells a query sees: see
  // AttentionParams; without `causal` every cell. With a window only the
  // cells inside some query's window are read.
  // Result F32 [head_dim, n_head, n_tokens].
  Tensor* attention(Tensor* q, Tensor* k, Tensor* v, const AttentionParams& params);
  // The same where each query token t sees exactly the cells [key_ranges[2t],
  // key_ranges[2t + 1]) (key_ranges I32 [2, n_tokens], dense; the caller
  // fills it before each compute, ranges non-empty and within n_kv), so a
  // batch of several sequences side by side attends within each sequence
  // only. params must be neither causal nor windowed: the ranges say it all.
  Tensor* attention(Tensor* q, Tensor* k, Tensor* v, const AttentionParams& params, Tensor* key_ranges);
  // a F32 [n, n_rows] (dense rows), row_ranges I32 [2, m] (dense, filled
  // before each compute, each range non-empty and within n_rows) -> F32
  // [n, m]: column j is the mean of a's rows [row_ranges[2j], row_ranges[2j + 1]).
  // Pools the hidden states of each sequence of a batch into one vector (a
  // range of one row picks that row).
  Tensor* mean_rows(Tensor* a, Tensor* row_ranges);

  // ---- building ----------------------------------------------------------
  // Appends `t` and every tensor it depends on, in dependency order.
  void expand(Tensor* t);
  // Marks `t` as a result the caller reads after compute (kept alive), and expands it.
  void output(Tensor* t);

  const std::vector<Tensor*>& nodes() const { return nodes_; }   // ops in execution order
  const std::vector<Tensor*>& leafs() const { return leafs_; }   // weights and inputs
  size_t arena_capacity() const { return arena_.capacity(); }

 private:
  Tensor* new_tensor(kernels::GgmlType type, const int64_t (&ne)[kMaxDims]);  // indexed in the arena
  Tensor* new_node(Op op, kernels::GgmlType type, const int64_t (&ne)[kMaxDims],
                   std::initializer_list<Tensor*> sources);
  Tensor* new_view(Tensor* a, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
                   size_t offset);
  Tensor* element_wise(Op op, Tensor* a, Tensor* b);
  bool mark_visited(const Tensor* t);  // false when already visited
  void visit(Tensor* t);

  TensorArena arena_;
  std::vector<Tensor*> nodes_;
  std::vector<Tensor*> leafs_;
  // Open-addressing set of the tensors expanded since the last reset(). A slot
  // counts only when its stamp is the current build's, so reset() is O(1).
  struct VisitSlot {
    const Tensor* tensor = nullptr;
    uint32_t build = 0;
  };
  std::vector<VisitSlot> visited_;
  uint32_t build_ = 1;
};

}  // namespace peak::core
