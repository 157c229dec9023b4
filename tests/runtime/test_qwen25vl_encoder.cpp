// Qwen2.5-VL's image encoder (clip.projector_type "qwen2.5vl_merger"):
// pictures of their own size through the tower with 2D rotary positions and
// window attention, then the patch merger, against a naive double-precision
// reference (tests/model/vision_reference.h) written from HF's model; HF's
// smart_resize sizes worked out by hand; the window order; the refusals of
// broken files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../image/netpbm.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "image/image.h"
#include "model/projector.h"
#include "model/synth.h"
#include "model/tensor_manifest.h"
#include "model/vision.h"
#include "runtime/image_encoder.h"
#include "runtime/memory_estimate.h"
#include "edited_projector.h"
#include "tiny_models.h"
#include "vision_reference.h"

namespace peak {
namespace {

using kernels::GgmlType;
using model::Arch;

const std::string kImages = std::string(PEAK_TEST_DATA_DIR) + "/images/";

image::Image photo() {
  const std::vector<uint8_t> png = image::read_bytes(kImages + "png/photo_256x192.png");
  return image::to_rgb(image::decode(png.data(), png.size()));
}

// The width x height pixels of an RGB picture whose top left is (x, y).
image::Image crop(const image::Image& picture, uint32_t x, uint32_t y, uint32_t width, uint32_t height) {
  image::Image out;
  out.width = width;
  out.height = height;
  for (uint32_t row = 0; row < height; ++row) {
    const uint8_t* from = picture.pixels.data() + (size_t{y + row} * picture.width + x) * 3;
    out.pixels.insert(out.pixels.end(), from, from + size_t{width} * 3);
  }
  return out;
}

using test::max_abs;

// The encoder's embeddings of `picture` against the reference's on the frame
// the encoder sees (vision_frames: the picture smart-resized): the largest
// difference relative to the reference's largest value.
double relative_difference(const std::string& path, const image::Image& picture, int n_threads = 0) {
  const auto projector = model::Projector::load(path);
  const model::HParams& hp = projector->hparams();
  runtime::ImageEncoder encoder(*projector, {n_threads});
  const std::vector<float> got = encoder.encode(picture);
  const std::vector<image::Image> frames = model::vision_frames(picture, hp);
  EXPECT_EQ(frames.size(), 1u);
  const image::Image& frame = frames.at(0);
  const auto file = gguf::GgufFile::open(path);
  int64_t n_tokens = 0, n_embd_text = 0;
  const std::vector<double> want = test::qwen25vl_embeddings_reference(
      *file, test::normalise_reference(*file, frame.pixels.data(), frame.width, frame.height), frame.width,
      frame.height, &n_tokens, &n_embd_text);
  const model::PictureLayout layout = model::picture_layout(hp, picture.width, picture.height);
  EXPECT_EQ(n_tokens, layout.tokens_per_frame);
  EXPECT_EQ(n_embd_text, encoder.n_embd_out());
  EXPECT_EQ(got.size(), want.size());
  double diff = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) diff = std::max(diff, std::fabs(got[i] - want[i]));
  EXPECT_GT(max_abs(want), 0.1);
  std::printf("relative difference %.3g (%dx%d)\n", diff / std::max(1.0, max_abs(want)), picture.width, picture.height);
  return diff / std::max(1.0, max_abs(want));
}

// 48 x 40 pixels: 12 x 10 patches, 6 x 5 tokens; windows of 4 x 4 tokens,
// so four windows, three of them partial (2 x 4, 4 x 1, 2 x 1). Layer 0
// attends within its window, layer 1 among all. The synthetic weights are
// small (N(0, 0.02)), so positions move the scores little: rows and columns
// swapped in the rotation differ by only 4e-4 here, while float32 stays
// within 1e-7; hence 1e-5, tighter than the 1e-4 of the other encoders.
TEST(Qwen25VlEncoder, EqualsTheReference) {
  const std::string path = test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32);
  const image::Image picture = crop(photo(), 100, 60, 48, 40);
  const model::PictureLayout layout =
      model::picture_layout(model::Projector::load(path)->hparams(), picture.width, picture.height);
  EXPECT_EQ(layout.token_cols, 6);
  EXPECT_EQ(layout.token_rows, 5);
  EXPECT_LT(relative_difference(path, picture), 1e-5);
  // And taller than wide: 40 x 56, 5 x 7 tokens.
  EXPECT_LT(relative_difference(path, crop(photo(), 7, 100, 40, 56)), 1e-5);
  // 16-bit weights.
  EXPECT_LT(relative_difference(test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F16), picture), 1e-2);

  // Every layer full (n_wa_pattern 1): the reference agrees again, and the
  // windows made a difference.
  model::SynthSpec spec = test::tiny_spec(Arch::Qwen25Vision);
  spec.wa_pattern = 1;
  const std::string full = test::write_tiny_spec(spec, GgmlType::F32, "qwen25vl_all_full");
  EXPECT_LT(relative_difference(full, picture), 1e-5);
  const auto windowed = model::Projector::load(path), global = model::Projector::load(full);
  const std::vector<float> a = runtime::ImageEncoder(*windowed).encode(picture);
  const std::vector<float> b = runtime::ImageEncoder(*global).encode(picture);
  ASSERT_EQ(a.size(), b.size());
  double diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
  EXPECT_GT(diff, 1e-3);
}

