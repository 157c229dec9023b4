// Tiny synthetic models of each architecture, written to the test's temp folder:
// small enough for a naive reference forward pass, shaped like the real ones
// (grouped-query attention, qwen3's head size that is not n_embd / n_head).
#pragma once

#include <string>

#include "kernels/ggml_type.h"
#include "model/hparams.h"
#include "model/synth.h"

namespace peak::test {

// 2 layers, n_embd 64, 4 heads over 2 KV heads, n_ff 96, 300 tokens.
model::SynthSpec tiny_spec(model::Arch arch);
// Writes tiny_spec(arch) with every matrix in `matrix_type` (seed 7); returns the path.
std::string write_tiny_model(model::Arch arch, GgmlType matrix_type);

}  // namespace peak::test
