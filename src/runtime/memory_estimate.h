// The memory a model load and a context on it would take, computed from the
// model file's metadata alone, before loading it: so a program (an app on a
// phone) can refuse a model that cannot fit instead of being killed for it.
#pragma once

#include <cstdint>

#include "io/mapped_file.h"
#include "model/model.h"
#include "runtime/context.h"
#include "runtime/image_encoder.h"

namespace peak::runtime {

struct MemoryEstimate {
  // The weights as a load holds them: the tensors' bytes of a mapped file;
  // the whole file (or region), metadata included, when read into memory.
  uint64_t weight_bytes = 0;
  // New memory for the matrices a load repacks to the kernels' layout (a
  // mapped file that is not locked, repack_weights set): each one's file pages
  // are dropped once it is done, so a settled model holds about weight_bytes,
  // but while it repacks, up to both.
  uint64_t repacked_bytes = 0;
  ContextMemory context;  // Context::memory_needed
  // All of the above: an upper bound on what load and context hold, less the
  // tokenizer's tables and other small allocations.
  uint64_t total() const { return weight_bytes + repacked_bytes + context.kv_bytes + context.compute_bytes; }
};

// Maps `source` and reads its metadata (model::Model::load_layout: no tensor
// data is read); throws what a load with `load` and a context with `context`
// would throw for their metadata and parameters (the tensors' values are not
// checked). Assumes a requested mlock succeeds.
MemoryEstimate estimate_memory(const io::FileSource& source, const model::LoadOptions& load,
                               const ContextParams& context);

// The same for an image encoder: its projector file loaded with `load` and
// an ImageEncoder with `encoder` on it, and the rows of a largest picture.
struct ProjectorMemoryEstimate {
  uint64_t weight_bytes = 0;      // as MemoryEstimate's (the projector file's)
  uint64_t transposed_bytes = 0;  // the projector matrix made a product's layout (Projector)
  size_t compute_bytes = 0;       // the encoder's buffers (ImageEncoder::compute_bytes: one frame's graph)
  // A largest picture's image tokens: model::max_picture_tokens x n_embd
  // floats (max_picture_frames x n_image_tokens for fixed-size frames; a
  // SmartResize row's max_pixels worth).
  size_t image_bytes = 0;
  uint64_t total() const { return weight_bytes + transposed_bytes + compute_bytes + image_bytes; }
};

// Reads `source`'s metadata only (model::Projector::load_layout); throws what
// a load would throw for it.
ProjectorMemoryEstimate estimate_projector_memory(const io::FileSource& source, const model::LoadOptions& load,
                                                  const ImageEncoderParams& encoder);

}  // namespace peak::runtime
