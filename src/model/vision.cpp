#include "model/vision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "image/resize.h"
#include "model/decoder.h"

namespace peak::model {

using core::Graph;
using core::Tensor;
using kernels::GgmlType;

namespace {

// Whether the row's processor cuts pictures into tiles, as the file says it does.
bool tiles(const HParams& hp) {
  return hp.spec().tiling == VisionTiling::GridAndOverview && hp.vision.longest_edge > 0;
}

struct Size {
  int64_t width = 0;
  int64_t height = 0;
};

// The sizes Hugging Face's Idefics3ImageProcessor / SmolVLMImageProcessor
// resizes a picture to, in its arithmetic (Python floats, int() truncating):
// first the longest edge to `longest_edge`, up or down, the other side kept
// in proportion and made even (_resize_output_size_rescale_to_max_len)...
Size longest_edge_size(Size picture, int64_t longest_edge) {
  const double aspect = static_cast<double>(picture.width) / static_cast<double>(picture.height);
  Size s;
  if (picture.width >= picture.height) {
    s.width = longest_edge;
    s.height = static_cast<int64_t>(static_cast<double>(longest_edge) / aspect);
    if (s.height % 2 != 0) ++s.height;
  } else {
    s.height = longest_edge;
    s.width = static_cast<int64_t>(static_cast<double>(longest_edge) * aspect);
    if (s.width % 2 != 0) ++s.width;
  }
  s.width = std::max<int64_t>(s.width, 1);
  s.height = std::max<int64_t>(s.height, 1);
  return s;
}

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// ... then each side up to a multiple of the tile, the short side from the
// long one's (resize_for_vision_encoder).
Size tiled_size(Size picture, int64_t tile) {
  const double aspect = static_cast<double>(picture.width) / static_cast<double>(picture.height);
  Size s;
  if (picture.width >= picture.height) {
    s.width = round_up(picture.width, tile);
    s.height = round_up(static_cast<int64_t>(static_cast<double>(s.width) / aspect), tile);
  } else {
    s.height = round_up(picture.height, tile);
    s.width = round_up(static_cast<int64_t>(static_cast<double>(s.height) * aspect), tile);
  }
  return s;
}

image::Image resized(image::Image picture, Size size, image::ResizeFilter filter) {
  const auto width = static_cast<uint32_t>(size.width), height = static_cast<uint32_t>(size.height);
  if (picture.width == width && picture.height == height) return picture;
  return image::resize(picture, width, height, filter);
}

// The side x side pixels of an RGB picture whose top left is (x, y).
image::Image crop(const image::Image& picture, int64_t x, int64_t y, int64_t side) {
  image::Image out;
  out.width = out.height = static_cast<uint32_t>(side);
  out.pixels.resize(static_cast<size_t>(side * side * 3));
  for (int64_t row = 0; row < side; ++row) {
    std::memcpy(out.pixels.data() + row * side * 3, picture.pixels.data() + ((y + row) * picture.width + x) * 3,
                static_cast<size_t>(side * 3));
  }
  return out;
}

}  // namespace

Tensor* build_vision_encoder(Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs) {
  return build_vision_encoder(g, hp, w, inputs, square_grid(hp));
}

namespace {

// Qwen2.5-VL's tower and merger (HF's Qwen2_5_VisionTransformerPretrainedModel):
// the two-frame Conv3D on a still picture (both kernels over the same
// patch, summed), RMS-norm pre-norm blocks with 2D rotary positions, window
// attention on the sliding layers (the window's rows, VisionInputs::window_ranges),
// then each patch RMS-normalised, a token's patches side by side, mm.0,
// gelu (erf), mm.2.
Tensor* build_merger_encoder(Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs, PatchGrid grid) {
  const VisionParams& v = hp.vision;
  const int64_t n = grid.n_patches(), p = v.patch_size, m2 = v.merge * v.merge;
  inputs.patches = g.input(GgmlType::F32, {3 * p * p, n}, "patches");
  // (No window input when every layer is global: an unread input gets no memory.)
  if (std::any_of(hp.layers.begin(), hp.layers.end(), [](const LayerAttention& l) { return l.sliding; })) {
    inputs.window_ranges = g.input(GgmlType::I32, {2, n}, "window_ranges");
  }
  DecoderBuilder b(g, hp, w, n, nullptr, inputs.window_ranges);  // full layers: every patch; sliding: its window
  inputs.positions = b.inputs().positions;

  Tensor* x = g.mul_mat(g.reshape(w.patch_embd, {3 * p * p, hp.n_embd}), inputs.patches);
  x = g.add(x, g.mul_mat(g.reshape(w.patch_embd_1, {3 * p * p, hp.n_embd}), inputs.patches));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    x = g.add(x, b.self_attention(il, b.norm(x, l.attn_norm)));
    x = g.add(x, b.feed_forward(il, b.norm(x, l.ffn_norm)));
  }
  x = b.norm(x, w.output_norm);
  // A token's m m patches are consecutive rows: [m m n_embd, n / (m m)].
  x = g.reshape(x, {m2 * hp.n_embd, n / m2});
  x = g.gelu_erf(g.add(g.mul_mat(w.projector, x), w.projector_bias));
  x = g.add(g.mul_mat(w.projector_2, x), w.projector_2_bias);  // [n_embd_out, n / (m m)]
  g.output(x);
  return x;
}

}  // namespace

