// Gemma 3's and SmolVLM's image encoders (SigLIP tower and projector) against
// a naive double-precision reference written from the published model
// definition (tests/model/vision_reference.h), their input against PIL's
// resampling, SmolVLM's tiles and their texts against Hugging Face's
// processor, the file layout against llama.cpp's clip names, and the
// refusals of broken projector files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../image/netpbm.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/model_error.h"
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

// PIL's bilinear resize of a test picture to the tiny encoder's 32 x 32.
image::Image pil_input() { return image::read_netpbm(kImages + "vision/gemma3_32.ppm"); }

using test::max_abs;

// The encoder's output and the reference's for `picture` (already 32 x 32,
// so no resampling happens on either side): the largest difference relative
// to the reference's largest value.
double relative_difference(const std::string& path, const image::Image& picture, int n_threads = 0) {
  const auto projector = model::Projector::load(path);
  runtime::ImageEncoder encoder(*projector, {n_threads});
  const std::vector<float> got = encoder.encode(picture);
  const auto file = gguf::GgufFile::open(path);
  int64_t n_tokens = 0, n_embd_text = 0;
  const std::vector<double> want = test::image_embeddings_reference(
      *file, test::normalise_reference(*file, picture.pixels.data(), picture.width, picture.height), &n_tokens,
      &n_embd_text);
  EXPECT_EQ(n_tokens, encoder.n_image_tokens());
  EXPECT_EQ(n_embd_text, encoder.n_embd_out());
  EXPECT_EQ(got.size(), want.size());
  double diff = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) diff = std::max(diff, std::fabs(got[i] - want[i]));
  EXPECT_GT(max_abs(want), 0.1);  // a real signal, not a vanishing one
  return diff / std::max(1.0, max_abs(want));
}

TEST(ImageEncoder, Gemma3EqualsTheReference) {
  const std::string path = test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32);
  EXPECT_LT(relative_difference(path, pil_input()), 1e-4);
}

// A projector.scale_factor in the file (llama.cpp's tiny test models have
// one): 2 x 2 patches per token, 16 tokens.
TEST(ImageEncoder, Gemma3MergesAsTheFileSays) {
  model::SynthSpec spec = test::tiny_spec(Arch::Gemma3Vision);
  spec.merge = 2;
  const std::string path = test::write_tiny_spec(spec, GgmlType::F32, "gemma3_vision_merge2");
  EXPECT_EQ(model::Projector::load(path)->hparams().vision.n_image_tokens(), 16);
  EXPECT_LT(relative_difference(path, pil_input()), 1e-4);
}

// SmolVLM's connector: the 8 x 8 patches shuffled 2 x 2 into 16 tokens, then
// mm.model.fc; and 4 x 4 into 4 tokens, as SmolVLM-256M's files say; and in
// 16 bits, as its files hold the matrices.
TEST(ImageEncoder, Idefics3EqualsTheReference) {
  const std::string path = test::write_tiny_model(Arch::Idefics3Vision, GgmlType::F32);
  const auto projector = model::Projector::load(path);
  EXPECT_EQ(projector->hparams().vision.n_image_tokens(), 16);
  EXPECT_EQ(projector->transposed_bytes(), 0u);  // fc is stored as the product reads it
  EXPECT_LT(relative_difference(path, pil_input()), 1e-4);

  model::SynthSpec spec = test::tiny_spec(Arch::Idefics3Vision);
  spec.merge = 4;
  const std::string merged = test::write_tiny_spec(spec, GgmlType::F32, "idefics3_vision_merge4");
  EXPECT_EQ(model::Projector::load(merged)->hparams().vision.n_image_tokens(), 4);
  EXPECT_LT(relative_difference(merged, pil_input()), 1e-4);
  EXPECT_LT(relative_difference(test::write_tiny_model(Arch::Idefics3Vision, GgmlType::F16), pil_input()), 1e-2);
}

