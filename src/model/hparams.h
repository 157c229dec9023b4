// Hyper-parameters of a decoder-only transformer, read from GGUF metadata
// (`general.architecture` and the `<arch>.*` keys).
#pragma once

#include <cstdint>
#include <string>

#include "core/graph.h"
#include "gguf/gguf_reader.h"

namespace peak::model {

enum class Arch { Llama, Qwen2, Qwen3 };

const char* arch_name(Arch arch);

struct HParams {
  Arch arch = Arch::Llama;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;   // context length the model was trained with
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;     // grouped-query attention: n_head % n_head_kv == 0
  int64_t head_dim = 0;      // `attention.key_length`, else n_embd / n_head
  int64_t n_ff = 0;
  float rms_eps = 1e-5f;
  core::RopeParams rope;     // n_dims, mode (normal for llama, neox for qwen), base, linear scale

  int64_t n_embd_q() const { return n_head * head_dim; }    // rows of attn_q
  int64_t n_embd_kv() const { return n_head_kv * head_dim; }  // rows of attn_k / attn_v
};

// Reads and checks the hyper-parameters; throws InvalidModel or UnsupportedModel
// (model_error.h) naming the architecture or key that is missing or inconsistent.
HParams read_hparams(const gguf::GgufFile& file);

}  // namespace peak::model
