// The forward graph of the image encoders peak runs (ArchSpec::projector_type
// rows, llama.cpp's projector files) and the input it takes. An image becomes
// a square of image_size pixels (resized with its processor's filter and
// normalised per channel), cut into patches of p x p; a convolution of stride
// p, one matrix product over each patch's 3 p p values, embeds them; each
// patch's position row is added; the vision transformer's layers (pre-norm
// LayerNorm blocks run by the decoders' builder without a cache, every patch
// attending to every other) and a final LayerNorm follow. Gemma 3's projector
// then averages merge x merge neighbouring patches into one image token,
// RMS-normalises it and maps it into the language model's width.
//
// The patches enter in token order: the merge x merge patches of image token
// 0 first, then those of token 1 ... (tokens row by row across the image,
// patches row by row within a token). Attention does not depend on the order
// of its inputs and each patch keeps its own position row, so the states are
// those of the image's row-major order, permuted; the average of a token's
// patches is then the mean of consecutive rows (core::Graph::mean_rows).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "image/image.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace peak::model {

// The inputs the caller fills before each compute (vision_positions(),
// vision_patches()); the merged rows are fixed: token t averages rows
// [t merge^2, (t + 1) merge^2).
struct VisionInputs {
  core::Tensor* patches = nullptr;      // F32 [3 p p, n_patches]: vision_patches()
  core::Tensor* positions = nullptr;    // I32 [n_patches]: vision_positions()
  core::Tensor* merged_rows = nullptr;  // I32 [2, n_image_tokens]; VisionConnector::MeanNormProject only
};

// Builds the encoder's forward pass for one image; returns its image tokens'
// embeddings, F32 [n_embd_out, n_image_tokens] (marked as output).
core::Tensor* build_vision_encoder(core::Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs);

// Where the graph's patch i lies in the image: py * patches_per_side + px,
// in token order (above); n_patches entries.
std::vector<int32_t> vision_positions(const HParams& hp);

// An image's patches as the graph takes them (VisionInputs::patches): the
// picture without alpha, resized to image_size x image_size with the row's
// filter (unless it has that size), each value v / 255 normalised by the
// file's mean and std, each patch's 3 p p values channel by channel, rows
// top to bottom (the convolution kernel's order), patches in token order.
// `out` holds n_patches x 3 p p floats. Throws image::ImageError.
void vision_patches(const image::Image& picture, const HParams& hp, float* out);

}  // namespace peak::model