Tensor* build_vision_encoder(Graph& g, const HParams& hp, const ModelWeights& w, VisionInputs& inputs, PatchGrid grid) {
  inputs = VisionInputs{};
  if (hp.spec().connector == VisionConnector::MergeMlp) return build_merger_encoder(g, hp, w, inputs, grid);
  const VisionParams& v = hp.vision;
  if (grid.nx != v.patches_per_side() || grid.ny != v.patches_per_side()) {
    throw std::invalid_argument("this image encoder takes square images of " + std::to_string(v.image_size) +
                                " pixels");
  }
  const int64_t n_patches = v.n_patches(), p = v.patch_size;
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

PatchGrid square_grid(const HParams& hp) { return {hp.vision.patches_per_side(), hp.vision.patches_per_side()}; }

std::vector<int32_t> vision_positions(const HParams& hp) { return vision_positions(hp, square_grid(hp)); }

namespace {

// Calls fn(window, token_y, token_x) for every image token of `grid` in graph
// order: by window (window_tokens a side; the whole grid as one window in rows
// without windows), then row by row within it.
template <typename Fn>
void for_each_token(const HParams& hp, PatchGrid grid, Fn&& fn) {
  const int64_t m = hp.vision.merge, cols = grid.nx / m, rows = grid.ny / m;
  const int64_t side_x = hp.vision.window_tokens > 0 ? hp.vision.window_tokens : cols;
  const int64_t side_y = hp.vision.window_tokens > 0 ? hp.vision.window_tokens : rows;
  int64_t window = 0;
  for (int64_t wy = 0; wy < rows; wy += side_y) {
    for (int64_t wx = 0; wx < cols; wx += side_x, ++window) {
      for (int64_t ty = wy; ty < std::min(rows, wy + side_y); ++ty) {
        for (int64_t tx = wx; tx < std::min(cols, wx + side_x); ++tx) fn(window, ty, tx);
      }
    }
  }
}

}  // namespace

std::vector<int32_t> vision_positions(const HParams& hp, PatchGrid grid) {
  const int64_t m = hp.vision.merge;
  std::vector<int32_t> positions;
  positions.reserve(static_cast<size_t>(grid.n_patches()));
  for_each_token(hp, grid, [&](int64_t, int64_t ty, int64_t tx) {
    for (int64_t dy = 0; dy < m; ++dy) {
      for (int64_t dx = 0; dx < m; ++dx) {
        positions.push_back(static_cast<int32_t>((ty * m + dy) * grid.nx + tx * m + dx));
      }
    }
  });
  return positions;
}

std::vector<int32_t> vision_window_ranges(const HParams& hp, PatchGrid grid) {
  const int64_t per_token = hp.vision.merge * hp.vision.merge;
  std::vector<int64_t> window_of;  // per graph token
  for_each_token(hp, grid, [&](int64_t window, int64_t, int64_t) { window_of.push_back(window); });
  std::vector<int32_t> ranges(static_cast<size_t>(2 * grid.n_patches()));
  for (size_t first = 0; first < window_of.size();) {
    size_t end = first;
    while (end < window_of.size() && window_of[end] == window_of[first]) ++end;
    for (size_t row = first * per_token; row < end * per_token; ++row) {
      ranges[2 * row] = static_cast<int32_t>(first * per_token);
      ranges[2 * row + 1] = static_cast<int32_t>(end * per_token);
    }
    first = end;
  }
  return ranges;
}

std::vector<int32_t> vision_token_order(const HParams& hp, PatchGrid grid) {
  const int64_t cols = grid.nx / hp.vision.merge;
  std::vector<int32_t> order;
  for_each_token(hp, grid,
                 [&](int64_t, int64_t ty, int64_t tx) { order.push_back(static_cast<int32_t>(ty * cols + tx)); });
  return order;
}

FrameSize smart_resize(const HParams& hp, int64_t width, int64_t height) {
  const VisionParams& v = hp.vision;
  if (width < 10 || height < 10) {
    throw std::invalid_argument("a picture of " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels is too small: both sides must be at least 10");
  }
  if (std::max(width, height) > 200 * std::min(width, height)) {
    throw std::invalid_argument("a picture of " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels is too narrow: the aspect ratio must be at most 200");
  }
  const auto f = static_cast<double>(v.patch_size * v.merge);
  const auto h = static_cast<double>(height), w = static_cast<double>(width);
  // Python's round(): to nearest, ties to even (the default rounding mode).
  const auto multiple = [f](double x) { return std::max(f, std::nearbyint(x / f) * f); };
  double h_bar = multiple(h), w_bar = multiple(w);
  if (h_bar * w_bar > static_cast<double>(v.max_pixels)) {
    const double beta = std::sqrt(h * w / static_cast<double>(v.max_pixels));
    h_bar = std::max(f, std::floor(h / beta / f) * f);
    w_bar = std::max(f, std::floor(w / beta / f) * f);
  } else if (h_bar * w_bar < static_cast<double>(v.min_pixels)) {
    const double beta = std::sqrt(static_cast<double>(v.min_pixels) / (h * w));
    h_bar = std::ceil(h * beta / f) * f;
    w_bar = std::ceil(w * beta / f) * f;
  }
  if (h_bar * w_bar > static_cast<double>(v.max_pixels)) {
    throw std::invalid_argument("a picture of " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels cannot be resized within the projector's " + std::to_string(v.max_pixels) +
                                " pixels");
  }
  return {static_cast<int64_t>(w_bar), static_cast<int64_t>(h_bar)};
}

FrameSize vision_frame_size(const HParams& hp, int64_t width, int64_t height) {
  if (hp.spec().tiling == VisionTiling::SmartResize) return smart_resize(hp, width, height);
  return {hp.vision.image_size, hp.vision.image_size};
}

PatchGrid frame_grid(const HParams& hp, FrameSize frame) {
  return {frame.width / hp.vision.patch_size, frame.height / hp.vision.patch_size};
}

int64_t max_picture_tokens(const HParams& hp) {
  const VisionParams& v = hp.vision;
  if (hp.spec().tiling == VisionTiling::SmartResize) {
    const int64_t f = v.patch_size * v.merge;
    return v.max_pixels / (f * f);  // smart_resize never gives more pixels
  }
  return max_picture_frames(hp) * v.n_image_tokens();
}

void vision_patches(const image::Image& picture, const HParams& hp, float* out) {
  const VisionParams& v = hp.vision;
  image::Image rgb = image::to_rgb(picture);
  FrameSize size;
  try {
    size = vision_frame_size(hp, rgb.width, rgb.height);
  } catch (const std::invalid_argument& e) {
    throw image::ImageError(std::string("image: ") + e.what());
  }
  if (rgb.width != size.width || rgb.height != size.height) {
    rgb = image::resize(rgb, static_cast<uint32_t>(size.width), static_cast<uint32_t>(size.height), hp.spec().resize);
  }
  // v / 255 then (v - mean) / std, as the processors compute it, per channel and byte value.
  float normalised[3][256];
  for (int c = 0; c < 3; ++c) {
    for (int value = 0; value < 256; ++value) {
      normalised[c][value] = (static_cast<float>(value) / 255.0f - v.image_mean[c]) / v.image_std[c];
    }
  }
  const PatchGrid grid = frame_grid(hp, size);
  const int64_t p = v.patch_size;
  for (int32_t position : vision_positions(hp, grid)) {
    const int64_t py = position / grid.nx, px = position % grid.nx;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t ky = 0; ky < p; ++ky) {
        const uint8_t* row = rgb.pixels.data() + ((py * p + ky) * size.width + px * p) * 3 + c;
        for (int64_t kx = 0; kx < p; ++kx) *out++ = normalised[c][row[kx * 3]];
      }
    }
  }
}

std::vector<std::string> frame_texts(const ArchSpec& spec, int64_t grid_rows, int64_t grid_cols) {
  const bool whole = grid_rows == 0 && grid_cols == 0;
  if (!whole && (spec.tiling == VisionTiling::None || grid_rows < 1 || grid_cols < 1 || grid_rows > kMaxGridSide ||
                 grid_cols > kMaxGridSide)) {
    throw std::invalid_argument(std::string(spec.projector_type ? spec.projector_type : spec.name) +
                                " does not cut a picture into " + std::to_string(grid_rows) + " x " +
                                std::to_string(grid_cols) + " tiles");
  }
  if (whole) return {spec.image_prefix, spec.image_suffix};
  // Hugging Face's Idefics3Processor / SmolVLMProcessor (_prompt_split_image):
  // each tile's tokens after "<fake_token_around_image><row_R_col_C>" (from
  // 1), a newline after each row of tiles, then a blank line and the
  // overview framed as a picture that is not split.
  std::vector<std::string> texts;
  for (int64_t r = 0; r < grid_rows; ++r) {
    for (int64_t c = 0; c < grid_cols; ++c) {
      texts.push_back(std::string(r > 0 && c == 0 ? "\n" : "") + "<fake_token_around_image><row_" +
                      std::to_string(r + 1) + "_col_" + std::to_string(c + 1) + ">");
    }
  }
  texts.push_back(std::string("\n\n") + spec.image_prefix);
  texts.emplace_back(spec.image_suffix);
  return texts;
}

PictureLayout picture_layout(const HParams& hp, int64_t width, int64_t height) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("a picture of " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels has no layout");
  }
  const int64_t tile = hp.vision.image_size;
  PictureLayout layout;
  const PatchGrid patches = frame_grid(hp, vision_frame_size(hp, width, height));
  layout.token_cols = patches.nx / hp.vision.merge;
  layout.token_rows = patches.ny / hp.vision.merge;
  layout.tokens_per_frame = layout.token_cols * layout.token_rows;
  if (tiles(hp)) {
    const Size grid = tiled_size(longest_edge_size({width, height}, hp.vision.longest_edge), tile);
    if (grid.width > tile || grid.height > tile) {  // else exactly one tile: not cut
      layout.grid_rows = grid.height / tile;
      layout.grid_cols = grid.width / tile;
    }
  }
  layout.texts = frame_texts(hp.spec(), layout.grid_rows, layout.grid_cols);
  return layout;
}

