// peak_image_*, peak_projector_* and peak_image_encoder_*: pictures and the
// image encoders of vision-language models.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "capi/capi_guard.h"
#include "capi/capi_handles.h"
#include "image/image.h"
#include "model/projector.h"
#include "model/vision.h"
#include "runtime/memory_estimate.h"
#include "runtime/image_encoder.h"

struct peak_image {
  peak::image::Image picture;
};

struct peak_image_encoder {
  const peak_projector* projector;
  std::unique_ptr<peak::runtime::ImageEncoder> encoder;
};

namespace {

using peak::capi::fail;
using peak::capi::guarded;

peak_status load_projector(const peak::io::FileSource& source, const peak_model_params* params, const char* function,
                           peak_projector** out) {
  peak::model::LoadOptions options;
  if (const peak_status st = peak::capi::load_options(params, function, &options); st != PEAK_OK) return st;
  return guarded([&] {
    auto p = std::make_unique<peak_projector>();
    p->projector = peak::model::Projector::load(source, options);
    *out = p.release();
    return PEAK_OK;
  });
}

// Reads the encoder params (NULL: the defaults); false with the error set.
bool encoder_params_from_c(const peak_image_encoder_params* params, peak::runtime::ImageEncoderParams* out) {
  const peak_image_encoder_params p = params ? *params : peak_image_encoder_default_params();
  if (!peak::capi::struct_size_ok(p.struct_size, sizeof(peak_image_encoder_params), "peak_image_encoder_params")) {
    return false;
  }
  out->n_threads = peak::capi::thread_count(p.n_threads);
  return true;
}

peak_status estimate(const peak::io::FileSource& source, const peak_model_params* params,
                     const peak_image_encoder_params* encoder_params, const char* function, peak_memory_estimate* out) {
  peak::model::LoadOptions options;
  if (const peak_status st = peak::capi::load_options(params, function, &options); st != PEAK_OK) return st;
  peak::runtime::ImageEncoderParams ep;
  if (!encoder_params_from_c(encoder_params, &ep)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    const peak::runtime::ProjectorMemoryEstimate e = peak::runtime::estimate_projector_memory(source, options, ep);
    out->weight_bytes = e.weight_bytes;
    out->repacked_bytes = e.transposed_bytes;
    out->kv_bytes = 0;
    out->compute_bytes = e.compute_bytes + e.image_bytes;
    out->total_bytes = e.total();
    return PEAK_OK;
  });
}

}  // namespace

extern "C" {

peak_status peak_image_decode(const uint8_t* data, size_t size, peak_image** out) {
  PEAK_CHECK_ARG(out, "peak_image_decode: out");
  *out = nullptr;
  PEAK_CHECK_ARG(data, "peak_image_decode: data");
  return guarded([&] {
    auto image = std::make_unique<peak_image>();
    image->picture = peak::image::decode(data, size);
    *out = image.release();
    return PEAK_OK;
  });
}

peak_status peak_image_from_pixels(const uint8_t* pixels, uint32_t width, uint32_t height, uint32_t channels,
                                   size_t stride, peak_image** out) {
  PEAK_CHECK_ARG(out, "peak_image_from_pixels: out");
  *out = nullptr;
  PEAK_CHECK_ARG(pixels, "peak_image_from_pixels: pixels");
  if (channels != 3 && channels != 4) {
    return fail(PEAK_ERR_INVALID_ARGUMENT,
                "peak_image_from_pixels: channels is " + std::to_string(channels) + "; pixels are RGB (3) or RGBA (4)");
  }
  const peak::image::DecodeLimits limits;
  if (width == 0 || height == 0 || width > limits.max_dimension || height > limits.max_dimension ||
      uint64_t{width} * height > limits.max_pixels) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_image_from_pixels: " + std::to_string(width) + " x " +
                                               std::to_string(height) + " pixels; a picture has 1 to " +
                                               std::to_string(limits.max_dimension) + " a side and at most " +
                                               std::to_string(limits.max_pixels) + " pixels");
  }
  const size_t row = size_t{width} * channels;
  if (stride == 0) stride = row;
  if (stride < row) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_image_from_pixels: stride " + std::to_string(stride) +
                                               " is shorter than a row of " + std::to_string(row) + " bytes");
  }
  return guarded([&] {
    auto image = std::make_unique<peak_image>();
    peak::image::Image& p = image->picture;
    p.width = width;
    p.height = height;
    p.channels = channels;
    p.pixels.resize(row * height);
    for (uint32_t y = 0; y < height; ++y) std::memcpy(p.pixels.data() + y * row, pixels + y * stride, row);
    *out = image.release();
    return PEAK_OK;
  });
}

