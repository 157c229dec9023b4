// A naive double-precision reference of two image encoders, the SigLIP vision
// tower with Gemma 3's multimodal projector or with Idefics3's connector
// (SmolVLM), reading a llama.cpp "mmproj" GGUF file (general.architecture
// "clip", clip.projector_type "gemma3" or "idefics3"), for checking peak's
// vision graph against something peak did not write.
//
// Written from the published model definitions: Hugging Face transformers'
// SiglipVisionModel, Gemma3MultiModalProjector and Idefics3Connector
// (pixel_shuffle, then modality_projection), with llama.cpp's clip.cpp
// (siglip graph) and convert_hf_to_gguf.py for the names and layout of the
// tensors. It uses nothing of peak but the GGUF reader and the F16 conversion of
// kernels/float16.h: not src/model, not src/runtime.
//
// Layout (ggml shape order, ne[0] first; a [in, out] matrix W gives
// out[j] = sum_i W[i + in * j] * x[i], the transpose of torch's (out, in)):
//   v.patch_embd.weight      [p, p, 3, n_embd]  element (kx, ky, c, o) at kx + p*(ky + p*(c + 3*o))
//   v.patch_embd.bias        [n_embd]
//   v.position_embd.weight   [n_embd, n_patches]  row i: patch i, numbered row-major (py * S/p + px)
//   v.blk.N.ln1 / ln2        .weight, .bias [n_embd]
//   v.blk.N.attn_q/k/v/out   .weight [n_embd, n_embd], .bias [n_embd]
//   v.blk.N.ffn_up           .weight [n_embd, n_ff], .bias [n_ff]
//   v.blk.N.ffn_down         .weight [n_ff, n_embd], .bias [n_embd]
//   v.post_ln                .weight, .bias [n_embd]
//   mm.soft_emb_norm.weight  [n_embd]  (1 + HF's weight, as the converter stores it)
//   mm.input_projection.weight [n_embd_text, n_embd]  out[t] = sum_c x[c] * W[t + n_embd_text * c]
//   mm.model.fc.weight       [n_embd s s, n_embd_text] (idefics3; s = scale_factor, 2 when absent)
// Tensors must be F32 or F16; any other type is refused with an exception.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"

namespace peak::test {

// pixels: normalised, channel-major [3][S][S] (S = clip.vision.image_size), as
// HF's processor produces. Returns [n_tokens][n_embd_text] row-major, n_tokens =
// (S / p / k)^2 with p = clip.vision.patch_size and k =
// clip.vision.projector.scale_factor (when absent 4 for gemma3, 2 for idefics3). Throws std::runtime_error
// (or gguf::GgufError from the reader) for a file it cannot read this way.
std::vector<double> image_embeddings_reference(const gguf::GgufFile& file, const std::vector<double>& pixels,
                                               int64_t* n_tokens_out, int64_t* n_embd_text_out);

// Qwen2.5-VL's image encoder (clip.projector_type "qwen2.5vl_merger"),
// written from HF transformers' Qwen2_5_VisionTransformerPretrainedModel in
// the plainest form: patches in raster order (py * nx + px; attention does not
// care for HF's order, the merger's grouping is explicit), the window of each
// patch by its token's coordinates (an explicit membership test: windows of
// window_size / (p m) tokens a side, clip.vision.window_size or 112 pixels),
// the 2D rotary positions computed per pair. Tensors:
//   v.patch_embd.weight, .weight.1 [p, p, 3, n_embd] the Conv3D's two frames (no bias)
//   v.blk.N.ln1 / ln2 .weight [n_embd] RMS norms (eps clip.vision.attention.layer_norm_epsilon)
//   v.blk.N.attn_q/k/v/out .weight [n_embd, n_embd], .bias [n_embd]
//   v.blk.N.ffn_gate/up .weight [n_embd, n_ff], .bias [n_ff]; ffn_down [n_ff, n_embd], .bias
//   v.post_ln.weight [n_embd] RMS; mm.0 [4 n_embd, 4 n_embd] + bias, gelu (erf), mm.2 [4 n_embd, T] + bias
// pixels: normalised, channel-major [3][height][width], both sides multiples
// of 2 p. Returns [n_tokens][T] row-major, tokens row by row over the
// (height / 2p) x (width / 2p) token grid.
std::vector<double> qwen25vl_embeddings_reference(const gguf::GgufFile& file, const std::vector<double>& pixels,
                                                  int64_t width, int64_t height, int64_t* n_tokens_out,
                                                  int64_t* n_embd_text_out);

// The processors' rescale and normalise (HF Gemma3ImageProcessor's, SmolVLM's,
// Qwen2-VL's) of an already-resized RGB8 picture of width x height,
// interleaved RGB rows top to bottom, with the file's clip.vision.image_mean /
// image_std: (v / 255 - mean[c]) / std[c], channel-major [3][height][width].
std::vector<double> normalise_reference(const gguf::GgufFile& file, const uint8_t* rgb, int64_t width, int64_t height);

// The largest magnitude among `v`: the scale of a relative difference.
inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (const double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace peak::test