int64_t max_picture_frames(const HParams& hp) {
  if (!tiles(hp)) return 1;
  // Both sides of the first resize are at most the longest edge made even
  // (the short side is rounded up to even), so both sides of the second at
  // most that rounded up to whole tiles: side x side tiles and the overview,
  // which a square picture reaches (for tiles wider than a pixel).
  const int64_t tile = hp.vision.image_size;
  const int64_t side = round_up(round_up(hp.vision.longest_edge, 2), tile) / tile;
  return side == 1 ? 1 : side * side + 1;
}

std::vector<image::Image> vision_frames(const image::Image& picture, const HParams& hp) {
  if (picture.width == 0 || picture.height == 0 || (picture.channels != 3 && picture.channels != 4) ||
      picture.pixels.size() != size_t{picture.width} * picture.height * picture.channels) {
    throw image::ImageError("image: a picture must be RGB or RGBA, its pixels matching its size");
  }
  std::vector<image::Image> frames;
  image::Image rgb = image::to_rgb(picture);
  if (hp.spec().tiling == VisionTiling::SmartResize) {
    FrameSize size;
    try {
      size = smart_resize(hp, rgb.width, rgb.height);
    } catch (const std::invalid_argument& e) {
      throw image::ImageError(std::string("image: ") + e.what());
    }
    frames.push_back(resized(std::move(rgb), {size.width, size.height}, hp.spec().resize));
    return frames;
  }
  if (!tiles(hp)) {
    frames.push_back(std::move(rgb));
    return frames;
  }
  const image::ResizeFilter filter = hp.spec().resize;
  const int64_t tile = hp.vision.image_size;
  const Size edge = longest_edge_size({rgb.width, rgb.height}, hp.vision.longest_edge);
  image::Image whole = resized(resized(std::move(rgb), edge, filter), tiled_size(edge, tile), filter);
  const PictureLayout layout = picture_layout(hp, picture.width, picture.height);
  if (layout.grid_rows == 0) {
    frames.push_back(std::move(whole));  // exactly one tile: not split
    return frames;
  }
  for (int64_t r = 0; r < layout.grid_rows; ++r) {
    for (int64_t c = 0; c < layout.grid_cols; ++c) frames.push_back(crop(whole, c * tile, r * tile, tile));
  }
  const auto side = static_cast<uint32_t>(tile);
  frames.push_back(image::resize(whole, side, side, filter));  // the overview
  return frames;
}

int64_t placed_token_cols(const HParams& hp, const PictureLayout& layout) {
  return hp.spec().tiling == VisionTiling::SmartResize ? layout.token_cols : 0;
}

}  // namespace peak::model
