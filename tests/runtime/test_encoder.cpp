// The bert encoder on a tiny synthetic model: every pooling (none, mean, cls,
// last), normalised or not, equals a naive double-precision encoder written
// from BERT's definition; sequences embedded side by side in one batch, or
// split over passes, equal each embedded alone; bad sequences, a decoder
// given to an Encoder, an encoder given to a Context, a missing tensor and an
// unknown pooling type are refused by name. The same for embedding models of
// decoder layers (Qwen3-Embedding, EmbeddingGemma), against the decoders'
// double-precision reference run over whole sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "reference_encoder.h"
#include "runtime/context.h"
#include "runtime/encoder.h"
#include "tiny_models.h"

namespace peak {

using kernels::GgmlType;
using model::Pooling;

namespace {

const std::vector<std::vector<int32_t>> kSequences = {
    {101, 17, 250, 3, 99, 42, 7, 102},
    {101, 5},
    {280},
    {101, 64, 5, 5, 123, 200, 11, 140, 33, 298, 2, 77, 61, 190, 8, 254, 19, 46, 102},
    {101, 222, 15, 88, 102},
};

// |a - b| / |b| over one vector.
double relative_error(const std::vector<float>& actual, const std::vector<double>& expected) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff += (actual[i] - expected[i]) * (actual[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  return std::sqrt(diff / norm);
}

double relative_error(const std::vector<float>& actual, const std::vector<float>& expected) {
  return relative_error(actual, std::vector<double>(expected.begin(), expected.end()));
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The file at `source` rewritten without tensor `dropped` and with `edit_keys` applied.
std::string edited_model(const std::string& source, const std::string& dropped, const test::KeyEdit& edit_keys) {
  const auto file = gguf::GgufFile::open(source);
  gguf::GgufWriter w;
  for (size_t i = 0; i < file->n_kv(); ++i) w.copy_value(file->value(i));
  if (edit_keys) edit_keys(w);
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    if (t.name != dropped) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data);
  }
  const std::string path = test::test_temp_path("edited.gguf");
  w.write_file(path);
  return path;
}

std::string edited_bert(const std::string& dropped, const test::KeyEdit& edit_keys = {}) {
  return edited_model(test::write_tiny_model(model::Arch::Bert, GgmlType::F32), dropped, edit_keys);
}

// The tiny qwen3 as Qwen3-Embedding is: a qwen3 file with last-token pooling.
// Heads of 24 (not n_embd / n_head, as qwen3's; not a multiple of 32, so
// attention takes no bf16 products and the vectors keep 1e-4).
std::string write_tiny_qwen3_embedding() {
  model::SynthSpec spec = test::tiny_spec(model::Arch::Qwen3);
  spec.head_dim = 24;
  spec.pooling = Pooling::Last;
  return test::write_tiny_spec(spec, GgmlType::F32, "tiny_qwen3_embedding");
}

using Reference = std::function<std::vector<double>(const std::vector<int32_t>& tokens, Pooling, bool normalize)>;

// Every pooling, normalised or not, against `reference`'s vectors.
void expect_reference_vectors(const model::Model& m, const Reference& reference) {
  runtime::Encoder encoder(m);
  for (Pooling pooling : {Pooling::None, Pooling::Mean, Pooling::Cls, Pooling::Last}) {
    for (bool normalize : {true, false}) {
      SCOPED_TRACE(::testing::Message() << model::pooling_name(pooling) << (normalize ? " normalised" : ""));
      const auto vectors = encoder.embed(kSequences, {pooling, normalize});
      ASSERT_EQ(vectors.size(), kSequences.size());
      for (size_t s = 0; s < kSequences.size(); ++s) {
        const std::vector<double> expected = reference(kSequences[s], pooling, normalize);
        ASSERT_EQ(vectors[s].size(), expected.size());
        EXPECT_LE(relative_error(vectors[s], expected), 1e-4) << "sequence " << s;
      }
    }
  }
}

// One pass over all five sequences, passes of at most 20 tokens, and each
// sequence alone: the same vectors, every token's.
void expect_batches_equal_single_sequences(const model::Model& m) {
  runtime::Encoder whole(m);
  runtime::Encoder small(m, {20, 0});
  const runtime::EmbedOptions every_token{Pooling::None, false};
  const auto together = whole.embed(kSequences, every_token);
  const auto in_passes = small.embed(kSequences, every_token);
  for (size_t s = 0; s < kSequences.size(); ++s) {
    const auto alone = whole.embed({kSequences[s]}, every_token);
    EXPECT_LE(relative_error(together[s], alone[0]), 1e-6) << "sequence " << s;
    EXPECT_LE(relative_error(in_passes[s], alone[0]), 1e-6) << "sequence " << s;
  }
}

TEST(Encoder, MatchesANaiveDoublePrecisionEncoderForEveryPooling) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  EXPECT_EQ(m->hparams().pooling, Pooling::Mean);
  EXPECT_FALSE(m->hparams().causal_attention);
  expect_reference_vectors(*m, [&](const std::vector<int32_t>& tokens, Pooling pooling, bool normalize) {
    return test::reference_pool(test::reference_encode(m->file(), m->hparams(), tokens), pooling, normalize);
  });
}

// A model of decoder layers against reference_embed_decoder.
void expect_decoder_reference_vectors(const model::Model& m) {
  expect_reference_vectors(m, [&](const std::vector<int32_t>& tokens, Pooling pooling, bool normalize) {
    return test::reference_embed_decoder(m.file(), m.hparams(), tokens, pooling, normalize);
  });
}

TEST(Encoder, ABatchOfSequencesEqualsEachAlone) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  expect_batches_equal_single_sequences(*m);
}

