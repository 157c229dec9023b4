// The bert encoder on a tiny synthetic model: every pooling (none, mean, cls,
// last), normalised or not, equals a naive double-precision encoder written
// from BERT's definition; sequences embedded side by side in one batch, or
// split over passes, equal each embedded alone; bad sequences, a decoder
// given to an Encoder, an encoder given to a Context, a missing tensor and an
// unknown pooling type are refused by name. The same for embedding models of
// decoder layers (Qwen3-Embedding, EmbeddingGemma), against the decoders'
// double-precision reference run over whole sequences. A reranker (rank
// pooling) scores [CLS] query [SEP] document [SEP], the document as token
// type 1, as the reference's classification head does, in batches or one by
// one, and refuses a model without its head, a non-rank model and bad
// documents. nomic-bert (rope, fused QKV, SwiGLU, no biases) against the
// reference likewise, and without rotation far from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "reference_encoder.h"
#include "runtime/context.h"
#include "runtime/encoder.h"
#include "runtime/reranker.h"
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

// The tiny bert as a cross-encoder: rank pooling and its classification head.
std::string write_tiny_reranker() {
  model::SynthSpec spec = test::tiny_spec(model::Arch::Bert);
  spec.pooling = Pooling::Rank;
  model::SynthOptions options;
  options.seed = 7;
  options.varied_norms = true;
  const std::string path = test::test_temp_path("tiny_reranker.gguf");
  model::write_synth_model(spec, options, path);
  return path;
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

// A tiny Qwen3-Reranker: qwen3's layers, rank pooling over the answer rows
// ("yes" first, as llama.cpp's converter writes them) and a prompt of its own
// around the query and the document, with the control token </s> in it.
std::string write_tiny_qwen3_reranker() {
  model::SynthSpec spec = test::tiny_spec(model::Arch::Qwen3);
  spec.head_dim = 24;
  spec.pooling = Pooling::Rank;
  spec.rerank_prompt = "Query: {query}\nDocument: {document}</s>Relevant:";
  return test::write_tiny_spec(spec, GgmlType::F32, "tiny_qwen3_reranker");
}

const char* const kRerankQuery = "what do cats eat";
const std::vector<std::string> kRerankDocuments = {"cats eat fish", "the sky is blue today", "a",
                                                   "mice and birds, mostly"};

// The prompt as the template spells it, filled by hand.
std::string filled_prompt(const std::string& query, const std::string& document) {
  return "Query: " + query + "\nDocument: " + document + "</s>Relevant:";
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
            "'bert.pooling_type' is 7; peak knows 0 (none), 1 (mean), 2 (cls), 3 (last) and 4 (rank)");
  // A rank model without its head has no score to give.
  EXPECT_EQ(error_of([] {
              model::Model::load(edited_bert("", [](gguf::GgufWriter& w) { w.set_u32("bert.pooling_type", 4); }));
            }),
            "model lacks tensor 'cls.weight' (bert)");
  EXPECT_EQ(error_of([] { model::Model::load(edited_model(write_tiny_reranker(), "cls.output.weight", {})); }),
            "model lacks tensor 'cls.output.weight' (bert)");
  EXPECT_EQ(error_of([] { model::Model::load(edited_model(write_tiny_reranker(), "cls.output.bias", {})); }),
            "model lacks tensor 'cls.output.bias' (bert)");
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

// Matryoshka dimensions: the first d floats of the raw pooled vector, then
// scaled to length 1 in double here; out of range refused with n_embd.
TEST(Encoder, KeepsTheFirstDimensionsAndNormalisesAfterTheCut) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  runtime::Encoder encoder(*m);
  const int64_t n_embd = m->hparams().n_embd;
  for (int64_t d : {int64_t{1}, int64_t{5}, n_embd - 1, n_embd}) {
    SCOPED_TRACE(::testing::Message() << "dimensions " << d);
    runtime::EmbedOptions options;
    options.dimensions = d;
    const auto vectors = encoder.embed(kSequences, options);
    for (size_t s = 0; s < kSequences.size(); ++s) {
      std::vector<double> raw =
          test::reference_pool(test::reference_encode(m->file(), m->hparams(), kSequences[s]), Pooling::Mean, false);
      raw.resize(static_cast<size_t>(d));
      double norm = 0.0;
      for (double x : raw) norm += x * x;
      for (double& x : raw) x /= std::sqrt(norm);
      ASSERT_EQ(vectors[s].size(), static_cast<size_t>(d));
      EXPECT_LE(relative_error(vectors[s], raw), 1e-4) << "sequence " << s;
    }
  }
  // Every token's vector is cut too.
  const auto per_token = encoder.embed({kSequences[1]}, {Pooling::None, false, 3});
  const auto whole = encoder.embed({kSequences[1]}, {Pooling::None, false});
  ASSERT_EQ(per_token[0].size(), 2u * 3u);
  for (size_t t = 0; t < 2; ++t) {
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(per_token[0][t * 3 + j], whole[0][t * static_cast<size_t>(n_embd) + j]);
  }
  for (int64_t bad : {int64_t{-1}, n_embd + 1}) {
    runtime::EmbedOptions options;
    options.dimensions = bad;
    EXPECT_EQ(error_of([&] { encoder.embed({kSequences[0]}, options); }),
              "dimensions " + std::to_string(bad) + " is outside 1.." + std::to_string(n_embd) +
                  " (the model's n_embd; 0 keeps all " + std::to_string(n_embd) + ")");
  }
}