// 16-bit weights, as llama.cpp's projector files hold them: the activations
// meet them in 16 bits too.
TEST(ImageEncoder, Gemma3WithF16WeightsIsCloseToTheReference) {
  const std::string path = test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F16);
  EXPECT_LT(relative_difference(path, pil_input()), 1e-2);
}

TEST(ImageEncoder, OneThreadAndTwoGiveTheSameEmbeddings) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
  runtime::ImageEncoder one(*projector, {1});
  runtime::ImageEncoder two(*projector, {2});
  const std::vector<float> a = one.encode(pil_input());
  EXPECT_EQ(a, two.encode(pil_input()));
  EXPECT_EQ(a, one.encode(pil_input()));  // and again: nothing carried over
}

// The processor's input: PIL's bilinear resize of the source picture, then
// v / 255 normalised by the file's mean and std, channel by channel; the
// encoder reads it patch by patch in token order (vision_positions).
TEST(ImageEncoder, PatchesAreThePicturesResizedAsPILThenNormalised) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
  const model::HParams& hp = projector->hparams();
  const std::vector<uint8_t> png = image::read_bytes(kImages + "png/photo_256x192.png");
  const image::Image source = image::decode(png.data(), png.size());
  ASSERT_EQ(source.width, 256u);
  std::vector<float> patches(static_cast<size_t>(hp.vision.n_patches() * 3 * 16));
  model::vision_patches(source, hp, patches.data());

  const image::Image pil = pil_input();
  const std::vector<double> want = test::normalise_reference(projector->file(), pil.pixels.data(), 32, 32);
  const std::vector<int32_t> positions = model::vision_positions(hp);
  size_t i = 0;
  for (int32_t position : positions) {
    const int64_t py = position / 8, px = position % 8;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t ky = 0; ky < 4; ++ky) {
        for (int64_t kx = 0; kx < 4; ++kx, ++i) {
          const double expected = want[static_cast<size_t>((c * 32 + py * 4 + ky) * 32 + px * 4 + kx)];
          ASSERT_NEAR(patches[i], expected, 1e-6) << "patch at " << position << ", channel " << c;
        }
      }
    }
  }
  // Every patch once, tokens' patches together: token 0 holds the top-left 4 x 4.
  EXPECT_EQ(std::set<int32_t>(positions.begin(), positions.end()).size(), positions.size());
  EXPECT_EQ(std::vector<int32_t>(positions.begin(), positions.begin() + 5), (std::vector<int32_t>{0, 1, 2, 3, 8}));
}

// SmolVLM's processor resizes an unsplit picture with PIL's LANCZOS: the
// patches of the source picture are those of PIL's resize.
TEST(ImageEncoder, Idefics3ResizesAsPILsLanczos) {
  const auto projector = model::Projector::load(test::write_tiny_model(Arch::Idefics3Vision, GgmlType::F32));
  const model::HParams& hp = projector->hparams();
  const std::vector<uint8_t> png = image::read_bytes(kImages + "png/photo_256x192.png");
  const size_t n = static_cast<size_t>(hp.vision.n_patches() * 3 * 16);
  std::vector<float> from_source(n), from_pil(n);
  model::vision_patches(image::decode(png.data(), png.size()), hp, from_source.data());
  model::vision_patches(image::read_netpbm(kImages + "vision/smolvlm_32.ppm"), hp, from_pil.data());
  EXPECT_EQ(from_source, from_pil);
  std::vector<float> bilinear(n);
  model::vision_patches(pil_input(), hp, bilinear.data());
  EXPECT_NE(from_source, bilinear);  // the fixtures differ: the filter matters
}

// The tiny SmolVLM encoder's hyper-parameters with tiles of 32 pixels (16
// image tokens each) and pictures resized to a longest edge of `longest_edge`.
model::HParams tiled_hparams(int64_t longest_edge) {
  model::HParams hp;
  hp.arch = Arch::Idefics3Vision;
  hp.vision.image_size = 32;
  hp.vision.patch_size = 4;
  hp.vision.merge = 2;
  hp.vision.longest_edge = longest_edge;
  return hp;
}