TEST(Encoder, RefusesBadSequencesByIndex) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  runtime::Encoder encoder(*m, {16, 1});
  EXPECT_EQ(error_of([&] { encoder.embed({{1, 2}, {}}); }), "sequence 1 is empty");
  EXPECT_EQ(error_of([&] { encoder.embed({std::vector<int32_t>(17, 5)}); }),
            "sequence 0 has 17 tokens; at most 16 fit");
  EXPECT_EQ(error_of([&] {
              encoder.embed({{1}, {1}, {4, 300}});
            }),
            "sequence 2: token id 300 at index 1 is outside the vocabulary of 300");
  EXPECT_NE(error_of([&] {
              runtime::Encoder too_wide(*m, {65, 1});
            }).find("n_batch must be between 0"),
            std::string::npos);
}

TEST(Encoder, DecodersAndEncodersEachRefuseTheOthersRunner) {
  const auto bert = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  EXPECT_NE(
      error_of([&] { runtime::Context context(*bert, runtime::ContextParams{}); }).find("bert model is an encoder"),
      std::string::npos);
  const auto llama = model::Model::load(test::write_tiny_model(model::Arch::Llama, GgmlType::F32));
  EXPECT_NE(error_of([&] { runtime::Encoder encoder(*llama); }).find("llama model is a decoder"), std::string::npos);
}

TEST(Encoder, RefusesAMissingTensorAndUnknownPoolingByName) {
  EXPECT_EQ(error_of([] { model::Model::load(edited_bert("blk.1.layer_output_norm.bias")); }),
            "model lacks tensor 'blk.1.layer_output_norm.bias' (bert)");
  EXPECT_EQ(error_of([] { model::Model::load(edited_bert("position_embd.weight")); }),
            "model lacks tensor 'position_embd.weight' (bert)");
  EXPECT_EQ(error_of([] {
              model::Model::load(edited_bert("", [](gguf::GgufWriter& w) { w.set_u32("bert.pooling_type", 7); }));
            }),
            "'bert.pooling_type' is 7; peak knows 0 (none), 1 (mean), 2 (cls) and 3 (last)");
  EXPECT_NE(error_of([] {
              model::Model::load(edited_bert("", [](gguf::GgufWriter& w) { w.set_u32("bert.pooling_type", 4); }));
            }).find("'bert.pooling_type' is 4 (rank"),
            std::string::npos);
  EXPECT_EQ(
      error_of([] {
        model::Model::load(edited_bert("", [](gguf::GgufWriter& w) { w.remove("bert.attention.layer_norm_epsilon"); }));
      }),
      "model metadata lacks 'bert.attention.layer_norm_epsilon'");
}

// Token types are optional, as in llama.cpp: without the table the embeddings
// are the token's and the position's rows alone (the reference skips it too).
TEST(Encoder, RunsWithoutATokenTypeTable) {
  const auto m = model::Model::load(edited_bert("token_types.weight"));
  EXPECT_EQ(m->weights().token_types, nullptr);
  runtime::Encoder encoder(*m);
  const auto vectors = encoder.embed({kSequences[0]});
  const auto expected =
      test::reference_pool(test::reference_encode(m->file(), m->hparams(), kSequences[0]), Pooling::Mean, true);
  EXPECT_LE(relative_error(vectors[0], expected), 1e-4);
}