// Truncation, on the tiny bert told to append EOS (id 2): a sequence ending
// with it keeps it last after its first n_batch - 1 tokens, one that does not
// keeps its first n_batch; each equals the reference on those tokens written
// out here. Without truncate the same sequence is refused.
TEST(Encoder, TruncatesKeepingTheAppendedEndTokenLast) {
  const auto m = model::Model::load(
      edited_bert("", [](gguf::GgufWriter& w) { w.set_bool("tokenizer.ggml.add_eos_token", true); }));
  ASSERT_EQ(m->tokenizer().appended_end(), 2);
  runtime::Encoder encoder(*m, {5, 1});
  runtime::EmbedOptions options;
  options.truncate = true;
  const std::vector<std::vector<int32_t>> long_ones = {{1, 17, 250, 3, 99, 42, 7, 2}, {1, 17, 250, 3, 99, 42}, {1, 9}};
  const std::vector<std::vector<int32_t>> cut = {{1, 17, 250, 3, 2}, {1, 17, 250, 3, 99}, {1, 9}};
  const auto vectors = encoder.embed(long_ones, options);
  ASSERT_EQ(vectors.size(), cut.size());
  for (size_t s = 0; s < cut.size(); ++s) {
    const auto expected =
        test::reference_pool(test::reference_encode(m->file(), m->hparams(), cut[s]), Pooling::Mean, true);
    EXPECT_LE(relative_error(vectors[s], expected), 1e-4) << "sequence " << s;
  }
  EXPECT_EQ(encoder.embedded_length(8, true), 5);
  EXPECT_EQ(encoder.embedded_length(8, false), 8);
  EXPECT_EQ(error_of([&] { encoder.embed(long_ones); }), "sequence 0 has 8 tokens; at most 5 fit");
}

const std::vector<int32_t> kQuery = {17, 250, 3, 99};
const std::vector<std::vector<int32_t>> kDocuments = {
    {42, 7, 64, 5},
    {5},
    {123, 200, 11, 140, 33, 298, 12, 77, 61, 190, 8, 254, 19, 46},
    {222, 15, 88},
};

// The reference's score of a query-document pair: [CLS] q [SEP] d [SEP] (the
// synthetic vocabulary's BOS 1 and EOS 2), type 1 from the document on.
double reference_score(const model::Model& m, const std::vector<int32_t>& document, bool typed = true) {
  std::vector<int32_t> tokens = {1};
  tokens.insert(tokens.end(), kQuery.begin(), kQuery.end());
  tokens.push_back(2);
  const size_t second = tokens.size();
  tokens.insert(tokens.end(), document.begin(), document.end());
  tokens.push_back(2);
  const auto hidden = test::reference_encode(m.file(), m.hparams(), tokens, typed ? second : SIZE_MAX);
  return test::reference_classify(m.file(), hidden).at(0);
}