image::Image photo() {
  const std::vector<uint8_t> png = image::read_bytes(kImages + "png/photo_256x192.png");
  return image::decode(png.data(), png.size());
}

// Rows [first, first + height) of a picture.
image::Image rows_of(const image::Image& picture, uint32_t first, uint32_t height) {
  image::Image out;
  out.width = picture.width;
  out.height = height;
  const size_t row = size_t{picture.width} * picture.channels;
  out.pixels.assign(picture.pixels.begin() + static_cast<std::ptrdiff_t>(first * row),
                    picture.pixels.begin() + static_cast<std::ptrdiff_t>((first + height) * row));
  return out;
}

// SmolVLM's processor resizes the picture to its longest edge and to whole
// tiles (256 x 192 -> 96 x 72 -> 96 x 96), cuts 3 x 3 tiles and shrinks the
// whole to the overview, each resize PIL's Lanczos: make_smolvlm.py's frames,
// stacked top to bottom, byte for byte.
TEST(ImageEncoder, Idefics3FramesAreThoseOfHuggingFacesProcessor) {
  const image::Image pil = image::read_netpbm(kImages + "vision/smolvlm_32_96.ppm");
  ASSERT_EQ(pil.width, 32u);
  ASSERT_EQ(pil.height, 320u);
  const std::vector<image::Image> frames = model::vision_frames(photo(), tiled_hparams(96));
  ASSERT_EQ(frames.size(), 10u);
  for (uint32_t i = 0; i < 10; ++i) {
    EXPECT_EQ(frames[i].width, 32u);
    EXPECT_EQ(frames[i].height, 32u);
    EXPECT_EQ(frames[i].channels, 3u);
    EXPECT_EQ(frames[i].pixels, rows_of(pil, 32 * i, 32).pixels) << "frame " << i;
  }
}

// The texts of _prompt_split_image (Idefics3Processor, SmolVLMProcessor) for
// a grid of rows x cols tiles.
std::vector<std::string> split_texts(int rows, int cols) {
  std::vector<std::string> texts;
  for (int r = 1; r <= rows; ++r) {
    for (int c = 1; c <= cols; ++c) {
      texts.push_back(std::string(r > 1 && c == 1 ? "\n" : "") + "<fake_token_around_image><row_" + std::to_string(r) +
                      "_col_" + std::to_string(c) + ">");
    }
  }
  texts.emplace_back("\n\n<fake_token_around_image><global-img>");
  texts.emplace_back("<fake_token_around_image>");
  return texts;
}