// A picture larger than max_pixels (4096 in the tiny file, f = 8): 256 x 192
// -> beta = sqrt(49152 / 4096), floor(192 / beta / 8) 8 = 48, floor(256 /
// beta / 8) 8 = 72: 9 x 6 tokens, from PIL's bicubic resize.
TEST(Qwen25VlEncoder, ResizedPictureEqualsTheReferenceOnItsFrame) {
  const std::string path = test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32);
  const auto projector = model::Projector::load(path);
  const std::vector<image::Image> frames = model::vision_frames(photo(), projector->hparams());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].width, 72u);
  EXPECT_EQ(frames[0].height, 48u);
  EXPECT_EQ(model::picture_layout(projector->hparams(), 256, 192).tokens_per_frame, 54);
  EXPECT_LT(relative_difference(path, photo()), 1e-5);
}

TEST(Qwen25VlEncoder, OneThreadAndTwoAndPicturesInTurnGiveTheSameEmbeddings) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32));
  runtime::ImageEncoder one(*projector, {1});
  runtime::ImageEncoder two(*projector, {2});
  const image::Image a = crop(photo(), 0, 0, 48, 40), b = crop(photo(), 50, 50, 64, 64);
  const std::vector<float> first = one.encode(a);
  EXPECT_EQ(first, two.encode(a));
  EXPECT_EQ(one.encode(b).size(), size_t{64} * 48);  // the largest picture: max_pixels, 64 tokens
  EXPECT_EQ(first, one.encode(a));                   // a smaller graph after a larger one
}

// Token order by window: 12 x 10 patches, windows of 4 x 4 tokens.
TEST(Qwen25VlEncoder, PatchesEnterWindowByWindow) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32));
  const model::HParams& hp = projector->hparams();
  EXPECT_EQ(hp.vision.window_tokens, 4);
  const model::PatchGrid grid{12, 10};
  const std::vector<int32_t> positions = model::vision_positions(hp, grid);
  ASSERT_EQ(positions.size(), 120u);
  EXPECT_EQ(std::set<int32_t>(positions.begin(), positions.end()).size(), 120u);
  // Window 0's first tokens: (0,0) then (0,1), each its 2 x 2 patches.
  EXPECT_EQ(std::vector<int32_t>(positions.begin(), positions.begin() + 8),
            (std::vector<int32_t>{0, 1, 12, 13, 2, 3, 14, 15}));
  // Window 1 (token columns 4, 5, rows 0-3) starts after window 0's 16 tokens.
  EXPECT_EQ(positions[64], 8);
  const std::vector<int32_t> ranges = model::vision_window_ranges(hp, grid);
  const auto range = [&](int row) { return std::make_pair(ranges[2 * row], ranges[2 * row + 1]); };
  EXPECT_EQ(range(0), std::make_pair(0, 64));
  EXPECT_EQ(range(63), std::make_pair(0, 64));
  EXPECT_EQ(range(64), std::make_pair(64, 96));     // 2 x 4 tokens
  EXPECT_EQ(range(96), std::make_pair(96, 112));    // 4 x 1
  EXPECT_EQ(range(119), std::make_pair(112, 120));  // 2 x 1
  const std::vector<int32_t> order = model::vision_token_order(hp, grid);
  EXPECT_EQ(std::vector<int32_t>(order.begin(), order.begin() + 6), (std::vector<int32_t>{0, 1, 2, 3, 6, 7}));
  EXPECT_EQ(order[16], 4);   // window 1
  EXPECT_EQ(order[24], 24);  // window 2: token row 4
  EXPECT_EQ(order[29], 29);
}

// The real encoder's processor limits, HF's defaults: f = 28, 3136 to
// 1003520 pixels.
model::HParams real_hparams() {
  model::HParams hp;
  hp.arch = Arch::Qwen25Vision;
  hp.vision.image_size = 560;
  hp.vision.patch_size = 14;
  hp.vision.merge = 2;
  hp.vision.min_pixels = 3136;
  hp.vision.max_pixels = 28 * 28 * 1280;
  hp.vision.window_tokens = 4;
  return hp;
}