TEST(Reranker, ScoresEqualANaiveDoublePrecisionCrossEncoder) {
  const auto m = model::Model::load(write_tiny_reranker());
  EXPECT_EQ(m->hparams().pooling, Pooling::Rank);
  EXPECT_EQ(m->hparams().n_cls_out, 1);  // classifier.output_labels ["LABEL_0"]
  runtime::Encoder encoder(*m);
  runtime::Reranker reranker(encoder);
  const runtime::PairInput pair = reranker.join(kQuery, kDocuments[0]);
  EXPECT_EQ(pair.tokens, (std::vector<int32_t>{1, 17, 250, 3, 99, 2, 42, 7, 64, 5, 2}));
  EXPECT_EQ(pair.second_segment, 6);
  const std::vector<float> scores = reranker.score(kQuery, kDocuments);
  ASSERT_EQ(scores.size(), kDocuments.size());
  for (size_t d = 0; d < kDocuments.size(); ++d) {
    const double expected = reference_score(*m, kDocuments[d]);
    // Random N(0, 0.02) weights give scores near 0.0097 that differ by about
    // 1e-4 from document to document, so the bound is far below that (F32
    // is within 1e-8 here).
    EXPECT_NEAR(scores[d], expected, 1e-6) << "document " << d;
    // The document as type 0 (llama.cpp's input) scores 1e-4 to 3e-4 apart:
    // the comparison above tells the two inputs apart.
    EXPECT_GT(std::fabs(expected - reference_score(*m, kDocuments[d], false)), 1e-5) << "document " << d;
  }
}

// All pairs in one pass, in passes of at most 24 tokens (three), and one at a time: the same scores.
TEST(Reranker, BatchedScoresEqualEachDocumentAlone) {
  const auto m = model::Model::load(write_tiny_reranker());
  runtime::Encoder whole(*m);
  runtime::Encoder small(*m, {24, 0});
  runtime::Reranker together(whole);
  runtime::Reranker in_passes(small);
  const std::vector<float> all = together.score(kQuery, kDocuments);
  const std::vector<float> passes = in_passes.score(kQuery, kDocuments);
  for (size_t d = 0; d < kDocuments.size(); ++d) {
    const std::vector<float> alone = together.score(kQuery, {kDocuments[d]});
    EXPECT_NEAR(all[d], alone[0], 1e-6) << "document " << d;
    EXPECT_NEAR(passes[d], alone[0], 1e-6) << "document " << d;
  }
}

TEST(Reranker, RefusesNonRankModelsAndBadDocumentsByIndex) {
  const auto embedder = model::Model::load(test::write_tiny_model(model::Arch::Bert, GgmlType::F32));
  runtime::Encoder mean_encoder(*embedder);
  EXPECT_EQ(error_of([&] { runtime::Reranker reranker(mean_encoder); }),
            "the model is not a reranker: its pooling is mean, and a reranker's is rank (pooling_type 4, with a "
            "classification head)");
  EXPECT_EQ(error_of([&] {
              mean_encoder.embed({{1, 2}}, {Pooling::Rank, false});
            }),
            "rank pooling needs a classification head (cls.weight, cls.output.weight), which a model with mean "
            "pooling does not have");

  const auto m = model::Model::load(write_tiny_reranker());
  runtime::Encoder encoder(*m, {16, 1});
  runtime::Reranker reranker(encoder);
  EXPECT_EQ(error_of([&] { reranker.score({}, kDocuments); }), "the query is empty");
  EXPECT_EQ(error_of([&] { reranker.score(kQuery, {{5}, {}}); }), "document 1 is empty");
  EXPECT_EQ(error_of([&] {
              reranker.score(kQuery, {{5}, {6}, kDocuments[2]});
            }),
            "document 2 with the query makes 21 tokens with [CLS] and [SEP]s; at most 16 fit");
  EXPECT_EQ(error_of([&] {
              reranker.score(kQuery, {{5, 300}});
            }),
            "sequence 0: token id 300 at index 7 is outside the vocabulary of 300");
}

