// The tensor manifest against the files: a synthetic file of every
// architecture holds exactly the manifest's tensors (each name with its shape,
// every required one, nothing else), and its blocks hold llama.cpp's tensors
// for the architecture (llama-model.cpp's load_tensors).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/synth.h"
#include "model/tensor_manifest.h"
#include "tiny_models.h"

namespace peak {
namespace {

using model::Arch;
using model::ManifestTensor;
using model::Presence;

const Arch kAllArchs[] = {Arch::Llama,   Arch::Qwen2, Arch::Qwen3,          Arch::Gemma2,    Arch::Gemma3, Arch::Phi3,
                          Arch::SmolLM3, Arch::Bert,  Arch::GemmaEmbedding, Arch::NomicBert, Arch::Qwen2VL};

using Shape = std::vector<int64_t>;

Shape shape_of(const int64_t* ne, uint32_t n_dims) { return Shape(ne, ne + n_dims); }

struct WrittenFile {
  model::HParams hp;                    // as read back
  std::map<std::string, Shape> shapes;  // of its tensors, by name
};

// Writes `spec` (F32) and reads it back.
WrittenFile write_and_read(const model::SynthSpec& spec, const std::string& stem) {
  const std::string path = test::test_temp_path(stem + ".gguf");
  model::write_synth_model(spec, model::SynthOptions{}, path);
  const auto file = gguf::GgufFile::open(path);
  WrittenFile out{model::read_hparams(*file), {}};
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    out.shapes[std::string(t.name)] = shape_of(t.ne, t.n_dims);
  }
  return out;
}

void expect_file_is_manifest(const model::SynthSpec& spec, const std::string& stem) {
  SCOPED_TRACE(stem);
  const WrittenFile file = write_and_read(spec, stem);
  std::set<std::string> listed;
  std::set<int64_t> fused_layers;  // whose attn_qkv the file holds (the manifest lists it before Q, K and V)
  for (const ManifestTensor& t : model::tensor_manifest(file.hp)) {
    listed.insert(t.name);
    const auto found = file.shapes.find(t.name);
    const bool replaced = t.presence == Presence::SeparateQkv && fused_layers.count(t.layer) > 0;
    if (found != file.shapes.end()) {
      EXPECT_EQ(found->second, shape_of(t.ne, t.n_dims)) << t.name;
      EXPECT_FALSE(replaced) << t.name << " beside the fused matrix that replaces it";
      if (t.presence == Presence::FusedQkv) fused_layers.insert(t.layer);
      continue;
    }
    EXPECT_TRUE(t.presence != Presence::Required && (t.presence != Presence::SeparateQkv || replaced))
        << "the file lacks " << t.name;
  }
  for (const auto& [name, shape] : file.shapes) EXPECT_EQ(listed.count(name), 1u) << name << " is not in the manifest";
}

TEST(TensorManifest, ASynthFileOfEveryArchitectureHoldsExactlyTheManifest) {
  for (Arch arch : kAllArchs) {
    const std::string name = model::arch_name(arch);
    expect_file_is_manifest(test::tiny_spec(arch), name);
    // The optional tensors: an untied head and Llama 3's rope factors.
    model::SynthSpec with_options = test::tiny_spec(arch);
    with_options.tied_output = !with_options.tied_output;
    with_options.rope_freqs = true;
    expect_file_is_manifest(with_options, name + "_options");
  }
  model::SynthSpec plain_phi3 = test::tiny_spec(Arch::Phi3);
  plain_phi3.rope_original_context = 0;  // no LongRoPE factors
  expect_file_is_manifest(plain_phi3, "phi3_plain");
}

// The file's tensors outside the blocks.
std::set<std::string> model_tensors(const WrittenFile& file) {
  std::set<std::string> own;
  for (const auto& [name, shape] : file.shapes) {
    if (name.rfind("blk.", 0) != 0) own.insert(name);
  }
  return own;
}

// bert's own tensors, as llama.cpp's loader names them: the type and position
// tables and the embeddings' LayerNorm; no output head, no rope factors.
TEST(TensorManifest, BertHasEmbeddingTablesAndNoOutputHead) {
  const WrittenFile file = write_and_read(test::tiny_spec(Arch::Bert), "bert");
  const std::set<std::string> own = model_tensors(file);
  EXPECT_EQ(own, (std::set<std::string>{"token_embd.weight", "token_types.weight", "position_embd.weight",
                                        "token_embd_norm.weight", "token_embd_norm.bias"}));
  EXPECT_EQ(file.shapes.at("position_embd.weight"), (Shape{64, 64}));  // [n_embd, context_length]
  EXPECT_EQ(file.shapes.at("token_types.weight"), (Shape{64, 2}));     // [n_embd, token_type_count]
}

// nomic-bert's own tensors, as llama.cpp's loader names them: the type table
// and the embeddings' LayerNorm, but no position table (it rotates); no
// output head.
TEST(TensorManifest, NomicBertHasATypeTableAndNoPositionTable) {
  const WrittenFile file = write_and_read(test::tiny_spec(Arch::NomicBert), "nomic_bert");
  const std::set<std::string> own = model_tensors(file);
  EXPECT_EQ(own, (std::set<std::string>{"token_embd.weight", "token_types.weight", "token_embd_norm.weight",
                                        "token_embd_norm.bias"}));
  EXPECT_EQ(file.shapes.at("blk.0.attn_qkv.weight"), (Shape{64, 3 * 64}));  // [n_embd, 3 n_embd]
}

// gemma-embedding's own tensors, as llama.cpp's loader has them: the final
// norm (before pooling) and the dense layers dense_2 [n_embd, dense_2_feat_out]
// and dense_3 [dense_3_feat_in, n_embd]; no output head.
TEST(TensorManifest, GemmaEmbeddingHasAFinalNormAndDenseLayersAndNoOutputHead) {
  const WrittenFile file = write_and_read(test::tiny_spec(Arch::GemmaEmbedding), "gemma_embedding");
  const std::set<std::string> own = model_tensors(file);
  EXPECT_EQ(own,
            (std::set<std::string>{"token_embd.weight", "output_norm.weight", "dense_2.weight", "dense_3.weight"}));
  EXPECT_EQ(file.shapes.at("dense_2.weight"), (Shape{64, 48}));
  EXPECT_EQ(file.shapes.at("dense_3.weight"), (Shape{48, 64}));
  EXPECT_EQ(file.hp.dense_features, 48);
}

// Block 0's tensors in llama.cpp's loader of each architecture (phi3: with
// the fused QKV matrix its converter writes; bert: post-norm blocks with
// LayerNorms and a bias on every product).
TEST(TensorManifest, BlocksHoldLlamaCppsTensorsOfEachArchitecture) {
  const std::vector<std::string> llama = {"attn_norm.weight", "attn_q.weight",      "attn_k.weight",
                                          "attn_v.weight",    "attn_output.weight", "ffn_norm.weight",
                                          "ffn_gate.weight",  "ffn_up.weight",      "ffn_down.weight"};
  auto with = [&](std::vector<std::string> names, const std::vector<std::string>& more) {
    names.insert(names.end(), more.begin(), more.end());
    return names;
  };
  const std::vector<std::string> gemma2 = with(llama, {"post_attention_norm.weight", "post_ffw_norm.weight"});
  const std::map<Arch, std::vector<std::string>> expected = {
      {Arch::Llama, llama},
      {Arch::Qwen2, with(llama, {"attn_q.bias", "attn_k.bias", "attn_v.bias"})},
      {Arch::Qwen2VL, with(llama, {"attn_q.bias", "attn_k.bias", "attn_v.bias"})},
      {Arch::Qwen3, with(llama, {"attn_q_norm.weight", "attn_k_norm.weight"})},
      {Arch::Gemma2, gemma2},
      {Arch::Gemma3, with(gemma2, {"attn_q_norm.weight", "attn_k_norm.weight"})},
      {Arch::GemmaEmbedding, with(gemma2, {"attn_q_norm.weight", "attn_k_norm.weight"})},
      {Arch::Phi3,
       {"attn_norm.weight", "attn_qkv.weight", "attn_output.weight", "ffn_norm.weight", "ffn_up.weight",
        "ffn_down.weight"}},
      {Arch::SmolLM3, llama},
      {Arch::Bert,
       {"attn_q.weight", "attn_q.bias", "attn_k.weight", "attn_k.bias", "attn_v.weight", "attn_v.bias",
        "attn_output.weight", "attn_output.bias", "attn_output_norm.weight", "attn_output_norm.bias", "ffn_up.weight",
        "ffn_up.bias", "ffn_down.weight", "ffn_down.bias", "layer_output_norm.weight", "layer_output_norm.bias"}},
      {Arch::NomicBert,
       {"attn_qkv.weight", "attn_output.weight", "attn_output_norm.weight", "attn_output_norm.bias", "ffn_up.weight",
        "ffn_gate.weight", "ffn_down.weight", "layer_output_norm.weight", "layer_output_norm.bias"}},
  };
  for (Arch arch : kAllArchs) {
    std::set<std::string> block0;
    for (const auto& [name, shape] : write_and_read(test::tiny_spec(arch), model::arch_name(arch)).shapes) {
      if (name.rfind("blk.0.", 0) == 0) block0.insert(name.substr(6));
    }
    const std::vector<std::string>& names = expected.at(arch);
    EXPECT_EQ(block0, std::set<std::string>(names.begin(), names.end())) << model::arch_name(arch);
  }
}

}  // namespace
}  // namespace peak