// Qwen3-Embedding: qwen3's layers run causally without a KV cache, then the
// final norm; the last token's state (the model's pooling) and every other
// pooling equal ReferenceForward's double-precision states.
TEST(DecoderEmbedding, Qwen3EmbeddingMatchesTheReference) {
  const auto m = model::Model::load(write_tiny_qwen3_embedding());
  EXPECT_TRUE(m->hparams().embeds);
  EXPECT_TRUE(m->hparams().causal_attention);
  EXPECT_EQ(m->hparams().pooling, Pooling::Last);
  expect_decoder_reference_vectors(*m);
}

TEST(DecoderEmbedding, Qwen3EmbeddingBatchesEqualSingleSequences) {
  const auto m = model::Model::load(write_tiny_qwen3_embedding());
  expect_batches_equal_single_sequences(*m);
}

// A qwen3 embedding file still generates (llama.cpp allows both); a chat
// qwen3 (no pooling_type) is no embedding model.
TEST(DecoderEmbedding, Qwen3EmbeddingStillLoadsAsADecoderAndAChatQwen3IsRefused) {
  const auto embedding = model::Model::load(write_tiny_qwen3_embedding());
  runtime::ContextParams params;
  params.n_ctx = 32;
  EXPECT_EQ(error_of([&] { runtime::Context context(*embedding, params); }), "");
  const auto chat = model::Model::load(test::write_tiny_model(model::Arch::Qwen3, GgmlType::F32));
  EXPECT_FALSE(chat->hparams().embeds);
  EXPECT_EQ(error_of([&] { runtime::Encoder encoder(*chat); }),
            "a qwen3 model is a decoder, not an encoder: it generates text (runtime::Context) and its file gives no "
            "'qwen3.pooling_type' to embed with");
}

// EmbeddingGemma: Gemma 3's layers both ways, five in six within a symmetric
// window of 8 (4 either side: the 19-token sequence sees past it), the final
// norm, pooling, then the dense layers.
TEST(DecoderEmbedding, GemmaEmbeddingMatchesTheReference) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::GemmaEmbedding, GgmlType::F32));
  EXPECT_TRUE(m->hparams().embeds);
  EXPECT_FALSE(m->hparams().causal_attention);
  EXPECT_EQ(m->hparams().pooling, Pooling::Mean);
  EXPECT_EQ(m->hparams().sliding_window, test::kTinyWindow);
  EXPECT_TRUE(m->hparams().layer(0).sliding);
  EXPECT_FALSE(m->hparams().layer(5).sliding);
  expect_decoder_reference_vectors(*m);
}

TEST(DecoderEmbedding, GemmaEmbeddingBatchesEqualSingleSequences) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::GemmaEmbedding, GgmlType::F32));
  expect_batches_equal_single_sequences(*m);
}

TEST(DecoderEmbedding, RefusesMissingDenseLayersAndBadKeysByName) {
  const std::string gemma = test::write_tiny_model(model::Arch::GemmaEmbedding, GgmlType::F32);
  EXPECT_EQ(error_of([&] { model::Model::load(edited_model(gemma, "dense_2.weight", {})); }),
            "model lacks tensor 'dense_2.weight' (gemma-embedding)");
  EXPECT_EQ(error_of([&] { model::Model::load(edited_model(gemma, "dense_3.weight", {})); }),
            "model lacks tensor 'dense_3.weight' (gemma-embedding)");
  EXPECT_EQ(error_of([&] {
              model::Model::load(edited_model(
                  gemma, "", [](gguf::GgufWriter& w) { w.set_u32("gemma-embedding.dense_3_feat_out", 32); }));
            }),
            "'gemma-embedding.dense_3_feat_out' is 32; it must be 64");
  EXPECT_EQ(error_of([&] {
              model::Model::load(edited_model(
                  gemma, "", [](gguf::GgufWriter& w) { w.remove("gemma-embedding.attention.sliding_window"); }));
            }),
            "model metadata lacks 'gemma-embedding.attention.sliding_window'");
  EXPECT_EQ(error_of([&] {
              model::Model::load(edited_model(write_tiny_qwen3_embedding(), "",
                                              [](gguf::GgufWriter& w) { w.set_u32("qwen3.pooling_type", 9); }));
            }),
            "'qwen3.pooling_type' is 9; peak knows 0 (none), 1 (mean), 2 (cls) and 3 (last)");
  const auto m = model::Model::load(gemma);
  EXPECT_NE(error_of([&] {
              runtime::Context context(*m, runtime::ContextParams{});
            }).find("gemma-embedding model is an encoder"),
            std::string::npos);
}

}  // namespace
}  // namespace peak