// Qwen3-Reranker: the prompt filled with each document, qwen3's layers run
// causally, the last token's state through the yes/no rows; the score is the
// softmax's "yes", as the double-precision reference computes it.
TEST(Reranker, Qwen3RerankerScoresEqualANaiveDoublePrecisionDecoder) {
  const auto m = model::Model::load(write_tiny_qwen3_reranker());
  EXPECT_EQ(m->hparams().pooling, Pooling::Rank);
  EXPECT_EQ(m->hparams().n_cls_out, 2);
  EXPECT_EQ(m->hparams().relevance_output, 0);
  EXPECT_TRUE(m->hparams().causal_attention);
  runtime::Encoder encoder(*m);
  runtime::Reranker reranker(encoder);
  EXPECT_TRUE(reranker.prompted());
  EXPECT_TRUE(reranker.gives_probabilities());
  std::vector<runtime::PairInput> pairs;
  for (const std::string& document : kRerankDocuments) {
    pairs.push_back(reranker.fill(kRerankQuery, document));
    // The whole prompt as one string, its control token parsed (llama.cpp's input).
    EXPECT_EQ(pairs.back().tokens, m->tokenizer().encode(filled_prompt(kRerankQuery, document), false, true));
  }
  const std::vector<float> scores = reranker.score(pairs);
  ASSERT_EQ(scores.size(), kRerankDocuments.size());
  for (size_t d = 0; d < scores.size(); ++d) {
    const double yes = test::reference_rerank_decoder(m->file(), m->hparams(), pairs[d].tokens, 0);
    EXPECT_NEAR(scores[d], yes, 1e-6) << "document " << d;
    // Random weights give probabilities near 1/2; "no"'s (1 - yes) is far
    // enough from "yes"'s for the bound above to tell the two apart.
    EXPECT_GT(std::fabs(yes - 0.5), 1e-5) << "document " << d;
  }
}

// Pairs in one pass, in passes of one pair each, and one at a time: the same scores.
TEST(Reranker, Qwen3RerankerBatchesEqualEachDocumentAlone) {
  const auto m = model::Model::load(write_tiny_qwen3_reranker());
  runtime::Encoder whole(*m);
  runtime::Reranker together(whole);
  std::vector<runtime::PairInput> pairs;
  size_t longest = 0;
  for (const std::string& document : kRerankDocuments) {
    pairs.push_back(together.fill(kRerankQuery, document));
    longest = std::max(longest, pairs.back().tokens.size());
  }
  runtime::Encoder small(*m, {static_cast<int64_t>(longest), 0});
  runtime::Reranker in_passes(small);
  const std::vector<float> all = together.score(pairs);
  const std::vector<float> passes = in_passes.score(pairs);
  for (size_t d = 0; d < pairs.size(); ++d) {
    const std::vector<float> alone = together.score({pairs[d]});
    EXPECT_NEAR(all[d], alone[0], 1e-6) << "document " << d;
    EXPECT_NEAR(passes[d], alone[0], 1e-6) << "document " << d;
  }
}

// The texts filled in stay text: a document's "</s>" is no control token, and
// a query spelling "{document}" is not filled again.
TEST(Reranker, Qwen3RerankerFillsTheTextsInAsText) {
  const auto m = model::Model::load(write_tiny_qwen3_reranker());
  runtime::Encoder encoder(*m);
  runtime::Reranker reranker(encoder);
  const std::vector<int32_t> tokens = reranker.fill("q", "a</s>b").tokens;
  EXPECT_EQ(std::count(tokens.begin(), tokens.end(), 2), 1);  // </s>: the template's alone
  const std::vector<int32_t> parsed = m->tokenizer().encode(filled_prompt("q", "a</s>b"), false, true);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 2), 2);  // what parsing the whole string would give
  EXPECT_EQ(reranker.fill("{document}", "d").tokens,
            m->tokenizer().encode(filled_prompt("{document}", "d"), false, true));
}