// Sizes worked out with the processor's formulas (HF's SmolVLMImageProcessor):
// first the longest edge L, the other side int(L / (w / h)) or int(L * (w / h)),
// made even; then each side up to a multiple of the tile T, the short one from
// the long one's int(W / aspect) or int(H * aspect).
TEST(ImageEncoder, Idefics3PictureLayouts) {
  // L = T = 32. 50 x 50 -> 32 x 32: one tile, not split. 64 x 20 -> 32 x
  // int(32 / 3.2) = 10 -> 32 x ceil(int(32 / 3.2) / 32) 32 = 32 x 32: one tile.
  for (const auto& size : {std::pair<int64_t, int64_t>{50, 50}, {64, 20}, {32, 32}, {1, 1}}) {
    const model::PictureLayout one = model::picture_layout(tiled_hparams(32), size.first, size.second);
    EXPECT_EQ(one.grid_rows, 0);
    EXPECT_EQ(one.grid_cols, 0);
    EXPECT_EQ(one.tokens_per_frame, 16);
    EXPECT_EQ(one.texts,
              (std::vector<std::string>{"<fake_token_around_image><global-img>", "<fake_token_around_image>"}));
    EXPECT_EQ(one.n_tokens(), 16);
  }
  EXPECT_EQ(model::vision_frames(photo(), tiled_hparams(32)).size(), 1u);

  // Pictures resized to a longest edge of L, in tiles of 32.
  const auto expect_grid = [](int64_t longest_edge, int64_t width, int64_t height, int rows, int cols) {
    const model::PictureLayout l = model::picture_layout(tiled_hparams(longest_edge), width, height);
    EXPECT_EQ(l.grid_rows, rows) << width << " x " << height;
    EXPECT_EQ(l.grid_cols, cols) << width << " x " << height;
    EXPECT_EQ(l.texts, split_texts(rows, cols)) << width << " x " << height;
    EXPECT_EQ(l.n_frames(), rows * cols + 1);
    EXPECT_EQ(l.n_tokens(), (rows * cols + 1) * 16);
  };
  // 256 x 192 -> 96 x int(96 / (4 / 3)) = 96 x 72 -> 96 x 96: 3 x 3. A
  // smaller picture is enlarged: 40 x 30 -> 96 x 72, the same.
  expect_grid(96, 256, 192, 3, 3);
  expect_grid(96, 40, 30, 3, 3);
  // Wide: 400 x 100 -> 96 x 24 -> 96 x ceil(int(96 / 4) / 32) 32 = 96 x 32: 1 x 3;
  // 1000 x 1 -> 96 x int(0.096) = 96 x 0, at least 1 -> 96 x 32: 1 x 3.
  expect_grid(96, 400, 100, 1, 3);
  expect_grid(96, 1000, 1, 1, 3);
  // Tall: 100 x 200 -> int(96 * 0.5) = 48 x 96 -> ceil(int(96 * 0.5) / 32) 32 = 64 x 96: 3 x 2;
  // 100 x 250 -> int(38.4) = 38 x 96 -> ceil(int(96 * 38 / 96) / 32) 32 = 64 x 96: 3 x 2.
  expect_grid(96, 100, 200, 3, 2);
  expect_grid(96, 100, 250, 3, 2);
  // 2 x 1 -> 96 x 48 -> 96 x 64: 2 x 3.
  expect_grid(96, 2, 1, 2, 3);
  // L = 64: 100 x 100 -> 64 x 64: 2 x 2, the texts written out.
  EXPECT_EQ(
      model::picture_layout(tiled_hparams(64), 100, 100).texts,
      (std::vector<std::string>{"<fake_token_around_image><row_1_col_1>", "<fake_token_around_image><row_1_col_2>",
                                "\n<fake_token_around_image><row_2_col_1>", "<fake_token_around_image><row_2_col_2>",
                                "\n\n<fake_token_around_image><global-img>", "<fake_token_around_image>"}));
  // L = 97: 15 x 4 -> 97 x int(97 / 3.75) = 97 x 25, made even 26 -> 128 x
  // ceil(int(128 / (97 / 26)) / 32) 32 = 128 x ceil(34 / 32) 32 = 128 x 64:
  // 2 x 4 (25 kept odd would give int(32.98) = 32, one row); 4 x 15 the same
  // turned: 26 x 97 -> 64 x 128, 4 x 2.
  expect_grid(97, 15, 4, 2, 4);
  expect_grid(97, 4, 15, 4, 2);

  // A row that does not tile: Gemma 3's, or SmolVLM's file without a longest edge.
  model::HParams gemma3 = tiled_hparams(96);
  gemma3.arch = Arch::Gemma3Vision;
  EXPECT_EQ(model::picture_layout(gemma3, 256, 192).texts,
            (std::vector<std::string>{"\n\n<start_of_image>", "<end_of_image>\n\n"}));
  EXPECT_EQ(model::max_picture_frames(gemma3), 1);
  EXPECT_EQ(model::picture_layout(tiled_hparams(0), 256, 192).n_frames(), 1);
  EXPECT_EQ(model::max_picture_frames(tiled_hparams(0)), 1);
  const std::vector<image::Image> frames = model::vision_frames(photo(), tiled_hparams(0));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].width, 256u);  // vision_patches resizes it
  EXPECT_THROW(model::picture_layout(tiled_hparams(96), 0, 10), std::invalid_argument);
}

