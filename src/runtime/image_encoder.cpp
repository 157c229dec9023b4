#include "runtime/image_encoder.h"

#include <cstring>

#include "core/cpu_topology.h"
#include "core/executor.h"

namespace peak::runtime {

ImageEncoder::ImageEncoder(const model::Projector& projector, const ImageEncoderParams& params)
    : projector_(projector),
      n_threads_(core::pass_threads(params.n_threads)),
      pool_(n_threads_),
      positions_(model::vision_positions(projector.hparams())) {
  model::VisionInputs inputs;
  model::build_vision_encoder(graph_, projector_.hparams(), projector_.weights(), inputs);
  allocator_.reserve(graph_, n_threads_);
}

size_t ImageEncoder::compute_bytes() const { return allocator_.planned_bytes() + allocator_.work_buffer().size; }

size_t ImageEncoder::compute_bytes_needed(const model::Projector& projector, const ImageEncoderParams& params) {
  return ImageEncoder(projector, params).compute_bytes();
}

std::vector<float> ImageEncoder::encode(const image::Image& picture) {
  const std::vector<image::Image> frames = model::vision_frames(picture, projector_.hparams());
  const auto frame_floats = static_cast<size_t>(n_image_tokens() * n_embd_out());
  std::vector<float> out(frames.size() * frame_floats);
  for (size_t i = 0; i < frames.size(); ++i) encode_frame(frames[i], out.data() + i * frame_floats);
  return out;
}

void ImageEncoder::encode_frame(const image::Image& frame, float* out) {
  const model::HParams& hp = projector_.hparams();
  const int64_t per_token = hp.vision.merge * hp.vision.merge;
  // The inputs are filled anew for each frame: intermediates take their
  // memory once they are read (core::GraphAllocator).
  graph_.reset();
  model::VisionInputs in;
  const core::Tensor* result = model::build_vision_encoder(graph_, hp, projector_.weights(), in);
  allocator_.allocate(graph_);

  model::vision_patches(frame, hp, static_cast<float*>(in.patches->data));
  std::memcpy(in.positions->data, positions_.data(), positions_.size() * sizeof(int32_t));
  if (in.merged_rows) {
    auto* merged = static_cast<int32_t*>(in.merged_rows->data);
    for (int64_t t = 0; t < n_image_tokens(); ++t) {
      merged[2 * t] = static_cast<int32_t>(t * per_token);
      merged[2 * t + 1] = static_cast<int32_t>((t + 1) * per_token);
    }
  }
  core::compute_graph(graph_, pool_, n_threads_, allocator_.work_buffer());

  for (int64_t t = 0; t < n_image_tokens(); ++t) {
    std::memcpy(out + t * n_embd_out(), result->row_ptr(t), static_cast<size_t>(n_embd_out()) * sizeof(float));
  }
}

}  // namespace peak::runtime
