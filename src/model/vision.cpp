#include "model/vision.h"

#include "image/resize.h"
#include "model/decoder.h"

namespace peak::model {

using core::Graph;
using core::Tensor;
using kernels::GgmlType;

Tensor* build_vision_encoder(Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs) {
  const VisionParams& v = hp.vision;
  const int64_t n_patches = v.n_patches(), p = v.patch_size;
  inputs = VisionInputs{};
  inputs.patches = g.input(GgmlType::F32, {3 * p * p, n_patches}, "patches");
  DecoderBuilder b(g, hp, w, n_patches, nullptr, nullptr);  // every patch attends to every patch
  inputs.positions = b.inputs().positions;

  // The convolution as one product: kernel [p, p, 3, n_embd] viewed as [3 p p, n_embd].
  Tensor* kernel = g.reshape(w.patch_embd, {3 * p * p, hp.n_embd});
  Tensor* x = g.add(g.mul_mat(kernel, inputs.patches), w.patch_embd_bias);  // [n_embd, n_patches]
  x = g.add(x, g.get_rows(w.position_embd, inputs.positions));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    x = g.add(x, b.self_attention(il, g.layer_norm(x, hp.layer_norm_eps, l.attn_norm, l.attn_norm_bias)));
    x = g.add(x, b.feed_forward(il, g.layer_norm(x, hp.layer_norm_eps, l.ffn_norm, l.ffn_norm_bias)));
  }
  x = g.layer_norm(x, hp.layer_norm_eps, w.output_norm, w.output_norm_bias);

  if (hp.spec().connector == VisionConnector::MeanNormProject) {
    // Gemma 3's projector: each token the mean of its patches, RMS-normalised
    // with the same epsilon, then [n_embd -> n_embd_out].
    inputs.merged_rows = g.input(GgmlType::I32, {2, v.n_image_tokens()}, "merged_rows");
    x = g.mean_rows(x, inputs.merged_rows);  // [n_embd, n_image_tokens]
    x = g.rms_norm(x, hp.layer_norm_eps, w.projector_norm);
  } else {
    // The pixel shuffle: a token's m m patches are consecutive rows in block
    // order, so [n_embd, n_patches] read as [m m n_embd, n_image_tokens] is
    // each token's patches side by side, patch (dy, dx) at (dy m + dx) n_embd.
    x = g.reshape(x, {v.merge * v.merge * hp.n_embd, v.n_image_tokens()});
  }
  x = g.mul_mat(w.projector, x);  // [n_embd_out, n_image_tokens]
  g.output(x);
  return x;
}

std::vector<int32_t> vision_positions(const HParams& hp) {
  const VisionParams& v = hp.vision;
  const int64_t side = v.patches_per_side(), tokens = v.tokens_per_side(), m = v.merge;
  std::vector<int32_t> positions;
  positions.reserve(static_cast<size_t>(v.n_patches()));
  for (int64_t ty = 0; ty < tokens; ++ty) {
    for (int64_t tx = 0; tx < tokens; ++tx) {
      for (int64_t dy = 0; dy < m; ++dy) {
        for (int64_t dx = 0; dx < m; ++dx)
          positions.push_back(static_cast<int32_t>((ty * m + dy) * side + tx * m + dx));
      }
    }
  }
  return positions;
}

void vision_patches(const image::Image& picture, const HParams& hp, float* out) {
  const VisionParams& v = hp.vision;
  const auto size = static_cast<uint32_t>(v.image_size);
  image::Image rgb = image::to_rgb(picture);
  if (rgb.width != size || rgb.height != size) rgb = image::resize(rgb, size, size, hp.spec().resize);
  // v / 255 then (v - mean) / std, as the processors compute it, per channel and byte value.
  float normalised[3][256];
  for (int c = 0; c < 3; ++c) {
    for (int value = 0; value < 256; ++value) {
      normalised[c][value] = (static_cast<float>(value) / 255.0f - v.image_mean[c]) / v.image_std[c];
    }
  }
  const int64_t p = v.patch_size, side = v.patches_per_side();
  for (int32_t position : vision_positions(hp)) {
    const int64_t py = position / side, px = position % side;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t ky = 0; ky < p; ++ky) {
        const uint8_t* row = rgb.pixels.data() + ((py * p + ky) * v.image_size + px * p) * 3 + c;
        for (int64_t kx = 0; kx < p; ++kx) *out++ = normalised[c][row[kx * 3]];
      }
    }
  }
}

}  // namespace peak::model