// The texts of a grid alone (a session file keeps the grid, not the picture):
// picture_layout's, and refused for a grid the row cannot have.
TEST(ImageEncoder, FrameTextsOfAGrid) {
  const model::ArchSpec& smolvlm = model::arch_spec(Arch::Idefics3Vision);
  const model::ArchSpec& gemma3 = model::arch_spec(Arch::Gemma3Vision);
  EXPECT_EQ(model::frame_texts(smolvlm, 3, 2), model::picture_layout(tiled_hparams(96), 100, 200).texts);
  EXPECT_EQ(model::frame_texts(smolvlm, 2, 3), split_texts(2, 3));
  EXPECT_EQ(model::frame_texts(smolvlm, 0, 0),
            (std::vector<std::string>{"<fake_token_around_image><global-img>", "<fake_token_around_image>"}));
  EXPECT_EQ(model::frame_texts(gemma3, 0, 0), (std::vector<std::string>{"\n\n<start_of_image>", "<end_of_image>\n\n"}));
  EXPECT_EQ(model::frame_texts(smolvlm, model::kMaxGridSide, 1).size(), static_cast<size_t>(model::kMaxGridSide + 2));
  for (const auto& grid : {std::pair<int64_t, int64_t>{0, 2}, {2, 0}, {-1, 2}, {model::kMaxGridSide + 1, 1}}) {
    EXPECT_THROW(model::frame_texts(smolvlm, grid.first, grid.second), std::invalid_argument)
        << grid.first << " x " << grid.second;
  }
  EXPECT_THROW(model::frame_texts(gemma3, 2, 2), std::invalid_argument);
}

// max_picture_frames bounds every picture's frames and a square picture
// reaches it: L 96 gives at most 3 x 3 tiles and the overview; an odd L 97
// can make the short side 98 (made even), 4 tiles of 32; L 32, one tile.
TEST(ImageEncoder, Idefics3MaxPictureFramesIsTheMostAPictureHas) {
  for (const int64_t longest_edge : {32, 33, 96, 97}) {
    const model::HParams hp = tiled_hparams(longest_edge);
    int64_t most = 0;
    for (int64_t w = 1; w <= 200; ++w) {
      for (int64_t h = 1; h <= 200; ++h) most = std::max(most, model::picture_layout(hp, w, h).n_frames());
    }
    EXPECT_EQ(most, model::max_picture_frames(hp)) << longest_edge;
  }
  EXPECT_EQ(model::max_picture_frames(tiled_hparams(96)), 10);
  EXPECT_EQ(model::max_picture_frames(tiled_hparams(97)), 17);
  EXPECT_EQ(model::max_picture_frames(tiled_hparams(32)), 1);
  // SmolVLM-256M's files: 2048 / 512 -> 4 x 4 tiles and the overview, 64 tokens each.
  model::HParams real = tiled_hparams(2048);
  real.vision.image_size = 512, real.vision.patch_size = 16, real.vision.merge = 4;
  EXPECT_EQ(model::max_picture_frames(real), 17);
  EXPECT_EQ(real.vision.n_image_tokens(), 64);
  EXPECT_EQ(model::synth_preset("smolvlm-256m-mmproj").longest_edge, 2048);
}

