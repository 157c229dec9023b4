// Runs an image encoder (model::Projector) on pictures: each becomes the
// embeddings of its image tokens, rows of the language model's width, ready
// to take the place of token embeddings in a prompt: one frame's
// n_image_tokens, or several frames' (a tiled picture, model::PictureLayout)
// one after another. The graph, allocator and thread pool are reserved at
// creation, so encoding allocates nothing but its frames, its index tables and
// its result. Encoders whose frames vary in size (Qwen2.5-VL's smart_resize)
// reserve for the largest, max_pixels worth of patches, and build each
// frame's graph anew at its size, placing it in the reserved buffers (the
// graph's shape depends on the patch count alone, so a smaller one always
// fits). An ImageEncoder is used by one thread at a time; several may share one projector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"
#include "image/image.h"
#include "model/projector.h"
#include "model/vision.h"

namespace peak::runtime {

struct ImageEncoderParams {
  int n_threads = 0;  // 0: the fast cores the process may use (core::default_threads)
};

class ImageEncoder {
 public:
  explicit ImageEncoder(const model::Projector& projector, const ImageEncoderParams& params = {});

  const model::Projector& projector() const { return projector_; }
  // The image tokens of one frame of fixed size; a picture has
  // model::picture_layout's frames (and, SmartResize rows, its tokens_per_frame).
  int64_t n_image_tokens() const { return projector_.hparams().vision.n_image_tokens(); }
  int64_t n_embd_out() const { return projector_.hparams().vision.n_embd_out; }

  // The image tokens' embeddings of `picture` (RGB or RGBA, any size: resized
  // and cut into frames as the model's processor does): its frames
  // (model::picture_layout) in order, each tokens_per_frame x n_embd_out
  // floats, token by token (row by row over the frame's token grid).
  // Throws image::ImageError for a picture it cannot resize.
  std::vector<float> encode(const image::Image& picture);

  // Its compute and work buffers, reserved at creation (one frame's graph).
  size_t compute_bytes() const;
  // What an encoder on `projector` (a layout will do: Projector::load_layout)
  // with `params` reserves, by making one.
  static size_t compute_bytes_needed(const model::Projector& projector, const ImageEncoderParams& params);

 private:
  // One frame (vision_frames) of `grid` patches through the graph; writes its
  // tokens x n_embd_out floats.
  void encode_frame(const image::Image& frame, model::PatchGrid grid, float* out);

  const model::Projector& projector_;
  int n_threads_;
  core::ThreadPool pool_;
  core::Graph graph_;
  core::GraphAllocator allocator_;
  std::vector<int32_t> positions_;
};

}  // namespace peak::runtime