// smart_resize worked out by hand (Python's round, half to even).
TEST(Qwen25VlEncoder, SmartResizeSizes) {
  const model::HParams hp = real_hparams();
  const auto size = [&](int64_t w, int64_t h) {
    const model::FrameSize s = model::smart_resize(hp, w, h);
    return std::make_pair(s.width, s.height);
  };
  // 640 / 28 = 22.86 -> 23 * 28 = 644; 480 / 28 = 17.14 -> 17 * 28 = 476.
  EXPECT_EQ(size(640, 480), std::make_pair(int64_t{644}, int64_t{476}));
  // Ties to even: 70 / 28 = 2.5 -> 2, 42 / 28 = 1.5 -> 2: 56 x 56 (3136, the minimum itself).
  EXPECT_EQ(size(70, 42), std::make_pair(int64_t{56}, int64_t{56}));
  // Too many: 4004 x 2996 > 1003520, beta = sqrt(12e6 / 1003520) = 3.458:
  // floor(4000 / beta / 28) = 41 -> 1148, floor(3000 / beta / 28) = 30 -> 840.
  EXPECT_EQ(size(4000, 3000), std::make_pair(int64_t{1148}, int64_t{840}));
  // Too few: 28 x 28 < 3136, beta = sqrt(3136 / 300) = 3.233: ceil(20 beta / 28) = 3 -> 84,
  // ceil(15 beta / 28) = 2 -> 56.
  EXPECT_EQ(size(20, 15), std::make_pair(int64_t{84}, int64_t{56}));
  // round(10 / 28) = 0, at least 28; 2000 / 28 = 71.4 -> 1988.
  EXPECT_EQ(size(10, 2000), std::make_pair(int64_t{28}, int64_t{1988}));
  EXPECT_EQ(size(1000, 10), std::make_pair(int64_t{1008}, int64_t{28}));
  // HF's refusals: a side under 10, an aspect over 200.
  EXPECT_THROW(size(9, 100), std::invalid_argument);
  EXPECT_THROW(size(100, 9), std::invalid_argument);
  EXPECT_THROW(size(10, 2001), std::invalid_argument);
  image::Image thin;
  thin.width = 5, thin.height = 50, thin.channels = 3;
  thin.pixels.assign(size_t{5} * 50 * 3, 0);
  EXPECT_THROW(model::vision_frames(thin, hp), image::ImageError);

  // The layout: one frame of (W / 28) x (H / 28) tokens between the vision markers.
  const model::PictureLayout layout = model::picture_layout(hp, 640, 480);
  EXPECT_EQ(layout.token_cols, 23);
  EXPECT_EQ(layout.token_rows, 17);
  EXPECT_EQ(layout.tokens_per_frame, 391);
  EXPECT_EQ(layout.n_frames(), 1);
  EXPECT_EQ(layout.texts, (std::vector<std::string>{"<|vision_start|>", "<|vision_end|>"}));
  EXPECT_EQ(model::max_picture_frames(hp), 1);
  EXPECT_EQ(model::max_picture_tokens(hp), 1280);
}

