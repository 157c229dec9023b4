// Gemma 3's image encoder (SigLIP tower and projector) against a naive
// double-precision reference written from the published model definition
// (tests/model/vision_reference.h), its input against PIL's resampling, its
// file layout against llama.cpp's clip names, and the refusals of broken
// projector files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "../image/netpbm.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/model_error.h"
#include "model/projector.h"
#include "model/tensor_manifest.h"
#include "model/vision.h"
#include "runtime/image_encoder.h"
#include "tiny_models.h"
#include "vision_reference.h"

namespace peak {
namespace {

using kernels::GgmlType;
using model::Arch;

const std::string kImages = std::string(PEAK_TEST_DATA_DIR) + "/images/";

// PIL's bilinear resize of a test picture to the tiny encoder's 32 x 32.
image::Image pil_input() { return image::read_netpbm(kImages + "vision/gemma3_32.ppm"); }

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

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
      *file, test::gemma3_normalise_reference(*file, picture.pixels.data(), picture.width), &n_tokens, &n_embd_text);
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
  const std::vector<double> want = test::gemma3_normalise_reference(projector->file(), pil.pixels.data(), 32);
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

// The tiny projector rewritten: its keys edited, a tensor left out.
std::string edited_projector(const std::function<void(gguf::GgufWriter&)>& edit_keys, const std::string& drop = "") {
  const auto file = gguf::GgufFile::open(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
  gguf::GgufWriter w;
  for (size_t i = 0; i < file->n_kv(); ++i) w.copy_value(file->value(i));
  if (edit_keys) edit_keys(w);
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    if (t.name != drop) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data);
  }
  const std::string path = test::test_temp_path("edited_projector.gguf");
  w.write_file(path);
  return path;
}

void expect_refused(const std::string& path, const std::string& words) {
  try {
    model::Projector::load(path);
    ADD_FAILURE() << "loaded; expected a refusal naming: " << words;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ImageEncoder, BrokenProjectorsAreRefusedByName) {
  expect_refused(edited_projector([](gguf::GgufWriter& w) { w.set_string("clip.projector_type", "resampler"); }),
                 "unsupported projector type 'resampler' (peak runs gemma3, idefics3)");
  expect_refused(edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.image_size", 30); }),
                 "'clip.vision.image_size' 30 is not a multiple of 'clip.vision.patch_size' 4");
  expect_refused(edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.projector.scale_factor", 3); }),
                 "cannot be merged 3 by 3");
  expect_refused(edited_projector([](gguf::GgufWriter& w) {
                   const float two[2] = {0.5f, 0.5f};
                   w.set_array("clip.vision.image_std", gguf::ValueType::Float32, two, 2);
                 }),
                 "'clip.vision.image_std' must hold 3 floats");
  expect_refused(edited_projector([](gguf::GgufWriter& w) {
                   const float zero[3] = {0.5f, 0.0f, 0.5f};
                   w.set_array("clip.vision.image_std", gguf::ValueType::Float32, zero, 3);
                 }),
                 "must be positive and finite");
  expect_refused(edited_projector(nullptr, "v.blk.1.ln2.bias"), "lacks tensor 'v.blk.1.ln2.bias'");
  expect_refused(edited_projector([](gguf::GgufWriter& w) { w.set_u32("clip.vision.block_count", 3); }),
                 "the file holds tensors of 2 blocks");
}

// Each file where the other belongs: a language model is no projector, and a
// projector no language model.
TEST(ImageEncoder, ProjectorAndLanguageModelAreNotTakenForEachOther) {
  expect_refused(test::stories_path(), "not a vision projector: general.architecture is 'llama'");
  try {
    model::Model::load(test::write_tiny_model(Arch::Gemma3Vision, GgmlType::F32));
    ADD_FAILURE() << "a projector loaded as a language model";
  } catch (const model::InvalidModel& e) {
    EXPECT_NE(std::string(e.what()).find("a vision projector"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace peak
