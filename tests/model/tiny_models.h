// Tiny synthetic models of each architecture, written to the test's temp folder:
// small enough for a naive reference forward pass, shaped like the real ones
// (grouped-query attention, qwen3's head size that is not n_embd / n_head,
// gemma's sliding windows, phi3's fused matrices, partial rotation and
// LongRoPE, smollm3's layers without rotation).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gguf/gguf_writer.h"
#include "kernels/ggml_type.h"
#include "model/hparams.h"
#include "model/synth.h"

namespace peak::test {

// Sliding windows of this many cells in the tiny gemma models (and in the
// phi3 file, which llama.cpp ignores).
constexpr int64_t kTinyWindow = 8;
// The tiny phi3's LongRoPE original context: a context of more cells takes the long factors.
constexpr int64_t kTinyRopeOriginalContext = 32;

// n_embd 64, 4 heads over 2 KV heads, n_ff 96, 300 tokens; 2 layers, except
// gemma3 and gemma-embedding with 6 (five local, then one global) and smollm3
// with 4 (the last without rotation); bert with 4 KV heads, 64 positions and
// mean pooling; gemma-embedding with mean pooling and dense layers of 48;
// Gemma 3's image encoder with 4 heads over 32 x 32 pixels in 8 x 8 patches,
// 4 image tokens of 48. Gemma's soft-caps are small enough to bend these tiny
// models' scores and logits.
model::SynthSpec tiny_spec(model::Arch arch);
// Writes tiny_spec(arch) with every matrix in `matrix_type` and varied norm
// weights (seed 7); returns the path (test_temp_path).
std::string write_tiny_model(model::Arch arch, kernels::GgmlType matrix_type);
// The same for any spec (a tiny one edited), the file named after `stem`.
std::string write_tiny_spec(const model::SynthSpec& spec, kernels::GgmlType matrix_type, const std::string& stem);
// shared/models/stories260K.gguf.
std::string stories_path();
using KeyEdit = std::function<void(gguf::GgufWriter&)>;
// Element `index` of the F32 tensor `name` set to `value` (no edit when name is empty).
struct ValueEdit {
  std::string name;
  int64_t index = 0;
  float value = 0.0f;
};
// stories260K rewritten with `edit_keys` applied after its metadata and one
// value edited; returns the path (test_temp_path).
std::string edited_stories(const KeyEdit& edit_keys, const ValueEdit& value = {});
// stories260K with token `id` renamed `text` and made a control token
// (llama.cpp's LLAMA_TOKEN_TYPE_CONTROL, 3); returns the path (edited_stories).
std::string stories_with_control_token(int32_t id, const std::string& text);
// A file name in the test temp folder that no other test uses (ctest runs
// tests in parallel processes): the running test's name, then `stem`.
std::string test_temp_path(const std::string& stem);

}  // namespace peak::test
