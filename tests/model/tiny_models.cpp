#include "tiny_models.h"

#include <gtest/gtest.h>

#include <vector>

#include "gguf/gguf_reader.h"

namespace peak::test {

using kernels::ggml_type_name;
using kernels::GgmlType;

model::SynthSpec tiny_spec(model::Arch arch) {
  using model::Arch;
  model::SynthSpec s;
  s.arch = arch;
  s.n_layer = arch == Arch::Gemma3 || arch == Arch::GemmaEmbedding ? 6 : arch == Arch::SmolLM3 ? 4 : 2;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = arch == Arch::Qwen3 ? 32 : 16;  // qwen3: head size not n_embd / n_head
  s.n_ff = 96;
  s.n_vocab = 300;
  s.tied_output = arch != Arch::Llama;
  s.rope_base = arch == Arch::Llama || arch == Arch::Phi3 ? 10000.0f : 1000000.0f;
  if (arch == Arch::Gemma2 || arch == Arch::Gemma3 || arch == Arch::GemmaEmbedding || arch == Arch::Phi3) {
    s.sliding_window = kTinyWindow;
  }
  if (arch == Arch::GemmaEmbedding) {
    s.pooling = model::Pooling::Mean;  // EmbeddingGemma's, then dense layers through 48 features
    s.dense_features = 48;
  }
  if (arch == Arch::Gemma2) {
    s.attn_softcap = 0.1f;
    s.final_softcap = 0.2f;
  }
  if (arch == Arch::Bert) {
    // Every head its own K and V, as BERT has; 64 positions; all-MiniLM's mean pooling.
    s.n_head_kv = 4;
    s.n_ctx_train = 64;
    s.norm_eps = 1e-12f;
    s.pooling = model::Pooling::Mean;
  }
  if (arch == Arch::NomicBert) {
    // nomic-embed-text's: a head per K and V, rope base 1000, mean pooling.
    s.n_head_kv = 4;
    s.n_ctx_train = 64;
    s.rope_base = 1000.0f;
    s.norm_eps = 1e-12f;
    s.pooling = model::Pooling::Mean;
  }
  if (arch == Arch::Gemma3Vision || arch == Arch::Idefics3Vision) {
    // SigLIP's shape in small: every head its own K and V, 32 x 32 pixels in
    // patches of 4 (8 x 8); Gemma 3's merged 4 x 4 into 2 x 2 image tokens of
    // 48, SmolVLM's shuffled 2 x 2 into 4 x 4.
    s.n_head_kv = 4;
    s.norm_eps = 1e-6f;
    s.image_size = 32;
    s.patch_size = 4;
    s.n_embd_out = 48;
    if (arch == Arch::Idefics3Vision) s.merge = 2;
  }
  if (arch == Arch::Qwen25Vision) {
    // Qwen2.5-VL's tower in small: 4 heads of 16 (2D rotary positions in
    // 4 + 4 pairs), patches of 4 merged 2 x 2 into tokens of 48, windows of
    // 32 pixels (4 x 4 tokens, as 112 pixels are in the real one), layer 0
    // windowed and layer 1 full (n_wa_pattern 2), at most 64 tokens a picture.
    s.n_head_kv = 4;
    s.norm_eps = 1e-6f;
    s.image_size = 32;
    s.patch_size = 4;
    s.n_embd_out = 48;
    s.wa_pattern = 2;
    s.window_size = 32;
    s.max_pixels = 64 * 64;
  }
  if (arch == Arch::Phi3) {
    s.rope_dims = 12;  // Phi-4-mini's partial rotation: 3/4 of the head
    s.n_ctx_train = 4 * kTinyRopeOriginalContext;
    s.rope_original_context = kTinyRopeOriginalContext;
  }
  return s;
}

std::string test_temp_path(const std::string& stem) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  for (char& c : name) {
    if (c == '/') c = '_';  // parameterised tests: Suite/Test/param
  }
  return ::testing::TempDir() + "peak_" + name + "_" + stem;
}

std::string write_tiny_model(model::Arch arch, GgmlType matrix_type) {
  return write_tiny_spec(tiny_spec(arch), matrix_type, std::string("tiny_") + model::arch_name(arch));
}

std::string write_tiny_spec(const model::SynthSpec& spec, GgmlType matrix_type, const std::string& stem) {
  const std::string path = test_temp_path(stem + "_" + ggml_type_name(static_cast<uint32_t>(matrix_type)) + ".gguf");
  model::SynthOptions opt;
  opt.seed = 7;
  opt.varied_norms = true;
  opt.tensor_type = [matrix_type](const std::string&, int64_t) { return matrix_type; };
  model::write_synth_model(spec, opt, path);
  return path;
}

std::string stories_path() { return std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf"; }

std::string edited_stories(const KeyEdit& edit_keys, const ValueEdit& value) {
  const auto stories = gguf::GgufFile::open(stories_path());
  gguf::GgufWriter w;
  for (size_t i = 0; i < stories->n_kv(); ++i) w.copy_value(stories->value(i));
  if (edit_keys) edit_keys(w);
  std::vector<float> edited;
  for (size_t i = 0; i < stories->n_tensors(); ++i) {
    const gguf::TensorInfo& t = stories->tensor(i);
    const void* data = t.data;
    if (t.name == value.name) {
      EXPECT_EQ(t.type, GgmlType::F32) << value.name;
      const auto* floats = reinterpret_cast<const float*>(t.data);
      edited.assign(floats, floats + t.n_elements());
      edited.at(static_cast<size_t>(value.index)) = value.value;
      data = edited.data();
    }
    w.add_tensor(t.name, t.type, t.n_dims, t.ne, data);
  }
  const std::string path = test_temp_path("edited_stories.gguf");
  w.write_file(path);
  return path;
}

std::string stories_with_control_token(int32_t id, const std::string& text) {
  const auto file = gguf::GgufFile::open(stories_path());
  const gguf::ArrayView texts = file->find("tokenizer.ggml.tokens")->array();
  const gguf::ArrayView types = file->find("tokenizer.ggml.token_type")->array();
  std::vector<std::string> edited_texts;
  std::vector<int32_t> edited_types;
  for (uint64_t i = 0; i < texts.size(); ++i) {
    edited_texts.emplace_back(texts.str(i));
    edited_types.push_back(types.at<int32_t>(i));
  }
  edited_texts.at(static_cast<size_t>(id)) = text;
  edited_types.at(static_cast<size_t>(id)) = 3;
  return edited_stories([&](gguf::GgufWriter& w) {
    w.set_string_array("tokenizer.ggml.tokens", edited_texts);
    w.set_array("tokenizer.ggml.token_type", gguf::ValueType::Int32, edited_types.data(), edited_types.size());
  });
}

}  // namespace peak::test
