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
//
// Qwen2.5-VL (VisionConnector::MergeMlp) differs: a picture keeps its own
// size (smart_resize), so the graph is built per picture size (PatchGrid);
// patches are embedded by two kernels summed, carry 2D rotary positions
// instead of position rows, and enter window by window (vision_positions),
// so that window attention is attention within contiguous row ranges
// (VisionInputs::window_ranges, the encoders' key ranges); the tokens come
// out in window order and are put back in raster order by the caller
// (vision_token_order).
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
  core::Tensor* patches = nullptr;  // F32 [3 p p, n_patches]: vision_patches()
  // I32 [n_patches]: vision_positions(); with 2D rotary positions
  // (RopeMode::Vision) I32 [2 n_patches]: each patch's row py, then each one's column px.
  core::Tensor* positions = nullptr;
  core::Tensor* merged_rows = nullptr;  // I32 [2, n_image_tokens]; VisionConnector::MeanNormProject only
  // I32 [2, n_patches]: the graph rows [first, end) of each patch's attention
  // window (vision_window_ranges()); ArchSpec::window_attention rows with a
  // windowed layer only.
  core::Tensor* window_ranges = nullptr;
};

// The patches of one image the encoder sees: nx across, ny down. Fixed-size
// rows always see patches_per_side a side; SmartResize rows (Qwen2.5-VL) a
// grid of the picture's resized size (vision_frame_size), both sides
// multiples of merge.
struct PatchGrid {
  int64_t nx = 0;
  int64_t ny = 0;
  int64_t n_patches() const { return nx * ny; }
};
// The fixed-size rows' grid (patches_per_side a side).
PatchGrid square_grid(const HParams& hp);

// Builds the encoder's forward pass for one image of `grid` patches (a fixed-size row's
// must be square_grid()); returns its image tokens' embeddings, F32
// [n_embd_out, n_image_tokens], in the order the patches enter (marked as output).
core::Tensor* build_vision_encoder(core::Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs);
core::Tensor* build_vision_encoder(core::Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs,
                                   PatchGrid grid);

// Where the graph's patch i lies in the image: py * patches_per_side + px,
// in token order (above); n_patches entries.
std::vector<int32_t> vision_positions(const HParams& hp);
// The same for an image of `grid` patches (py * nx + px). Window-attention
// rows (Qwen2.5-VL) order the image tokens by window: windows of
// window_tokens x window_tokens tokens tiling the token grid from the top
// left, row by row (the right and bottom ones partial), each window's tokens
// row by row, each token's merge x merge patches row by row; so a window's
// patches are consecutive graph rows, and the graph's tokens come out in
// that order (vision_token_order maps them back).
std::vector<int32_t> vision_positions(const HParams& hp, PatchGrid grid);
// Per graph row (vision_positions order), the rows [first, end) of its
// window: I32 pairs for VisionInputs::window_ranges.
std::vector<int32_t> vision_window_ranges(const HParams& hp, PatchGrid grid);
// Per graph output token, its place among the image's tokens in raster order
// (row by row over the token grid).
std::vector<int32_t> vision_token_order(const HParams& hp, PatchGrid grid);

// HF's smart_resize (Qwen2-VL / Qwen2.5-VL image processor) of a picture of
// width x height pixels for a SmartResize row, in Python's arithmetic (round
// half to even): each side rounded to a multiple of f = patch_size x merge
// (at least f); if that exceeds max_pixels, both scaled down by sqrt(h w /
// max_pixels) and floored to multiples of f; if under min_pixels, scaled up
// by sqrt(min_pixels / (h w)) and ceiled. Throws std::invalid_argument for a
// side under 10 pixels or an aspect ratio over 200 (as HF does), or a result
// over max_pixels (a file whose limits are too close).
struct FrameSize {
  int64_t width = 0;
  int64_t height = 0;
};
FrameSize smart_resize(const HParams& hp, int64_t width, int64_t height);
// The image the encoder sees of a picture of width x height: SmartResize rows'
// smart_resize, others the image_size square.
FrameSize vision_frame_size(const HParams& hp, int64_t width, int64_t height);
// The patch grid of a frame of that size (vision_frame_size's).
PatchGrid frame_grid(const HParams& hp, FrameSize frame);
// The most image tokens a picture can have, all frames (the memory a session
// may keep per picture).
int64_t max_picture_tokens(const HParams& hp);

// An image's patches as the graph takes them (VisionInputs::patches): the
// picture without alpha, resized to image_size x image_size with the row's
// filter (unless it has that size; SmartResize rows: to vision_frame_size), each value v / 255 normalised by the
// file's mean and std, each patch's 3 p p values channel by channel, rows
// top to bottom (the convolution kernel's order), patches in token order
// (vision_positions). `out` holds n_patches x 3 p p floats (of frame_grid). Throws image::ImageError.
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
  // A frame's image tokens across and down (tokens_per_frame = their
  // product): SmartResize rows' vary with the picture ((W / f) x (H / f) of
  // smart_resize's W x H, Qwen2.5-VL's "<|vision_start|>", the tokens,
  // "<|vision_end|>").
  int64_t token_cols = 0;
  int64_t token_rows = 0;
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
// A frame's tokens across as the language model places them by row and
// column (a projector that sizes each picture, Qwen2.5-VL's, whose text
// model rotates its tokens by M-RoPE): layout.token_cols; 0 for other
// projectors, whose tokens follow one another.
int64_t placed_token_cols(const HParams& hp, const PictureLayout& layout);
// The most frames a picture can have (the memory a session may keep per picture).
int64_t max_picture_frames(const HParams& hp);

// The frames the encoder sees of `picture`, in picture_layout's order, RGB:
// the picture itself when the row does not tile (vision_patches resizes it),
// else the processor's resized picture when it is one tile, or the tiles and
// the overview, each image_size a side. Throws image::ImageError.
std::vector<image::Image> vision_frames(const image::Image& picture, const HParams& hp);

}  // namespace peak::model
