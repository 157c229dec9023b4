#include "runtime/image_encoder.h"

#include <cstring>
#include <vector>

#include "core/cpu_topology.h"
#include "core/executor.h"

namespace peak::runtime {

namespace {

// The grid of the largest frame: the square for fixed-size rows; for
// SmartResize rows one row of max_pixels' tokens (the graph's shape depends on
// the patch count only).
model::PatchGrid largest_grid(const model::HParams& hp) {
  if (hp.spec().tiling != model::VisionTiling::SmartResize) return model::square_grid(hp);
  const int64_t m = hp.vision.merge;
  return {model::max_picture_tokens(hp) * m, m};
}

}  // namespace

ImageEncoder::ImageEncoder(const model::Projector& projector, const ImageEncoderParams& params)
    : projector_(projector),
      n_threads_(core::pass_threads(params.n_threads)),
      pool_(n_threads_),
      positions_(model::vision_positions(projector.hparams())) {
  model::VisionInputs inputs;
  model::build_vision_encoder(graph_, projector_.hparams(), projector_.weights(), inputs,
                              largest_grid(projector_.hparams()));
  allocator_.reserve(graph_, n_threads_);
}

size_t ImageEncoder::compute_bytes() const { return allocator_.planned_bytes() + allocator_.work_buffer().size; }

size_t ImageEncoder::compute_bytes_needed(const model::Projector& projector, const ImageEncoderParams& params) {
  return ImageEncoder(projector, params).compute_bytes();
}

std::vector<float> ImageEncoder::encode(const image::Image& picture) {
  const model::HParams& hp = projector_.hparams();
  const std::vector<image::Image> frames = model::vision_frames(picture, hp);
  std::vector<model::PatchGrid> grids;
  int64_t tokens = 0;
  for (const image::Image& frame : frames) {
    grids.push_back(model::frame_grid(hp, model::vision_frame_size(hp, frame.width, frame.height)));
    tokens += grids.back().n_patches() / (hp.vision.merge * hp.vision.merge);
  }
  std::vector<float> out(static_cast<size_t>(tokens * n_embd_out()));
  float* next = out.data();
  for (size_t i = 0; i < frames.size(); ++i) {
    encode_frame(frames[i], grids[i], next);
    next += grids[i].n_patches() / (hp.vision.merge * hp.vision.merge) * n_embd_out();
  }
  return out;
}

void ImageEncoder::encode_frame(const image::Image& frame, model::PatchGrid grid, float* out) {
  const model::HParams& hp = projector_.hparams();
  const int64_t per_token = hp.vision.merge * hp.vision.merge;
  const int64_t n_tokens = grid.n_patches() / per_token;
  // The inputs are filled anew for each frame: intermediates take their
  // memory once they are read (core::GraphAllocator).
  graph_.reset();
  model::VisionInputs in;
  const core::Tensor* result = model::build_vision_encoder(graph_, hp, projector_.weights(), in, grid);
  allocator_.allocate(graph_);

  model::vision_patches(frame, hp, static_cast<float*>(in.patches->data));
  std::vector<int32_t> order;  // graph token -> raster token; empty: the same
  auto* positions = static_cast<int32_t*>(in.positions->data);
  if (hp.rope.mode == core::RopeMode::Vision) {
    // 2D rotary positions: each patch's row, then each patch's column.
    const std::vector<int32_t> raster = model::vision_positions(hp, grid);
    const int64_t n = grid.n_patches();
    for (int64_t i = 0; i < n; ++i) {
      positions[i] = static_cast<int32_t>(raster[static_cast<size_t>(i)] / grid.nx);
      positions[n + i] = static_cast<int32_t>(raster[static_cast<size_t>(i)] % grid.nx);
    }
    order = model::vision_token_order(hp, grid);
  } else {
    std::memcpy(positions, positions_.data(), positions_.size() * sizeof(int32_t));
  }
  if (in.window_ranges) {
    const std::vector<int32_t> ranges = model::vision_window_ranges(hp, grid);
    std::memcpy(in.window_ranges->data, ranges.data(), ranges.size() * sizeof(int32_t));
  }
  if (in.merged_rows) {
    auto* merged = static_cast<int32_t*>(in.merged_rows->data);
    for (int64_t t = 0; t < n_tokens; ++t) {
      merged[2 * t] = static_cast<int32_t>(t * per_token);
      merged[2 * t + 1] = static_cast<int32_t>((t + 1) * per_token);
    }
  }
  core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer());

  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t place = order.empty() ? t : order[static_cast<size_t>(t)];
    std::memcpy(out + place * n_embd_out(), result->row_ptr(t), static_cast<size_t>(n_embd_out()) * sizeof(float));
  }
}

}  // namespace peak::runtime
