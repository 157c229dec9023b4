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
#include <string>
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

// How a picture of width x height pixels enters the language model, as the
// model's processor frames it: n_frames() runs of tokens_per_frame image
// tokens (the encoder's output for each frame), texts[i] before run i and
// texts[n_frames()] after the last (special tokens in them, tokenized with
// parse_special). One frame, a picture resized to the encoder's square
// (Gemma 3: "\n\n<start_of_image>", the tokens, "<end_of_image>\n\n"); SmolVLM
// (VisionTiling::GridAndOverview) cuts a picture into grid_rows x grid_cols
// tiles of image_size, row by row, then the whole picture shrunk to one tile
// (the overview, last), each tile after its "<fake_token_around_image>
// <row_r_col_c>" and a newline after each row of tiles, as Hugging Face's
// Idefics3/SmolVLM processor writes them.
struct PictureLayout {
  int64_t grid_rows = 0;  // tiles down; 0: the picture is not cut (one frame)
  int64_t grid_cols = 0;  // tiles across
  int64_t tokens_per_frame = 0;
  std::vector<std::string> texts;  // n_frames() + 1

  int64_t n_frames() const { return static_cast<int64_t>(texts.size()) - 1; }
  int64_t n_tokens() const { return n_frames() * tokens_per_frame; }
};

// The texts of a picture cut into grid_rows x grid_cols tiles (0 x 0: not cut)
// by the projector row `spec`: PictureLayout::texts. Throws
// std::invalid_argument for a grid the row does not cut (any but 0 x 0
// without tiling, a grid with one side 0, more than kMaxGridSide a side).
std::vector<std::string> frame_texts(const ArchSpec& spec, int64_t grid_rows, int64_t grid_cols);
inline constexpr int64_t kMaxGridSide = 64;

// The layout of a picture of width x height pixels (each at least 1, else
// std::invalid_argument).
PictureLayout picture_layout(const HParams& hp, int64_t width, int64_t height);
// The most frames a picture can have (the memory a session may keep per picture).
int64_t max_picture_frames(const HParams& hp);

// The frames the encoder sees of `picture`, in picture_layout's order, RGB:
// the picture itself when the row does not tile (vision_patches resizes it),
// else the processor's resized picture when it is one tile, or the tiles and
// the overview, each image_size a side. Throws image::ImageError.
std::vector<image::Image> vision_frames(const image::Image& picture, const HParams& hp);

}  // namespace peak::model