TEST(Reranker, RefusesADecoderRerankerWithoutItsHeadLabelsOrPrompt) {
  const std::string path = write_tiny_qwen3_reranker();
  EXPECT_EQ(error_of([&] { model::Model::load(edited_model(path, "cls.output.weight", {})); }),
            "model lacks tensor 'cls.output.weight' (qwen3)");
  EXPECT_EQ(error_of([&] {
              model::Model::load(edited_model(path, "", [](gguf::GgufWriter& w) {
                w.set_string_array("qwen3.classifier.output_labels", {"no", "maybe"});
              }));
            }),
            "'qwen3.classifier.output_labels' must name the answers \"yes\" and \"no\" of a qwen3 reranker "
            "(pooling_type 4), which scores by the probability of \"yes\"");
  const auto no_prompt = model::Model::load(
      edited_model(path, "", [](gguf::GgufWriter& w) { w.remove("tokenizer.chat_template.rerank"); }));
  runtime::Encoder encoder(*no_prompt);
  EXPECT_EQ(error_of([&] { runtime::Reranker reranker(encoder); }),
            "the qwen3 reranker's file lacks 'tokenizer.chat_template.rerank', the prompt it judges a query and a "
            "document in");
  const auto half_prompt = model::Model::load(edited_model(path, "", [](gguf::GgufWriter& w) {
    w.set_string("tokenizer.chat_template.rerank", "Query: {query} Relevant:");
  }));
  runtime::Encoder half_encoder(*half_prompt);
  EXPECT_EQ(error_of([&] { runtime::Reranker reranker(half_encoder); }),
            "'tokenizer.chat_template.rerank' has no {query} or no {document} to fill in");
  const auto m = model::Model::load(path);
  runtime::Encoder small(*m, {12, 1});
  runtime::Reranker reranker(small);
  EXPECT_EQ(error_of([&] { reranker.score({1, 2}, {{3}}); }), "a prompted reranker scores texts (fill), not token ids");
  const runtime::PairInput pair = reranker.fill(kRerankQuery, kRerankDocuments[0]);
  EXPECT_EQ(error_of([&] { reranker.score({pair}); }), "document 0 with the query makes " +
                                                           std::to_string(pair.tokens.size()) +
                                                           " tokens in the model's prompt; at most 12 fit");
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
            "'qwen3.pooling_type' is 9; peak knows 0 (none), 1 (mean), 2 (cls), 3 (last) and 4 (rank)");
  // Rank pooling on decoder layers scores by the answers "yes" and "no", which the labels must name.
  EXPECT_EQ(error_of([&] {
              model::Model::load(edited_model(write_tiny_qwen3_embedding(), "",
                                              [](gguf::GgufWriter& w) { w.set_u32("qwen3.pooling_type", 4); }));
            }),
            "'qwen3.classifier.output_labels' must name the answers \"yes\" and \"no\" of a qwen3 reranker "
            "(pooling_type 4), which scores by the probability of \"yes\"");
  const auto m = model::Model::load(gemma);
  EXPECT_NE(error_of([&] {
              runtime::Context context(*m, runtime::ContextParams{});
            }).find("gemma-embedding model is an encoder"),
            std::string::npos);
}