// A tiled picture encoded: each frame's tokens in the layout's order, equal
// to the reference run on each of vision_frames' frames.
TEST(ImageEncoder, Idefics3TiledEqualsTheReferenceOnEachFrame) {
  model::SynthSpec spec = test::tiny_spec(Arch::Idefics3Vision);
  spec.longest_edge = 96;
  const std::string path = test::write_tiny_spec(spec, GgmlType::F32, "idefics3_vision_tiled");
  const auto projector = model::Projector::load(path);
  EXPECT_EQ(projector->hparams().vision.longest_edge, 96);
  runtime::ImageEncoder encoder(*projector);
  const image::Image picture = photo();
  const model::PictureLayout layout = model::picture_layout(projector->hparams(), picture.width, picture.height);
  EXPECT_EQ(layout.n_frames(), 10);
  const std::vector<float> got = encoder.encode(picture);
  ASSERT_EQ(got.size(), static_cast<size_t>(layout.n_tokens() * encoder.n_embd_out()));

  const auto file = gguf::GgufFile::open(path);
  std::vector<double> want;
  for (const image::Image& frame : model::vision_frames(picture, projector->hparams())) {
    const std::vector<double> tokens = test::image_embeddings_reference(
        *file, test::normalise_reference(*file, frame.pixels.data(), 32, 32), nullptr, nullptr);
    want.insert(want.end(), tokens.begin(), tokens.end());
  }
  ASSERT_EQ(got.size(), want.size());
  double diff = 0.0;
  for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, std::fabs(got[i] - want[i]));
  EXPECT_GT(max_abs(want), 0.1);
  EXPECT_LT(diff / std::max(1.0, max_abs(want)), 1e-4);
  // Frames differ: not one frame's tokens repeated.
  EXPECT_NE(std::vector<float>(got.begin(), got.begin() + 16 * 48), std::vector<float>(got.end() - 16 * 48, got.end()));
  // The memory estimate keeps a largest picture's tokens: 3 x 3 tiles and the overview.
  const runtime::ProjectorMemoryEstimate estimate =
      runtime::estimate_projector_memory(io::FileSource::path(path), {}, {});
  EXPECT_EQ(estimate.image_bytes, size_t{10 * 16 * 48} * sizeof(float));
}

