// Pictures in a conversation: how a session holds an image's tokens.
//
// An image enters the language model as n_tokens embedding rows of its width
// (runtime::ImageEncoder's output) in one frame or several (SmolVLM's tiles and
// overview), framed by text the model's processor puts around them
// (model::PictureLayout: Gemma 3 "\n\n<start_of_image>" before its one frame,
// "<end_of_image>\n\n" after). A message's text shows where each of its images
// goes by the marker kImageMarker, in order (llama.cpp's mtmd marker is the
// same text).
//
// The session writes its conversation as token ids (Recent's messages, the
// cells' tokens, session files); an image's rows take ids of their own there,
// all negative and so never a vocabulary id: image_token(image, row). Token
// runs compare, cut and move as text does, and evaluate_cells() hands each
// image's run to Context::eval_embeddings, the rest to Context::eval.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/arch_spec.h"
#include "runtime/kv_cache.h"

namespace peak::core {
class Cancellation;
}
namespace peak::runtime {
class Context;
}

namespace peak::chat {

// Where a message's text holds an image.
inline constexpr const char* kImageMarker = "<__media__>";
// What the summarizer reads in its place: the model's answers about the
// picture carry what the summary keeps of it, never its rows.
inline constexpr const char* kImageInSummary = "[an image]";

// An image's rows, immutable once made: messages, Recent and the summary
// worker share them.
struct SessionImage {
  uint32_t id = 0;    // 0 .. kMaxImages - 1: its tokens carry it
  uint64_t hash = 0;  // io::fnv1a of the rows' bytes: the same picture sent again is one image
  int64_t n_tokens = 0;
  int64_t n_embd = 0;
  bool bidirectional = false;  // each frame's rows attend to each other both ways (one batch)
  // The tiles it was cut into (0 x 0: one frame) and the texts around its
  // frames, from the projector's row (model::frame_texts): texts[i] before
  // frame i, the last after; each frame n_tokens / n_frames() rows.
  int64_t grid_rows = 0;
  int64_t grid_cols = 0;
  std::vector<std::string> texts;
  // A frame's tokens across, row by row, for a projector whose language model
  // places them by row and column (Qwen2.5-VL's, whose text model rotates
  // them by M-RoPE: Context::eval_embeddings' picture_cols); 0 for others.
  int64_t token_cols = 0;
  std::vector<float> rows;  // n_tokens x n_embd, row by row

  int64_t n_frames() const { return static_cast<int64_t>(texts.size()) - 1; }
  int64_t rows_per_frame() const { return n_tokens / n_frames(); }
};
using ImagePtr = std::shared_ptr<const SessionImage>;
using ImageList = std::vector<ImagePtr>;

// Ids are 16 bits and rows 15 within the 31 bits of a negative int32.
inline constexpr uint32_t kMaxImages = 1u << 16;
inline constexpr int64_t kMaxImageTokens = 1 << 15;

inline constexpr int32_t image_token(uint32_t image, int64_t row) {
  return -1 - static_cast<int32_t>((image << 15) | static_cast<uint32_t>(row));
}
inline constexpr bool is_image_token(int32_t token) { return token < 0; }
inline constexpr uint32_t image_of(int32_t token) { return static_cast<uint32_t>(-1 - token) >> 15; }
inline constexpr int64_t image_row(int32_t token) {
  return static_cast<int64_t>(static_cast<uint32_t>(-1 - token) & 0x7FFF);
}

// How many times `text` holds kImageMarker.
size_t count_image_markers(const std::string& text);
// `text` with kImageInSummary in place of each marker.
std::string text_for_summary(const std::string& text);
// The image of id `id` among `images`, or null.
ImagePtr find_image(const ImageList& images, uint32_t id);
// A picture of n_tokens rows cut into grid_rows x grid_cols tiles (0 x 0:
// one frame) by the projector of row `projector`, token_cols of them across
// a frame (needed by projectors that size each picture, Qwen2.5-VL's; 0
// for others), without its id, hash and rows: its framing (texts,
// bidirectional, token_cols). std::invalid_argument naming what is wrong: a
// grid the projector does not cut, rows that do not divide into its frames
// (or a frame into rows of token_cols), or frames longer than max_frame_rows
// when they attend both ways.
SessionImage frame_image(model::Arch projector, int64_t n_tokens, int64_t grid_rows, int64_t grid_cols,
                         int64_t max_frame_rows, int64_t token_cols = 0);
// The images of `from` that `to` does not hold yet, added to it.
void add_images(ImageList& to, const ImageList& from);

// Evaluates tokens[0 .. n) into `ctx` as Context::eval appends tokens: each
// run of an image's tokens by eval_embeddings (its rows among `images`;
// placed by row and column when the cache keeps places and the image has
// token_cols), the text between by eval. On failure the cache and its logits
// are as before. std::invalid_argument for an image token whose image
// `images` lacks, or a placed picture's run that starts past its first row.
void evaluate_cells(runtime::Context& ctx, const int32_t* tokens, int64_t n, const ImageList& images,
                    const core::Cancellation* cancel = nullptr);
// The positions cells holding `tokens` take, evaluated from position 0 as
// evaluate_cells() does, and with `places` (a cache that keeps them) each
// one's place in its picture: what saved cells are checked against and
// restored with.
struct CellPositions {
  std::vector<int32_t> positions;
  std::vector<runtime::PicturePlace> places;  // empty without `places`
};
CellPositions cell_positions(const std::vector<int32_t>& tokens, const ImageList& images, bool places);
// The text tokens of `tokens`, in order (what a sampler's penalty window or a
// draft model reads).
std::vector<int32_t> text_tokens(const std::vector<int32_t>& tokens);

}  // namespace peak::chat
