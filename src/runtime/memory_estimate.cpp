#include "runtime/memory_estimate.h"

#include "model/vision.h"
#include "model/weight_repack.h"

namespace peak::runtime {

MemoryEstimate estimate_memory(const io::FileSource& source, const model::LoadOptions& load,
                               const ContextParams& context) {
  model::Model::check_source(source, load);
  const std::unique_ptr<model::Model> layout = model::Model::load_layout(source);
  MemoryEstimate e;
  e.weight_bytes = load.use_mmap ? layout->weight_bytes() : layout->file().size();
  // WeightRepacker repacks only a mapped file that is not locked.
  if (load.repack_weights && load.use_mmap && !load.use_mlock) {
    e.repacked_bytes = model::WeightRepacker::bytes_needed(layout->weights());
  }
  e.context = Context::memory_needed(*layout, context);
  return e;
}

ProjectorMemoryEstimate estimate_projector_memory(const io::FileSource& source, const model::LoadOptions& load,
                                                  const ImageEncoderParams& encoder) {
  model::Model::check_source(source, load);
  const std::unique_ptr<model::Projector> layout = model::Projector::load_layout(source);
  ProjectorMemoryEstimate e;
  e.weight_bytes = load.use_mmap ? layout->weight_bytes() : layout->file().size();
  e.transposed_bytes = layout->transposed_bytes();
  e.compute_bytes = ImageEncoder::compute_bytes_needed(*layout, encoder);
  const model::VisionParams& v = layout->hparams().vision;
  const int64_t max_tokens = model::max_picture_tokens(layout->hparams());
  e.image_bytes = static_cast<size_t>(max_tokens * v.n_embd_out) * sizeof(float);
  return e;
}

}  // namespace peak::runtime
