// One llama transformer block built with the graph builder, for the allocator and
// zero-allocation tests: F16 weights, a Q8_0 KV cache, grouped-query attention.
#pragma once

#include "core/graph.h"
#include "core_test_support.h"

namespace peak::core::testing {

struct LlamaShape {
  int64_t n_embd = 256;
  int64_t n_head = 8;
  int64_t n_head_kv = 2;
  int64_t n_ff = 512;
  int64_t n_ctx = 64;
  int64_t window = 0;     // attention's sliding window (0: none)
  float softcap = 0.0f;   // attention's score cap (0: none)
  int64_t head_dim() const { return n_embd / n_head; }
};

struct LlamaBlock {
  LlamaShape shape;
  Tensor* attn_norm;  // [n_embd]
  Tensor* wq;         // [n_embd, n_embd]
  Tensor* wk;         // [n_embd, head_dim * n_head_kv]
  Tensor* wv;         // [n_embd, head_dim * n_head_kv]
  Tensor* wo;         // [n_embd, n_embd]
  Tensor* ffn_norm;   // [n_embd]
  Tensor* w_gate;     // [n_embd, n_ff]
  Tensor* w_up;       // [n_embd, n_ff]
  Tensor* w_down;     // [n_ff, n_embd]
  Tensor* k_cache;    // [head_dim, n_head_kv, n_ctx]
  Tensor* v_cache;    // [head_dim, n_head_kv, n_ctx]

  // Random weights and a zeroed cache, or descriptors without memory for
  // planning at full model scale.
  enum class Contents { Random, ShapeOnly };
  LlamaBlock(Leaves& leaves, const LlamaShape& shape, Contents contents = Contents::Random);

  // The block over n_tokens new tokens following n_past cached ones: embeddings
  // and positions come in as graph inputs. Returns the block's output
  // [n_embd, n_tokens] (already marked as the graph's output).
  Tensor* build(Graph& g, int64_t n_tokens, int64_t n_past) const;

  // Writes deterministic embeddings and the positions n_past.. into the inputs
  // of an allocated block graph.
  static void fill_inputs(const Graph& g, int64_t n_past);
};

}  // namespace peak::core::testing
