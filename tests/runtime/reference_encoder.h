// A naive double-precision BERT encoder over a GGUF file's F32 weights,
// written from the architecture's definition (no graph, no kernels), to check
// the engine's encoder graph and pooling against: the sum of the token, token
// type and position embeddings, LayerNorm, then per layer
//   x = LayerNorm(x + W_o · softmax(Q K^T / sqrt(d)) V + b_o)
//   x = LayerNorm(x + W_down · gelu(W_up · x + b_up) + b_down)
// with Q, K, V = W · x + b over the whole sequence, both ways; and the
// classification head of BertForSequenceClassification (pooler, classifier).
// nomic-bert's variant follows from the tensors the file has: no position
// table (Q and K rotated instead, NEOX's pairs, by each token's position in
// the sequence), Q, K and V from one fused matrix (attn_qkv, Q's rows, then
// K's, then V's), the feed-forward W_down · (silu(W_gate · x) * (W_up · x))
// when there is a gate, and any bias the file lacks left out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::test {

// The last hidden states of one sequence: [n_tokens][n_embd]. Tokens from
// index `second_segment` on are type 1 (a text pair's second text); by
// default every token is type 0.
// Without a position table, `rotate` false leaves Q and K unrotated (to show
// that the rotation matters).
std::vector<std::vector<double>> reference_encode(const gguf::GgufFile& file, const model::HParams& hp,
                                                  const std::vector<int32_t>& tokens, size_t second_segment = SIZE_MAX,
                                                  bool rotate = true);

// The classification head on the first token's state:
// cls.output · tanh(cls · hidden[0] + cls.bias) + cls.output.bias, [n_cls_out].
std::vector<double> reference_classify(const gguf::GgufFile& file, const std::vector<std::vector<double>>& hidden);

// An embedding model of decoder layers (Qwen3-Embedding, gemma-embedding):
// ReferenceForward's last hidden states of the sequence (bidirectional unless
// HParams::causal_attention), through the dense layers dense_3 · dense_2 when
// the file has them (linear, so applying them to every token before pooling
// gives what applying them to the pooled vector does), then reference_pool.
std::vector<double> reference_embed_decoder(const gguf::GgufFile& file, const model::HParams& hp,
                                            const std::vector<int32_t>& tokens, model::Pooling pooling, bool normalize);

// A decoder reranker's (Qwen3-Reranker's) probability of answer `answer`:
// ReferenceForward's causal hidden state of the last token, through
// cls.output (the answers' output rows), softmaxed.
double reference_rerank_decoder(const gguf::GgufFile& file, const model::HParams& hp,
                                const std::vector<int32_t>& tokens, size_t answer);

// `hidden` pooled: the mean of the tokens' states, the first's, the last's,
// or (none) every token's one after another; then scaled to length 1 per
// vector when `normalize`.
std::vector<double> reference_pool(const std::vector<std::vector<double>>& hidden, model::Pooling pooling,
                                   bool normalize);

}  // namespace peak::test