// The tiny nomic-bert with its fused QKV matrices times kQkvScale: synth's
// N(0, 0.02) weights give scores of about 0.03, an attention so even that the
// rotation changes the outputs by 1e-4 only; at 10x, scores of about 3 make
// it decide what each token attends to.
std::string write_tiny_nomic_bert() {
  constexpr float kQkvScale = 10.0f;
  const auto file = gguf::GgufFile::open(test::write_tiny_model(model::Arch::NomicBert, GgmlType::F32));
  gguf::GgufWriter w;
  for (size_t i = 0; i < file->n_kv(); ++i) w.copy_value(file->value(i));
  std::vector<std::vector<float>> scaled;
  scaled.reserve(file->n_tensors());
  for (size_t i = 0; i < file->n_tensors(); ++i) {
    const gguf::TensorInfo& t = file->tensor(i);
    const void* data = t.data;
    if (std::string(t.name).find("attn_qkv") != std::string::npos) {
      const auto* values = reinterpret_cast<const float*>(t.data);
      scaled.emplace_back(values, values + t.n_elements());
      for (float& v : scaled.back()) v *= kQkvScale;
      data = scaled.back().data();
    }
    w.add_tensor(t.name, t.type, t.n_dims, t.ne, data);
  }
  const std::string path = test::test_temp_path("tiny_nomic_bert.gguf");
  w.write_file(path);
  return path;
}

// nomic-bert (nomic-embed-text): bert's post-norm blocks with a fused QKV
// matrix, NEOX rope instead of a position table, SwiGLU and no biases,
// against the reference built from those definitions.
TEST(NomicBertEncoder, MatchesANaiveDoublePrecisionEncoderForEveryPooling) {
  const auto m = model::Model::load(write_tiny_nomic_bert());
  const model::HParams& hp = m->hparams();
  EXPECT_EQ(hp.pooling, Pooling::Mean);
  EXPECT_FALSE(hp.causal_attention);
  EXPECT_EQ(hp.rope.mode, core::RopeMode::Neox);
  EXPECT_EQ(hp.rope.n_dims, hp.head_dim);  // the whole head rotates
  EXPECT_FLOAT_EQ(hp.rope.freq_base, 1000.0f);
  EXPECT_NE(m->weights().layers[0].wqkv, nullptr);
  EXPECT_EQ(m->weights().position_embd, nullptr);
  expect_reference_vectors(*m, [&](const std::vector<int32_t>& tokens, Pooling pooling, bool normalize) {
    return test::reference_pool(test::reference_encode(m->file(), hp, tokens), pooling, normalize);
  });
}

TEST(NomicBertEncoder, ABatchOfSequencesEqualsEachAlone) {
  const auto m = model::Model::load(write_tiny_nomic_bert());
  expect_batches_equal_single_sequences(*m);
}

// The rotation is what tells positions apart: the reference without it is
// far outside the bound the engine meets, for every sequence of more than one token.
TEST(NomicBertEncoder, TheRotationMatters) {
  const auto m = model::Model::load(write_tiny_nomic_bert());
  runtime::Encoder encoder(*m);
  const runtime::EmbedOptions every_token{Pooling::None, false};
  const auto vectors = encoder.embed(kSequences, every_token);
  for (size_t s = 0; s < kSequences.size(); ++s) {
    if (kSequences[s].size() < 2) continue;
    const auto unrotated = test::reference_pool(
        test::reference_encode(m->file(), m->hparams(), kSequences[s], SIZE_MAX, false), Pooling::None, false);
    EXPECT_GT(relative_error(vectors[s], unrotated), 1e-2) << "sequence " << s;
  }
}

TEST(NomicBertEncoder, RefusesAMissingPoolingTypeAndMissingTensorsByName) {
  const std::string tiny = test::write_tiny_model(model::Arch::NomicBert, GgmlType::F32);
  EXPECT_EQ(
      error_of([&] {
        model::Model::load(edited_model(tiny, "", [](gguf::GgufWriter& w) { w.remove("nomic-bert.pooling_type"); }));
      }),
      "model metadata lacks 'nomic-bert.pooling_type', which nomic-bert needs");
  EXPECT_EQ(error_of([&] { model::Model::load(edited_model(tiny, "blk.1.ffn_gate.weight", {})); }),
            "model lacks tensor 'blk.1.ffn_gate.weight' (nomic-bert)");
  EXPECT_EQ(error_of([&] { model::Model::load(edited_model(tiny, "token_embd_norm.bias", {})); }),
            "model lacks tensor 'token_embd_norm.bias' (nomic-bert)");
}

}  // namespace
}  // namespace peak