// llama.cpp's clip names and shapes (clip-impl.h's TN_* for Gemma 3).
TEST(ImageEncoder, Gemma3FilesHoldLlamaCppsTensors) {
  const auto file = gguf::GgufFile::open(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
  std::set<std::string> names;
  for (size_t i = 0; i < file->n_tensors(); ++i) names.insert(std::string(file->tensor(i).name));
  std::set<std::string> expected = {"v.patch_embd.weight",       "v.patch_embd.bias", "v.position_embd.weight",
                                    "v.post_ln.weight",          "v.post_ln.bias",    "mm.soft_emb_norm.weight",
                                    "mm.input_projection.weight"};
  for (int layer = 0; layer < 2; ++layer) {
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_out", "ln1", "ln2", "ffn_up", "ffn_down"}) {
      for (const char* part : {"weight", "bias"}) {
        expected.insert("v.blk." + std::to_string(layer) + "." + t + "." + part);
      }
    }
  }
  EXPECT_EQ(names, expected);
  const auto shape = [&](const char* name) {
    const gguf::TensorInfo* t = file->find_tensor(name);
    return std::vector<int64_t>(t->ne, t->ne + t->n_dims);
  };
  EXPECT_EQ(shape("v.patch_embd.weight"), (std::vector<int64_t>{4, 4, 3, 64}));
  EXPECT_EQ(shape("v.position_embd.weight"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(shape("mm.input_projection.weight"), (std::vector<int64_t>{48, 64}));
  EXPECT_EQ(shape("v.blk.0.ffn_up.weight"), (std::vector<int64_t>{64, 96}));
  EXPECT_EQ(file->find("general.architecture")->str(), "clip");
}

std::string edited_projector(const std::function<void(gguf::GgufWriter&)>& edit_keys, const std::string& drop = "",
                             Arch arch = Arch::Gemma3Vision) {
  return test::edited_projector(edit_keys, drop, arch);
}
using test::expect_projector_refused;

TEST(ImageEncoder, BrokenProjectorsAreRefusedByName) {
  expect_projector_refused(
      edited_projector([](gguf::GgufWriter& w) { w.set_string("clip.projector_type", "resampler"); }),
      "unsupported projector type 'resampler' (peak runs gemma3, idefics3, qwen2.5vl_merger)");
  expect_projector_refused(edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.image_size", 30); }),
                           "'clip.vision.image_size' 30 is not a multiple of 'clip.vision.patch_size' 4");
  expect_projector_refused(
      edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.projector.scale_factor", 3); }),
      "cannot be merged 3 by 3");
  expect_projector_refused(edited_projector([](gguf::GgufWriter& w) {
                             const float two[2] = {0.5f, 0.5f};
                             w.set_array("clip.vision.image_std", gguf::ValueType::Float32, two, 2);
                           }),
                           "'clip.vision.image_std' must hold 3 floats");
  expect_projector_refused(edited_projector([](gguf::GgufWriter& w) {
                             const float zero[3] = {0.5f, 0.0f, 0.5f};
                             w.set_array("clip.vision.image_std", gguf::ValueType::Float32, zero, 3);
                           }),
                           "must be positive and finite");
  expect_projector_refused(edited_projector(nullptr, "v.blk.1.ln2.bias"), "lacks tensor 'v.blk.1.ln2.bias'");
  expect_projector_refused(edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.block_count", 3); }),
                           "the file holds tensors of 2 blocks");
}

// SmolVLM's longest edge: at least a tile, at most 32768 image tokens a
// picture (tiles of 32 with 16 tokens: 1440 -> 45 x 45 tiles and the overview,
// 2026 frames, 32416 tokens; 1441, made even 1442 -> 46 x 46 and the
// overview, 33872) and 64 x 64 tiles. Gemma 3 reads no such key.
TEST(ImageEncoder, Idefics3LongestEdgesAreCheckedByName) {
  const auto longest_edge = [](uint32_t edge) {
    return [edge](gguf::GgufWriter& w) { w.set_u32("clip.vision.preproc_image_size", edge); };
  };
  expect_projector_refused(edited_projector(longest_edge(16), "", Arch::Idefics3Vision),
                           "'clip.vision.preproc_image_size' is 16; it must be between 32 and 8192");
  expect_projector_refused(edited_projector(longest_edge(9000), "", Arch::Idefics3Vision),
                           "'clip.vision.preproc_image_size' is 9000; it must be between 32 and 8192");
  expect_projector_refused(
      edited_projector(longest_edge(1441), "", Arch::Idefics3Vision),
      "'clip.vision.preproc_image_size' 1441 cuts a picture into up to 2117 frames of 16 tokens; peak "
      "takes at most 32768 image tokens a picture");
  EXPECT_EQ(model::Projector::load(edited_projector(longest_edge(1440), "", Arch::Idefics3Vision))
                ->hparams()
                .vision.longest_edge,
            1440);
  // One token a frame (8 x 8 patches merged into one): the tokens allow 181 x
  // 181 tiles, but the grid is bounded: 2048 -> 64 x 64 tiles and the overview,
  // 2080 -> 65 x 65.
  model::SynthSpec one_token = test::tiny_spec(Arch::Idefics3Vision);
  one_token.merge = 8;
  one_token.longest_edge = 2048;
  EXPECT_EQ(model::max_picture_frames(
                model::Projector::load(test::write_tiny_spec(one_token, GgmlType::F32, "one_token"))->hparams()),
            4097);
  one_token.longest_edge = 2080;
  expect_projector_refused(
      test::write_tiny_spec(one_token, GgmlType::F32, "one_token_wide"),
      "'clip.vision.preproc_image_size' 2080 cuts a picture into up to 4225 tiles of 32 pixels; peak "
      "takes at most 64 x 64");
  EXPECT_EQ(model::Projector::load(edited_projector(longest_edge(16)))->hparams().vision.longest_edge, 0);
  EXPECT_EQ(model::Projector::load(test::write_tiny_model(Arch::Idefics3Vision, GgmlType::F32))
                ->hparams()
                .vision.longest_edge,
            0);
}

// Each file where the other belongs: a language model is no projector, and a
// projector no language model.
TEST(ImageEncoder, ProjectorAndLanguageModelAreNotTakenForEachOther) {
  expect_projector_refused(test::stories_path(), "not a vision projector: general.architecture is 'llama'");
  try {
    model::Model::load(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
    ADD_FAILURE() << "a projector loaded as a language model";
  } catch (const model::InvalidModel& e) {
    EXPECT_NE(std::string(e.what()).find("a vision projector"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace peak