TEST(Qwen25VlEncoder, HyperParametersAndPreset) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32));
  const model::HParams& hp = projector->hparams();
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Vision);
  EXPECT_EQ(hp.rope.n_dims, 16);
  EXPECT_FLOAT_EQ(hp.rms_eps, 1e-6f);
  EXPECT_EQ(hp.vision.merge, 2);
  EXPECT_EQ(hp.vision.wa_pattern, 2);
  ASSERT_EQ(hp.layers.size(), 2u);
  EXPECT_TRUE(hp.layers[0].sliding);
  EXPECT_FALSE(hp.layers[1].sliding);
  EXPECT_EQ(hp.vision.max_pixels, 4096);
  EXPECT_EQ(hp.vision.min_pixels, 256);  // 4 f^2

  // The tensors: llama.cpp's names for Qwen2.5-VL.
  std::set<std::string> names;
  for (size_t i = 0; i < projector->file().n_tensors(); ++i)
    names.insert(std::string(projector->file().tensor(i).name));
  std::set<std::string> expected = {"v.patch_embd.weight", "v.patch_embd.weight.1", "v.post_ln.weight", "mm.0.weight",
                                    "mm.0.bias",           "mm.2.weight",           "mm.2.bias"};
  for (int layer = 0; layer < 2; ++layer) {
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_out", "ffn_gate", "ffn_up", "ffn_down"}) {
      for (const char* part : {"weight", "bias"})
        expected.insert("v.blk." + std::to_string(layer) + "." + t + "." + part);
    }
    expected.insert("v.blk." + std::to_string(layer) + ".ln1.weight");
    expected.insert("v.blk." + std::to_string(layer) + ".ln2.weight");
  }
  EXPECT_EQ(names, expected);
  const gguf::TensorInfo* mm0 = projector->file().find_tensor("mm.0.weight");
  EXPECT_EQ(mm0->ne[0], 256);
  EXPECT_EQ(mm0->ne[1], 256);

  // The memory of a largest picture's tokens: 64 of 48.
  EXPECT_EQ(runtime::estimate_projector_memory(
                io::FileSource::path(test::write_tiny_model(Arch::Qwen25Vision, GgmlType::F32)), {}, {})
                .image_bytes,
            size_t{64} * 48 * sizeof(float));

  const model::SynthSpec real = model::synth_preset("qwen2.5-vl-3b-mmproj");
  EXPECT_EQ(real.arch, Arch::Qwen25Vision);
  EXPECT_EQ(real.n_layer, 32);
  EXPECT_EQ(real.n_embd, 1280);
  EXPECT_EQ(real.n_head, 16);
  EXPECT_EQ(real.head_dim, 80);
  EXPECT_EQ(real.n_ff, 3420);
  EXPECT_EQ(real.patch_size, 14);
  EXPECT_EQ(real.n_embd_out, 2048);
  EXPECT_EQ(real.wa_pattern, 8);
  // Its manifest: mm.0 5120 x 5120, mm.2 5120 -> 2048.
  model::HParams rh = real_hparams();
  rh.n_embd = 1280, rh.n_layer = 32, rh.n_head = 16, rh.n_head_kv = 16, rh.head_dim = 80, rh.n_ff = 3420;
  rh.vision.n_embd_out = 2048;
  size_t found = 0;
  for (const model::ManifestTensor& t : model::tensor_manifest(rh)) {
    if (t.name == "mm.0.weight") {
      EXPECT_EQ(std::vector<int64_t>(t.ne, t.ne + 2), (std::vector<int64_t>{5120, 5120}));
    }
    if (t.name == "mm.2.weight") {
      EXPECT_EQ(std::vector<int64_t>(t.ne, t.ne + 2), (std::vector<int64_t>{5120, 2048}));
    }
    if (t.name == "v.blk.31.ffn_gate.bias") {
      EXPECT_EQ(t.ne[0], 3420);
    }
    found += t.name == "mm.0.weight" || t.name == "mm.2.weight" || t.name == "v.blk.31.ffn_gate.bias";
  }
  EXPECT_EQ(found, 3u);
}

// The tiny file rewritten: its keys edited, a tensor left out.
std::string edited(const std::function<void(gguf::GgufWriter&)>& edit_keys, const std::string& drop = "") {
  return test::edited_projector(edit_keys, drop, Arch::Qwen25Vision);
}
using test::expect_projector_refused;

TEST(Qwen25VlEncoder, BrokenFilesAreRefusedByName) {
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.remove("clip.vision.n_wa_pattern"); }),
                           "lacks 'clip.vision.n_wa_pattern'");
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.set_u32("clip.vision.n_wa_pattern", 0); }),
                           "'clip.vision.n_wa_pattern' is 0");
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.set_u32("clip.vision.window_size", 20); }),
                           "'clip.vision.window_size' 20 is not a multiple of 8 pixels");
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.set_u32("clip.vision.image_max_pixels", 32); }),
                           "'clip.vision.image_max_pixels' is 32; it must be between 64 and");
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.set_u32("clip.vision.image_min_pixels", 5000); }),
                           "'clip.vision.image_min_pixels' is 5000; it must be between 1 and 4096");
  expect_projector_refused(edited([](gguf::GgufWriter& w) { w.remove("clip.vision.attention.layer_norm_epsilon"); }),
                           "lacks 'clip.vision.attention.layer_norm_epsilon'");
  expect_projector_refused(edited(nullptr, "v.patch_embd.weight.1"), "lacks tensor 'v.patch_embd.weight.1'");
  expect_projector_refused(edited(nullptr, "v.blk.0.ffn_gate.bias"), "lacks tensor 'v.blk.0.ffn_gate.bias'");
  expect_projector_refused(edited(nullptr, "mm.2.bias"), "lacks tensor 'mm.2.bias'");
  // Without the optional keys: llama.cpp's 112-pixel windows and HF's limits.
  const auto defaults = model::Projector::load(edited([](gguf::GgufWriter& w) {
    w.remove("clip.vision.window_size");
    w.remove("clip.vision.image_max_pixels");
  }));
  EXPECT_EQ(defaults->hparams().vision.window_tokens, 14);  // 112 / 8
  EXPECT_EQ(defaults->hparams().vision.max_pixels, 1280 * 64);
}

}  // namespace
}  // namespace peak