void peak_image_free(peak_image* image) { delete image; }

peak_status peak_image_get_size(const peak_image* image, uint32_t* width, uint32_t* height, uint32_t* channels) {
  PEAK_CHECK_ARG(image, "peak_image_get_size: image");
  if (width) *width = image->picture.width;
  if (height) *height = image->picture.height;
  if (channels) *channels = image->picture.channels;
  return PEAK_OK;
}

peak_status peak_projector_load(const char* path, const peak_model_params* params, peak_projector** out) {
  PEAK_CHECK_ARG(out, "peak_projector_load: out");
  *out = nullptr;
  PEAK_CHECK_ARG(path, "peak_projector_load: path");
  return load_projector(peak::io::FileSource::path(path), params, "peak_projector_load", out);
}

peak_status peak_projector_load_fd(int fd, uint64_t offset, uint64_t length, const peak_model_params* params,
                                   peak_projector** out) {
  PEAK_CHECK_ARG(out, "peak_projector_load_fd: out");
  *out = nullptr;
  peak::io::FileSource source;
  if (const peak_status st = peak::capi::fd_source(fd, offset, length, "peak_projector_load_fd", &source);
      st != PEAK_OK) {
    return st;
  }
  return load_projector(source, params, "peak_projector_load_fd", out);
}

void peak_projector_free(peak_projector* projector) { delete projector; }

peak_status peak_projector_get_info(const peak_projector* projector, peak_projector_info* info) {
  PEAK_CHECK_ARG(projector, "peak_projector_get_info: projector");
  PEAK_CHECK_ARG(info, "peak_projector_get_info: info");
  if (!peak::capi::struct_size_ok(info->struct_size, sizeof(peak_projector_info), "peak_projector_info")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  const peak::model::Projector& p = *projector->projector;
  const peak::model::VisionParams& v = p.hparams().vision;
  info->projector_type = p.projector_type();
  info->image_size = static_cast<uint32_t>(v.image_size);
  info->patch_size = static_cast<uint32_t>(v.patch_size);
  info->n_image_tokens = static_cast<uint32_t>(v.n_image_tokens());
  info->n_embd = static_cast<uint32_t>(v.n_embd_out);
  info->n_params = p.n_params();
  info->size_bytes = p.weight_bytes();
  const peak::model::ArchSpec& spec = p.hparams().spec();
  info->image_prefix = spec.image_prefix;
  info->image_suffix = spec.image_suffix;
  info->bidirectional = spec.image_bidirectional ? 1 : 0;
  return PEAK_OK;
}

namespace {

// 0.10.0's peak_picture_layout ended at grid_cols.
constexpr size_t kPictureLayoutFirstSize = offsetof(peak_picture_layout, token_cols);

// The layout of a width x height picture, or an error status naming `function`'s bad argument.
peak_status layout_of(const peak_projector* projector, uint32_t width, uint32_t height, const char* function,
                      peak::model::PictureLayout* layout) {
  PEAK_CHECK_ARG(projector, std::string(function) + ": projector");
  if (width == 0 || height == 0) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, std::string(function) + ": the picture is " + std::to_string(width) + " x " +
                                               std::to_string(height) + " pixels");
  }
  return guarded([&] {
    *layout = peak::model::picture_layout(projector->projector->hparams(), width, height);
    return PEAK_OK;
  });
}

}  // namespace

peak_status peak_projector_picture_layout(const peak_projector* projector, uint32_t width, uint32_t height,
                                          peak_picture_layout* layout) {
  PEAK_CHECK_ARG(layout, "peak_projector_picture_layout: layout");
  const size_t struct_size = layout->struct_size;
  if (struct_size != kPictureLayoutFirstSize &&
      !peak::capi::struct_size_ok(struct_size, sizeof(peak_picture_layout), "peak_picture_layout")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  peak::model::PictureLayout l;
  if (const peak_status st = layout_of(projector, width, height, "peak_projector_picture_layout", &l)) return st;
  layout->n_frames = static_cast<uint32_t>(l.n_frames());
  layout->tokens_per_frame = static_cast<uint32_t>(l.tokens_per_frame);
  layout->grid_rows = static_cast<uint32_t>(l.grid_rows);
  layout->grid_cols = static_cast<uint32_t>(l.grid_cols);
  if (struct_size > kPictureLayoutFirstSize) {
    layout->token_cols = static_cast<uint32_t>(peak::model::placed_token_cols(projector->projector->hparams(), l));
  }
  return PEAK_OK;
}

peak_status peak_projector_frame_text(const peak_projector* projector, uint32_t width, uint32_t height, uint32_t index,
                                      char* out, size_t capacity, size_t* length) {
  PEAK_CHECK_ARG(length, "peak_projector_frame_text: length");
  peak::model::PictureLayout l;
  if (const peak_status st = layout_of(projector, width, height, "peak_projector_frame_text", &l)) return st;
  if (index > static_cast<uint64_t>(l.n_frames())) {
    return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_projector_frame_text: index " + std::to_string(index) +
                                               " past the picture's " + std::to_string(l.n_frames()) +
                                               " frames (the text after the last is index n_frames)");
  }
  if (!out && capacity > 0) return fail(PEAK_ERR_INVALID_ARGUMENT, "peak_projector_frame_text: out is NULL");
  return peak::capi::copy_out(l.texts[index], "frame text", out, capacity, length);
}

