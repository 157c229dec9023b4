// peak's quantizer end to end: byte-identical to llama.cpp's llama-quantize --pure
// for the legacy types on shared/reference/quant, llama.cpp's per-tensor choices
// for the mixed presets (tests/runtime checks that stories260K as Q8_0 still decodes
// its reference ids).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>


#include "model/model.h"
#include "model/model_error.h"
#include "model/quant_policy.h"
#include "model/quantize.h"
#include "model/tensor_manifest.h"
#include "scratch_dir.h"
#include "tiny_models.h"

namespace peak::model {

using kernels::GgmlType;

namespace {

const std::string kShared = PEAK_SHARED_DIR;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "peak_quantize_" + name; }

class LegacyQuantization : public ::testing::TestWithParam<const char*> {};

TEST_P(LegacyQuantization, MatchesLlamaQuantizeByteForByte) {
  const std::string type = GetParam();
  const std::string out = temp_path(type + ".gguf");
  QuantizeOptions o;
  o.type = type;
  o.pure = true;
  quantize_model(kShared + "/reference/quant/source-f16.gguf", out, o);
  const auto ours = gguf::GgufFile::open(out);
  const auto theirs = gguf::GgufFile::open(kShared + "/reference/quant/" + type + ".gguf");
  ASSERT_EQ(ours->n_tensors(), theirs->n_tensors());
  size_t compared = 0;
  for (size_t i = 0; i < theirs->n_tensors(); ++i) {
    const gguf::TensorInfo& t = theirs->tensor(i);
    const gguf::TensorInfo* o_t = ours->find_tensor(t.name);
    ASSERT_NE(o_t, nullptr) << t.name;
    EXPECT_EQ(o_t->type, t.type) << t.name;
    ASSERT_EQ(o_t->n_bytes, t.n_bytes) << t.name;
    EXPECT_EQ(0, std::memcmp(o_t->data, t.data, t.n_bytes)) << t.name;
    ++compared;
  }
  EXPECT_EQ(compared, 21u);
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(ReferenceFiles, LegacyQuantization,
                         ::testing::Values("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "BF16"));

// The per-tensor types of llama.cpp's presets, counted on real model layouts as
// shared/reference/llamacpp-baseline.md reports them from llama-quantize.
std::map<GgmlType, int> count_types(const std::string& file_type, int64_t n_layer, int64_t n_head, int64_t n_head_kv,
                                    bool has_output, int64_t n_embd, GgmlType* embd_type, GgmlType* output_type) {
  ModelLayout layout{n_layer, n_head, n_head_kv, has_output};
  const QuantPolicy policy(parse_file_type(file_type), layout, false);
  HParams llama;  // for its layer matrices' names, all the policy reads of them
  llama.arch = Arch::Llama;
  llama.n_layer = n_layer;
  std::map<GgmlType, int> counts;
  for (const ManifestTensor& t : tensor_manifest(llama)) {
    if (t.layer >= 0 && t.role == TensorRole::Matrix) ++counts[policy.type_for(t.name, 2, n_embd)];
  }
  *embd_type = policy.type_for("token_embd.weight", 2, n_embd);
  *output_type = has_output ? policy.type_for("output.weight", 2, n_embd) : *embd_type;
  return counts;
}

TEST(QuantPolicy, FollowsLlamaQuantizeOnTheBaselineModels) {
  GgmlType embd, output;
  // llama-3.2-1b Q4_K_M: 96 Q4_K and 16 Q6_K layer matrices, Q6_K token_embd (tied).
  auto c = count_types("Q4_K_M", 16, 32, 8, false, 2048, &embd, &output);
  EXPECT_EQ(c[GgmlType::Q4_K], 96);
  EXPECT_EQ(c[GgmlType::Q6_K], 16);
  EXPECT_EQ(embd, GgmlType::Q6_K);
  // qwen3-0.6b Q4_K_M: 168 / 28, Q6_K token_embd.
  c = count_types("Q4_K_M", 28, 16, 8, false, 1024, &embd, &output);
  EXPECT_EQ(c[GgmlType::Q4_K], 168);
  EXPECT_EQ(c[GgmlType::Q6_K], 28);
  // tinyllama Q4_K_M: 134 / 20, Q4_K token_embd, Q6_K output (untied).
  c = count_types("Q4_K_M", 22, 32, 4, true, 2048, &embd, &output);
  EXPECT_EQ(c[GgmlType::Q4_K], 134);
  EXPECT_EQ(c[GgmlType::Q6_K], 20);
  EXPECT_EQ(embd, GgmlType::Q4_K);
  EXPECT_EQ(output, GgmlType::Q6_K);
  // Q4_0 files: tied embeddings become Q6_K; untied keep Q4_0 with a Q6_K output. Q8_0 stays Q8_0.
  count_types("Q4_0", 16, 32, 8, false, 2048, &embd, &output);
  EXPECT_EQ(embd, GgmlType::Q6_K);
  c = count_types("Q4_0", 22, 32, 4, true, 2048, &embd, &output);
  EXPECT_EQ(c[GgmlType::Q4_0], 154);
  EXPECT_EQ(embd, GgmlType::Q4_0);
  EXPECT_EQ(output, GgmlType::Q6_K);
  count_types("Q8_0", 16, 32, 8, false, 2048, &embd, &output);
  EXPECT_EQ(embd, GgmlType::Q8_0);
}

// llama.cpp's rule for Phi-3's fused attn_qkv: Q5_K in Q4_K_M, Q6_K in Q5_K_M.
TEST(QuantPolicy, GivesTheFusedQkvMatrixAStepUpInTheKQuantMixes) {
  const ModelLayout phi4_mini{32, 24, 8, false};
  auto type_in = [&](const char* file_type) {
    return QuantPolicy(parse_file_type(file_type), phi4_mini, false).type_for("blk.3.attn_qkv.weight", 2, 3072);
  };
  EXPECT_EQ(type_in("Q4_K_M"), GgmlType::Q5_K);
  EXPECT_EQ(type_in("Q5_K_M"), GgmlType::Q6_K);
  EXPECT_EQ(type_in("Q4_K_S"), GgmlType::Q4_K);
  EXPECT_EQ(type_in("Q4_0"), GgmlType::Q4_0);
}

TEST(QuantPolicy, KeepsVectorsInF32AndFallsBackForOddRows) {
  const QuantPolicy policy(parse_file_type("Q4_K_M"), ModelLayout{2, 4, 2, true}, false);
  EXPECT_EQ(policy.type_for("blk.0.attn_norm.weight", 1, 64), GgmlType::F32);
  EXPECT_EQ(policy.type_for("blk.0.attn_q.weight", 2, 64), GgmlType::Q5_0);   // 64 is no 256-block: Q4_K -> Q5_0
  EXPECT_EQ(policy.type_for("blk.0.ffn_down.weight", 2, 172), GgmlType::F16);  // not even 32-blocks
  EXPECT_THROW(parse_file_type("Q7_X"), std::invalid_argument);
}

// llama-quantize leaves BERT's position and token-type embeddings as they are,
// --pure or not (its "do not quantize positional embeddings and token types").
TEST(QuantPolicy, KeepsBertPositionAndTypeEmbeddingsUnquantized) {
  for (bool pure : {false, true}) {
    const QuantPolicy policy(parse_file_type("Q8_0"), ModelLayout{12, 12, 12, false}, pure);
    EXPECT_EQ(policy.type_for("position_embd.weight", 2, 384), GgmlType::F32);
    EXPECT_EQ(policy.type_for("token_types.weight", 2, 384), GgmlType::F32);
    EXPECT_EQ(policy.type_for("token_embd.weight", 2, 384), GgmlType::Q8_0);
    EXPECT_EQ(policy.type_for("blk.0.attn_q.weight", 2, 384), GgmlType::Q8_0);
  }
}

// llama-quantize takes its type in any case; general.file_type is
// LLAMA_FTYPE_MOSTLY_Q4_K_M = 15 and MOSTLY_Q4_0 = 2 either way.
TEST(QuantPolicy, ReadsTypeNamesInAnyCase) {
  const FileType lower = parse_file_type("q4_k_m");
  EXPECT_EQ(lower.name, "Q4_K_M");
  EXPECT_EQ(lower.base, GgmlType::Q4_K);
  EXPECT_EQ(lower.llama_ftype, 15u);
  EXPECT_EQ(parse_file_type("q4_0").llama_ftype, 2u);
  EXPECT_EQ(parse_file_type("Iq4_Nl").base, GgmlType::IQ4_NL);
  EXPECT_THROW(parse_file_type("q7_x"), std::invalid_argument);
}

TEST(Quantize, RefusesToOverwriteItsInputAndAlreadyQuantizedInputs) {
  QuantizeOptions o;
  o.type = "Q8_0";
  const std::string stories = kShared + "/models/stories260K.gguf";
  EXPECT_THROW(quantize_model(stories, stories, o), std::invalid_argument);
  const std::string q8 = temp_path("stories_q8.gguf");
  quantize_model(stories, q8, o);
  o.type = "Q4_0";
  EXPECT_THROW(quantize_model(q8, temp_path("again.gguf"), o), std::invalid_argument);
  o.type = "Q4_K";  // a tensor type without --pure
  EXPECT_THROW(quantize_model(stories, temp_path("x.gguf"), o), std::invalid_argument);
  std::remove(q8.c_str());
}

TEST(Quantize, ACancelledQuantizeLeavesTheOldOutputAndNoTemporaryFile) {
  const std::string dir = test::make_scratch_dir(::testing::TempDir(), "peak_quantize_cancel_");
  const std::string out = dir + "out.gguf";
  QuantizeOptions o;
  o.type = "Q8_0";
  quantize_model(kShared + "/models/stories260K.gguf", out, o);
  const std::string before = test::file_bytes(out);
  int calls = 0;
  o.type = "Q4_0";
  o.progress = [&calls](float) { return ++calls < 3; };  // cancel after the third tensor
  EXPECT_THROW(quantize_model(kShared + "/models/stories260K.gguf", out, o), LoadCancelled);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(test::file_bytes(out), before);
  EXPECT_EQ(test::files_in(dir), std::vector<std::string>{"out.gguf"});
  std::remove(out.c_str());
}

// Quantizing would turn a NaN or Inf weight into finite nonsense (a block's
// scale comes from its largest magnitude, which skips NaN): the tensor is
// refused by name instead, and nothing is written.
TEST(Quantize, RefusesANonFiniteWeightNamingTheTensor) {
  const std::string dir = test::make_scratch_dir(::testing::TempDir(), "peak_quantize_nan_");
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const std::string edited = test::edited_stories({}, {"blk.2.attn_q.weight", 100, bad});
    for (const char* type : {"Q8_0", "Q4_0", "Q4_K_M"}) {
      SCOPED_TRACE(std::string(type) + " " + std::to_string(bad));
      QuantizeOptions o;
      o.type = type;
      try {
        quantize_model(edited, dir + "out.gguf", o);
        ADD_FAILURE() << "quantized a non-finite weight";
      } catch (const InvalidModel& e) {
        EXPECT_NE(std::string(e.what()).find("blk.2.attn_q.weight"), std::string::npos) << e.what();
      }
      EXPECT_TRUE(test::files_in(dir).empty());
    }
  }
}

}  // namespace
}  // namespace peak::model
