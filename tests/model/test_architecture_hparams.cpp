// The hyper-parameters of gemma2, gemma3, phi3 and smollm3 follow llama.cpp's
// rules (which layers slide, the local layers' rope, soft-cap defaults, the
// query scale, LongRoPE, the layers without rotation), from the file's keys
// where it has them; bad values and tensors are refused with a message
// naming them.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "tiny_models.h"

namespace peak {
namespace {

using model::Arch;
using model::HParams;
using test::tiny_spec;

// A tensor on its way into the rewritten file; the edit may change its shape or data.
struct TensorEdit {
  std::string name;
  int64_t ne[4];
  const void* data;
};

// Writes `spec` in F32, then copies it with `edit_keys` applied to the metadata
// and each tensor passed through `edit_tensor` (returning false drops it).
std::string rewrite(const model::SynthSpec& spec, const std::function<void(gguf::GgufWriter&)>& edit_keys,
                    const std::function<bool(TensorEdit&)>& edit_tensor = {}) {
  const std::string base = test::test_temp_path("base.gguf");
  model::write_synth_model(spec, model::SynthOptions{}, base);
  const auto file = gguf::GgufFile::open(base);
  gguf::GgufWriter w;
  for (size_t i = 0; i < file->n_kv(); ++i) w.copy_value(file->value(i));
  if (edit_keys) edit_keys(w);
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    TensorEdit e{std::string(t.name), {t.ne[0], t.ne[1], t.ne[2], t.ne[3]}, t.data};
    if (edit_tensor && !edit_tensor(e)) continue;
    w.add_tensor(e.name, t.type, t.n_dims, e.ne, e.data);
  }
  const std::string path = test::test_temp_path("edited.gguf");
  w.write_file(path);
  return path;
}

HParams hparams_of(const model::SynthSpec& spec, const std::function<void(gguf::GgufWriter&)>& edit_keys = {}) {
  const std::string path = rewrite(spec, edit_keys);
  return model::read_hparams(*gguf::GgufFile::open(path));
}

std::string load_error(const std::string& path) {
  try {
    model::Model::load(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The message of loading `spec` with one key edited; empty when it loads.
std::string key_error(const model::SynthSpec& spec, const std::function<void(gguf::GgufWriter&)>& edit_keys) {
  return load_error(rewrite(spec, edit_keys));
}

std::vector<int64_t> sliding_layers(const HParams& hp) {
  std::vector<int64_t> out;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    if (hp.layer(il).sliding) out.push_back(il);
  }
  return out;
}

TEST(ArchitectureHParams, AnUnknownArchitectureIsRefusedWithTheSupportedOnes) {
  const std::string error = key_error(tiny_spec(Arch::Llama), [](gguf::GgufWriter& w) {
    w.set_string("general.architecture", "mamba");
  });
  const char* expected =
      "unsupported architecture 'mamba' (peak runs llama, qwen2, qwen3, gemma2, gemma3, phi3, smollm3, bert, "
      "gemma-embedding, nomic-bert, qwen2vl)";
  EXPECT_NE(error.find(expected), std::string::npos) << error;
}

// qwen2vl (llama.cpp's loader): rope.dimension_sections splits the rotated
// pairs among t, h and w (Qwen2.5-VL's {16, 24, 24, 0} of 64 pairs; synth
// scales it, to {2, 3, 3, 0} of the tiny model's 8); missing, mis-sized or unsupported sections
// are refused by name.
TEST(ArchitectureHParams, Qwen2VLReadsItsRopeSectionsAndRefusesBadOnes) {
  const model::SynthSpec spec = tiny_spec(Arch::Qwen2VL);
  const HParams hp = hparams_of(spec);
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Multi);
  EXPECT_EQ(hp.rope.sections[0], 2);
  EXPECT_EQ(hp.rope.sections[1], 3);
  const auto sections_error = [&](std::vector<int32_t> sections) {
    return key_error(spec, [&](gguf::GgufWriter& w) {
      w.set_array("qwen2vl.rope.dimension_sections", gguf::ValueType::Int32, sections.data(), sections.size());
    });
  };
  EXPECT_NE(key_error(spec, [](gguf::GgufWriter& w) { w.remove("qwen2vl.rope.dimension_sections"); })
                .find("lacks 'qwen2vl.rope.dimension_sections'"),
            std::string::npos);
  EXPECT_NE(sections_error({2, 3, 3}).find("must hold four 32-bit integers"), std::string::npos);
  EXPECT_NE(sections_error({2, 3, 2, 0}).find("covers 7 pairs, not the 8 that rotate"), std::string::npos);
  EXPECT_NE(sections_error({2, 3, 2, 1}).find("fourth section"), std::string::npos);
  EXPECT_NE(sections_error({-1, 3, 6, 0}).find("holds -1"), std::string::npos);
}

TEST(ArchitectureHParams, Gemma2SlidesEveryOtherLayerWithLlamaCppDefaults) {
  model::SynthSpec spec = tiny_spec(Arch::Gemma2);
  spec.n_layer = 4;
  spec.sliding_window = 0;  // no window, no caps in the file: llama.cpp's 4096, 50 and 30
  spec.attn_softcap = spec.final_softcap = 0.0f;
  const HParams hp = hparams_of(spec);
  EXPECT_EQ(hp.sliding_window, 4096);
  EXPECT_EQ(sliding_layers(hp), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(hp.window(0), 4096);
  EXPECT_EQ(hp.window(1), 0);
  EXPECT_FLOAT_EQ(hp.attn_softcap, 50.0f);
  EXPECT_FLOAT_EQ(hp.final_softcap, 30.0f);
  EXPECT_FLOAT_EQ(hp.embedding_scale, 8.0f);  // sqrt(64)
  EXPECT_EQ(hp.ffn_activation, model::FfnActivation::GeluTanh);
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Neox);
  EXPECT_FLOAT_EQ(hp.attention_scale, 0.25f);  // 1 / sqrt(head_dim 16)
  // Both kinds of layer rotate alike.
  EXPECT_FLOAT_EQ(hp.layer(0).rope_params.freq_base, hp.layer(1).rope_params.freq_base);

  // The file's window and caps.
  const HParams tiny = hparams_of(tiny_spec(Arch::Gemma2));
  EXPECT_EQ(tiny.sliding_window, test::kTinyWindow);
  EXPECT_FLOAT_EQ(tiny.attn_softcap, 0.1f);
  EXPECT_FLOAT_EQ(tiny.final_softcap, 0.2f);
}

TEST(ArchitectureHParams, GemmaQueryScaleFollowsLlamaCppOrTheFilesScalar) {
  // Head size 32 but n_embd / n_head 16: the 27B variants (46 layers in Gemma 2)
  // scale by n_embd / n_head, the others by the head size.
  model::SynthSpec spec = tiny_spec(Arch::Gemma2);
  spec.head_dim = 32;
  EXPECT_FLOAT_EQ(hparams_of(spec).attention_scale, static_cast<float>(1.0 / std::sqrt(32.0)));
  spec.n_layer = 46;
  EXPECT_FLOAT_EQ(hparams_of(spec).attention_scale, 0.25f);
  const HParams keyed = hparams_of(tiny_spec(Arch::Gemma3), [](gguf::GgufWriter& w) {
    w.set_f32("gemma3.attention.query_pre_attn_scalar", 144.0f);
  });
  EXPECT_FLOAT_EQ(keyed.attention_scale, 1.0f / 12.0f);
}

// llama.cpp's gemma-embedding: Gemma 3's pattern of five local layers per
// global one, both ways (no causal mask), scores always 1/sqrt(head_dim) (the
// query scalar unread), the window's key required; an embedding model.
TEST(ArchitectureHParams, GemmaEmbeddingIsABidirectionalGemma3WithARequiredWindow) {
  model::SynthSpec spec = tiny_spec(Arch::GemmaEmbedding);
  spec.n_layer = 12;
  const HParams hp = hparams_of(
      spec, [](gguf::GgufWriter& w) { w.set_f32("gemma-embedding.attention.query_pre_attn_scalar", 100.0f); });
  EXPECT_EQ(sliding_layers(hp), (std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_EQ(hp.window(4), test::kTinyWindow);
  EXPECT_FLOAT_EQ(hp.attention_scale, 0.25f);  // 1/sqrt(16)
  EXPECT_FLOAT_EQ(hp.embedding_scale, 8.0f);   // sqrt(64)
  EXPECT_FLOAT_EQ(hp.layer(0).rope_params.freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(hp.layer(5).rope_params.freq_base, 1000000.0f);
  EXPECT_TRUE(hp.embeds);
  EXPECT_FALSE(hp.causal_attention);
  EXPECT_EQ(hp.dense_features, 48);
  EXPECT_EQ(key_error(spec, [](gguf::GgufWriter& w) { w.remove("gemma-embedding.attention.sliding_window"); }),
            "model metadata lacks 'gemma-embedding.attention.sliding_window'");
  EXPECT_EQ(key_error(spec, [](gguf::GgufWriter& w) { w.remove("gemma-embedding.dense_2_feat_out"); }),
            "'gemma-embedding.dense_2_feat_in' is given without 'gemma-embedding.dense_2_feat_out'");
}

TEST(ArchitectureHParams, Gemma3HasFiveLocalLayersPerGlobalOneWithTheirOwnRope) {
  model::SynthSpec spec = tiny_spec(Arch::Gemma3);
  spec.n_layer = 12;
  const HParams hp = hparams_of(spec, [](gguf::GgufWriter& w) {
    w.set_string("gemma3.rope.scaling.type", "linear");
    w.set_f32("gemma3.rope.scaling.factor", 8.0f);
  });
  EXPECT_EQ(sliding_layers(hp), (std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_EQ(hp.window(4), test::kTinyWindow);
  EXPECT_EQ(hp.window(5), 0);
  EXPECT_FLOAT_EQ(hp.attn_softcap, 0.0f);
  EXPECT_FLOAT_EQ(hp.final_softcap, 0.0f);
  // Local layers: base 10000 and no scaling; global ones: the file's base and scaling.
  EXPECT_FLOAT_EQ(hp.layer(0).rope_params.freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(hp.layer(0).rope_params.freq_scale, 1.0f);
  EXPECT_FLOAT_EQ(hp.layer(5).rope_params.freq_base, 1000000.0f);
  EXPECT_FLOAT_EQ(hp.layer(5).rope_params.freq_scale, 0.125f);
  EXPECT_EQ(hp.layer(0).rope_params.n_dims, hp.layer(5).rope_params.n_dims);

  // The file's local base, pattern and final cap.
  const HParams keyed = hparams_of(spec, [](gguf::GgufWriter& w) {
    w.set_f32("gemma3.rope.freq_base_swa", 20000.0f);
    w.set_u32("gemma3.attention.sliding_window_pattern", 3);
    w.set_f32("gemma3.final_logit_softcapping", 30.0f);
  });
  EXPECT_EQ(sliding_layers(keyed), (std::vector<int64_t>{0, 1, 3, 4, 6, 7, 9, 10}));
  EXPECT_FLOAT_EQ(keyed.layer(0).rope_params.freq_base, 20000.0f);
  EXPECT_FLOAT_EQ(keyed.final_softcap, 30.0f);
  const HParams flagged = hparams_of(spec, [](gguf::GgufWriter& w) {
    const bool flags[12] = {true, false, true, false, false, false, true, true, true, true, true, false};
    w.set_array("gemma3.attention.sliding_window_pattern", gguf::ValueType::Bool, flags, 12);
  });
  EXPECT_EQ(sliding_layers(flagged), (std::vector<int64_t>{0, 2, 6, 7, 8, 9, 10}));
  // A period of 0 makes every layer slide; no window makes every layer global.
  EXPECT_EQ(sliding_layers(hparams_of(spec, [](gguf::GgufWriter& w) {
              w.set_u32("gemma3.attention.sliding_window_pattern", 0);
            })).size(),
            12u);
  spec.sliding_window = 0;
  const HParams global = hparams_of(spec);
  EXPECT_TRUE(sliding_layers(global).empty());
  EXPECT_FLOAT_EQ(global.layer(0).rope_params.freq_base, 1000000.0f);
}

TEST(ArchitectureHParams, Phi3RotatesPartlyWithLongRopeAndNoWindow) {
  const HParams hp = hparams_of(tiny_spec(Arch::Phi3));
  EXPECT_EQ(hp.rope.n_dims, 12);
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Neox);
  EXPECT_EQ(hp.rope_original_context, test::kTinyRopeOriginalContext);
  // convert_hf_to_gguf's sqrt(1 + ln(128 / 32) / ln(32)).
  EXPECT_NEAR(hp.rope.attn_factor, std::sqrt(1.0 + std::log(4.0) / std::log(32.0)), 1e-6);
  // llama.cpp turns Phi-3's sliding window off.
  EXPECT_EQ(hp.sliding_window, 0);
  EXPECT_TRUE(sliding_layers(hp).empty());
  // Without the LongRoPE keys: no magnitude factor, the training context as the original one.
  model::SynthSpec plain = tiny_spec(Arch::Phi3);
  plain.rope_original_context = 0;
  const HParams p = hparams_of(plain);
  EXPECT_FLOAT_EQ(p.rope.attn_factor, 1.0f);
  EXPECT_EQ(p.rope_original_context, p.n_ctx_train);
}

TEST(ArchitectureHParams, SmolLM3SkipsRotationInEveryFourthLayer) {
  model::SynthSpec spec = tiny_spec(Arch::SmolLM3);
  spec.n_layer = 8;
  const HParams hp = hparams_of(spec);
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Normal);
  for (int64_t il = 0; il < 8; ++il) EXPECT_EQ(hp.layer(il).rope, il != 3 && il != 7) << "layer " << il;
  EXPECT_TRUE(sliding_layers(hp).empty());
}

TEST(ArchitectureHParams, RefusesBadWindowsCapsScalesAndRopeSettings) {
  const model::SynthSpec gemma2 = tiny_spec(Arch::Gemma2), gemma3 = tiny_spec(Arch::Gemma3);
  const model::SynthSpec phi3 = tiny_spec(Arch::Phi3);
  using KeyEdit = std::function<void(gguf::GgufWriter&)>;
  auto f32 = [](const char* key, float v) -> KeyEdit { return [=](gguf::GgufWriter& w) { w.set_f32(key, v); }; };
  auto i32 = [](const char* key, int32_t v) -> KeyEdit { return [=](gguf::GgufWriter& w) { w.set_i32(key, v); }; };
  auto u32 = [](const char* key, uint32_t v) -> KeyEdit { return [=](gguf::GgufWriter& w) { w.set_u32(key, v); }; };
  struct Case {
    const model::SynthSpec& spec;
    KeyEdit edit;
    const char* message;
  };
  const Case cases[] = {
      {gemma3, i32("gemma3.attention.sliding_window", -8), "'gemma3.attention.sliding_window' must be positive"},
      {gemma2, u32("gemma2.attention.sliding_window", 0), "'gemma2.attention.sliding_window' must be positive"},
      {gemma2, f32("gemma2.attn_logit_softcapping", 0.0f), "'gemma2.attn_logit_softcapping' must be positive"},
      {gemma3, f32("gemma3.final_logit_softcapping", -30.0f), "'gemma3.final_logit_softcapping' must be positive"},
      {gemma3, f32("gemma3.attention.query_pre_attn_scalar", 0.0f),
       "'gemma3.attention.query_pre_attn_scalar' must be positive"},
      {gemma3, f32("gemma3.rope.freq_base_swa", -1.0f), "'gemma3.rope.freq_base_swa' must be positive"},
      {gemma3, i32("gemma3.attention.sliding_window_pattern", -6),
       "'gemma3.attention.sliding_window_pattern' must not be negative"},
      {gemma2,
       [](gguf::GgufWriter& w) {
         const uint32_t flags[3] = {1, 0, 1};
         w.set_array("gemma2.attention.sliding_window_pattern", gguf::ValueType::UInt32, flags, 3);
       },
       "'gemma2.attention.sliding_window_pattern' has 3 entries for 2 layers"},
      {phi3, f32("phi3.rope.scaling.attn_factor", 0.0f), "'phi3.rope.scaling.attn_factor' must be positive"},
      {phi3, u32("phi3.rope.scaling.original_context_length", 0),
       "'phi3.rope.scaling.original_context_length' is 0; it must be between 1 and 2147483647"},
      {phi3, i32("phi3.attention.sliding_window", -1), "'phi3.attention.sliding_window' is negative"},
      {phi3, u32("phi3.rope.dimension_count", 11), "'phi3.rope.dimension_count' 11 must be even and at most the head size 16"},
      {phi3, u32("phi3.rope.dimension_count", 18), "'phi3.rope.dimension_count' 18 must be even and at most the head size 16"},
      {phi3, f32("phi3.rope.freq_base", 0.0f), "'phi3.rope.freq_base' must be positive"},
      {phi3, u32("phi3.block_count", 1000000), "'phi3.block_count' is 1000000; it must be between 1 and 4096"},
  };
  for (const Case& c : cases) {
    const std::string error = key_error(c.spec, c.edit);
    EXPECT_NE(error.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << error << "'";
  }
}

TEST(ArchitectureHParams, RefusesMissingOrMisshapenTensorsOfTheNewArchitectures) {
  auto tensor_error = [](Arch arch, const std::function<bool(TensorEdit&)>& edit) {
    return load_error(rewrite(tiny_spec(arch), {}, edit));
  };
  const float zero_factors[6] = {1.0f, 2.0f, 0.0f, 4.0f, 5.0f, 6.0f};
  struct Case {
    Arch arch;
    std::function<bool(TensorEdit&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {Arch::Phi3, [](TensorEdit& t) { if (t.name == "rope_factors_long.weight") t.ne[0] = 5; return true; },
       "tensor 'rope_factors_long.weight' has shape [5], expected [6]"},
      {Arch::Phi3,
       [&](TensorEdit& t) {
         if (t.name == "rope_factors_short.weight") t.data = zero_factors;
         return true;
       },
       "tensor 'rope_factors_short.weight' holds 0.000000 at 2; frequency factors must be positive"},
      {Arch::Phi3, [](TensorEdit& t) { return t.name != "rope_factors_short.weight"; },
       "LongRoPE needs both 'rope_factors_long.weight' and 'rope_factors_short.weight'"},
      {Arch::Phi3, [](TensorEdit& t) { if (t.name == "blk.1.ffn_up.weight") t.ne[1] = 96; return true; },
       "tensor 'blk.1.ffn_up.weight' has shape [64, 96], expected [64, 192]"},
      {Arch::Phi3, [](TensorEdit& t) { if (t.name == "blk.0.attn_qkv.weight") t.ne[1] = 64; return true; },
       "tensor 'blk.0.attn_qkv.weight' has shape [64, 64], expected [64, 128]"},
      {Arch::Gemma2, [](TensorEdit& t) { return t.name != "blk.1.post_ffw_norm.weight"; },
       "lacks tensor 'blk.1.post_ffw_norm.weight'"},
      {Arch::Gemma3, [](TensorEdit& t) { return t.name != "blk.0.attn_k_norm.weight"; },
       "lacks tensor 'blk.0.attn_k_norm.weight'"},
  };
  for (const Case& c : cases) {
    const std::string error = tensor_error(c.arch, c.edit);
    EXPECT_NE(error.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << error << "'";
  }
}

}  // namespace
}  // namespace peak