peak_image_encoder_params peak_image_encoder_default_params(void) {
  peak_image_encoder_params p{};
  p.struct_size = sizeof(peak_image_encoder_params);
  return p;
}

peak_status peak_image_encoder_create(const peak_projector* projector, const peak_image_encoder_params* params,
                                      peak_image_encoder** out) {
  PEAK_CHECK_ARG(out, "peak_image_encoder_create: out");
  *out = nullptr;
  PEAK_CHECK_ARG(projector, "peak_image_encoder_create: projector");
  peak::runtime::ImageEncoderParams p;
  if (!encoder_params_from_c(params, &p)) return PEAK_ERR_INVALID_ARGUMENT;
  return guarded([&] {
    auto e = std::make_unique<peak_image_encoder>();
    e->projector = projector;
    e->encoder = std::make_unique<peak::runtime::ImageEncoder>(*projector->projector, p);
    *out = e.release();
    return PEAK_OK;
  });
}

void peak_image_encoder_free(peak_image_encoder* encoder) { delete encoder; }

peak_status peak_projector_estimate_memory(const char* path, const peak_model_params* params,
                                           const peak_image_encoder_params* encoder_params,
                                           peak_memory_estimate* estimate) {
  PEAK_CHECK_ARG(estimate, "peak_projector_estimate_memory: estimate");
  if (!peak::capi::struct_size_ok(estimate->struct_size, sizeof(peak_memory_estimate), "peak_memory_estimate")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  PEAK_CHECK_ARG(path, "peak_projector_estimate_memory: path");
  return ::estimate(peak::io::FileSource::path(path), params, encoder_params, "peak_projector_estimate_memory",
                    estimate);
}

peak_status peak_projector_estimate_memory_fd(int fd, uint64_t offset, uint64_t length, const peak_model_params* params,
                                              const peak_image_encoder_params* encoder_params,
                                              peak_memory_estimate* estimate) {
  PEAK_CHECK_ARG(estimate, "peak_projector_estimate_memory_fd: estimate");
  if (!peak::capi::struct_size_ok(estimate->struct_size, sizeof(peak_memory_estimate), "peak_memory_estimate")) {
    return PEAK_ERR_INVALID_ARGUMENT;
  }
  peak::io::FileSource source;
  if (const peak_status st = peak::capi::fd_source(fd, offset, length, "peak_projector_estimate_memory_fd", &source);
      st != PEAK_OK) {
    return st;
  }
  return ::estimate(source, params, encoder_params, "peak_projector_estimate_memory_fd", estimate);
}

size_t peak_image_encoder_compute_bytes(const peak_image_encoder* encoder) {
  return encoder ? encoder->encoder->compute_bytes() : 0;
}

peak_status peak_image_encode(peak_image_encoder* encoder, const peak_image* image, float* out, size_t capacity,
                              size_t* n_floats) {
  PEAK_CHECK_ARG(encoder, "peak_image_encode: encoder");
  PEAK_CHECK_ARG(image, "peak_image_encode: image");
  PEAK_CHECK_ARG(n_floats, "peak_image_encode: n_floats");
  const peak::runtime::ImageEncoder& e = *encoder->encoder;
  const peak::model::PictureLayout layout =
      peak::model::picture_layout(e.projector().hparams(), image->picture.width, image->picture.height);
  *n_floats = static_cast<size_t>(layout.n_tokens() * e.n_embd_out());
  if (capacity < *n_floats) {
    return fail(PEAK_ERR_BUFFER_TOO_SMALL, "peak_image_encode: the embeddings need " + std::to_string(*n_floats) +
                                               " floats; the buffer holds " + std::to_string(capacity));
  }
  PEAK_CHECK_ARG(out, "peak_image_encode: out");
  return guarded([&] {
    const std::vector<float> embeddings = encoder->encoder->encode(image->picture);
    std::memcpy(out, embeddings.data(), embeddings.size() * sizeof(float));
    return PEAK_OK;
  });
}

}  // extern "C"
