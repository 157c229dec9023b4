// LoRA adapters and control vectors applied at run time: on every
// architecture's tiny F32 model, a rank-8 adapter on each projection gives the
// logits of a naive double-precision forward pass with the merged weights, in
// a prefill and token by token; two adapters add their deltas; scale 0 is the
// base model bit for bit; adapters change between turns without a new
// context; control vectors equal a reference that adds the direction after
// the layer; malformed files are refused naming the key or tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include "adapter_files.h"
#include "gguf/gguf_error.h"
#include "model/control_vector.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "model/model_error.h"
#include "model/synth_lora.h"
#include "reference_forward.h"
#include "runtime/context.h"
#include "tiny_models.h"

namespace peak {

using kernels::GgmlType;

namespace {

using test::AdapterUse;
using test::ReferenceDeviation;
using test::TestTensor;

const std::vector<int32_t> kPrompt = {1,   17, 250, 3,  99, 42, 7,   280, 64, 5,  5,   123, 200, 11,
                                      140, 33, 298, 2,  77, 61, 190, 8,   254, 19, 46, 101, 3,   222};

const model::Arch kAllArchs[] = {model::Arch::Llama,  model::Arch::Qwen2, model::Arch::Qwen3,  model::Arch::Gemma2,
                                 model::Arch::Gemma3, model::Arch::Phi3,  model::Arch::SmolLM3};

std::string write_adapter(const model::Model& m, const std::string& stem, model::SynthLoraSpec spec) {
  const std::string path = test::test_temp_path(stem);
  model::write_synth_lora(m.file(), spec, path);
  return path;
}

model::SynthLoraSpec rank8(uint64_t seed, float alpha) {
  model::SynthLoraSpec spec;
  spec.rank = 8;
  spec.alpha = alpha;
  spec.type = GgmlType::F32;
  spec.seed = seed;
  return spec;
}

// The reference with every projection replaced by its merged matrix.
void merge_into(test::ReferenceForward& ref, const model::Model& m, const std::vector<AdapterUse>& adapters) {
  for (size_t i = 0; i < m.file().n_tensors(); ++i) {
    const std::string name(m.file().tensor(i).name);
    if (model::parse_lora_target(name)) ref.set_matrix(name, test::merged_matrix(m.file(), name, adapters));
  }
}

runtime::ContextParams f32_cache(bool logits_all) {
  runtime::ContextParams params;
  params.n_ctx = 64;
  params.n_batch = 16;
  params.type_k = params.type_v = GgmlType::F32;
  params.logits_all = logits_all;
  return params;
}

runtime::Adapters loras(const model::Model& m, const std::vector<AdapterUse>& uses) {
  runtime::Adapters a;
  for (const AdapterUse& u : uses) {
    a.loras.push_back({model::LoraAdapter::load(m, u.path), static_cast<float>(u.scale)});
  }
  return a;
}

// The engine with `adapters` against the reference, as a prefill of every
// token's logits and token by token; the model without them (the last
// round) must be far from that reference, or the comparison proves nothing.
void expect_matches_reference(const model::Model& m, const runtime::Adapters& adapters,
                              const std::function<void(test::ReferenceForward&)>& prepare, double tolerance) {
  for (int round = 0; round < 3; ++round) {
    const bool prefill = round == 0, without = round == 2;
    runtime::ContextParams params = f32_cache(prefill);
    if (!without) params.adapters = adapters;
    runtime::Context ctx(m, params);
    test::ReferenceForward ref(m.file(), m.hparams(), params.n_ctx);
    prepare(ref);
    const auto n_vocab = static_cast<size_t>(ctx.n_vocab());
    std::vector<float> all(prefill ? kPrompt.size() * n_vocab : 0);
    if (prefill) ctx.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()), all.data());
    ReferenceDeviation d;
    for (size_t i = 0; i < kPrompt.size(); ++i) {
      if (!prefill) ctx.eval(&kPrompt[i], 1);
      d.add(ref.step(kPrompt[i]), prefill ? all.data() + i * n_vocab : ctx.logits());
    }
    EXPECT_GT(d.max_ref, 1e-3) << "logits are degenerate";
    const double limit = (prefill ? test::prefill_tolerance(m, tolerance) : tolerance) * std::max(1.0, d.max_ref);
    if (without) {
      EXPECT_GT(d.max_diff, 100 * limit) << "the adapters hardly change the model";
    } else {
      EXPECT_LT(d.max_diff, limit) << (prefill ? "prefill" : "decode");
    }
  }
}

// Largest |a - b| over the logits of two contexts.
double logit_distance(const runtime::Context& a, const runtime::Context& b) {
  double d = 0;
  for (int64_t v = 0; v < a.n_vocab(); ++v) d = std::max(d, static_cast<double>(std::abs(a.logits()[v] - b.logits()[v])));
  return d;
}

class Adapters : public ::testing::TestWithParam<model::Arch> {};

TEST_P(Adapters, OneRank8AdapterOnEveryProjectionEqualsTheMergedReference) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  const std::string path = write_adapter(*m, "lora.gguf", rank8(3, 16.0f));
  const auto adapter = model::LoraAdapter::load(*m, path);
  // q, k, v, o, gate, up, down per layer (phi3: fused qkv and gate-up).
  EXPECT_EQ(adapter->n_pairs(), static_cast<size_t>(m->hparams().n_layer) * (GetParam() == model::Arch::Phi3 ? 4 : 7));
  EXPECT_EQ(adapter->max_rank(), 8);
  const std::vector<AdapterUse> uses = {{path, 0.75}};
  expect_matches_reference(*m, loras(*m, uses), [&](test::ReferenceForward& ref) { merge_into(ref, *m, uses); }, 1e-4);
}

TEST_P(Adapters, TwoStackedAdaptersAddTheirDeltas) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  model::SynthLoraSpec second = rank8(5, 0.0f);  // no alpha: the scale applies as given
  second.targets = {"attn_q", "attn_qkv", "ffn_down"};
  const std::vector<AdapterUse> uses = {{write_adapter(*m, "a.gguf", rank8(3, 16.0f)), 0.5},
                                        {write_adapter(*m, "b.gguf", second), -1.5}};
  expect_matches_reference(*m, loras(*m, uses), [&](test::ReferenceForward& ref) { merge_into(ref, *m, uses); }, 1e-4);
}

// An adapter stored in F16: decode forms B·(A·x) from B's rows transposed
// (model::LoraPair::b_rows), prefill from B as stored. (Q8_0 adapters round
// the activations to 8 bits on both paths, beyond this tolerance; the core
// tests check that path against its own reference.)
TEST_P(Adapters, HalfAdapterEqualsTheMergedReference) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  model::SynthLoraSpec spec = rank8(7, 0.0f);
  spec.rank = 16;
  spec.type = GgmlType::F16;
  const std::vector<AdapterUse> uses = {{write_adapter(*m, "half.gguf", spec), 2.0}};
  expect_matches_reference(
      *m, loras(*m, uses), [&](test::ReferenceForward& ref) { merge_into(ref, *m, uses); }, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, Adapters, ::testing::ValuesIn(kAllArchs),
                         [](const auto& param_info) { return std::string(model::arch_name(param_info.param)); });

TEST(LoraScale, ZeroIsTheBaseModelBitForBit) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Qwen3, GgmlType::Q8_0));
  model::SynthLoraSpec spec;
  spec.rank = 32;
  spec.type = GgmlType::Q8_0;
  const std::string path = write_adapter(*m, "lora.gguf", spec);
  runtime::ContextParams params;
  params.n_ctx = 64;
  runtime::Context base(*m, params);
  params.adapters = loras(*m, {{path, 0.0}});
  runtime::Context zero(*m, params);
  base.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
  zero.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
  for (int32_t next : {9, 250}) {
    for (int64_t v = 0; v < base.n_vocab(); ++v) ASSERT_EQ(base.logits()[v], zero.logits()[v]) << v;
    base.eval(&next, 1);
    zero.eval(&next, 1);
  }
  // ... and a Q8_0 adapter at scale 1 does change them.
  zero.set_adapters(loras(*m, {{path, 1.0}}));
  const int32_t next = 3;
  base.eval(&next, 1);
  zero.eval(&next, 1);
  EXPECT_GT(logit_distance(base, zero), 1e-3);
}

// Between turns: load, re-scale and unload without a new context. Each turn's
// tokens see the weights of their own turn; the cache keeps what earlier
// turns computed, as the reference does when its matrices change mid-way.
TEST(LoraBetweenTurns, ChangingTheAdaptersAppliesFromTheNextEvaluation) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Llama, GgmlType::F32));
  const std::string path = write_adapter(*m, "lora.gguf", rank8(11, 8.0f));
  const auto adapter = model::LoraAdapter::load(*m, path);
  runtime::Context ctx(*m, f32_cache(false));
  test::ReferenceForward ref(m->file(), m->hparams(), 64);
  const std::vector<double> scales = {0.0, 1.0, 2.5, 0.0};
  ReferenceDeviation d;
  size_t next = 0;
  for (double scale : scales) {
    runtime::Adapters a;
    if (scale != 0.0) a.loras.push_back({adapter, static_cast<float>(scale)});
    ctx.set_adapters(a);
    merge_into(ref, *m, {{path, scale}});
    for (int i = 0; i < 5; ++i, ++next) {
      ctx.eval(&kPrompt[next], 1);
      d.add(ref.step(kPrompt[next]), ctx.logits());
    }
  }
  EXPECT_LT(d.max_diff, 1e-4 * std::max(1.0, d.max_ref));
}

// One adapter in contexts on two threads at once (run under TSan in CI), each
// equal to a context that ran alone.
TEST(LoraSharing, OneAdapterServesContextsOnTwoThreads) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Qwen3, GgmlType::F32));
  runtime::ContextParams params = f32_cache(false);
  params.n_threads = 1;
  params.adapters = loras(*m, {{write_adapter(*m, "lora.gguf", rank8(2, 16.0f)), 1.0}});
  runtime::Context alone(*m, params);
  alone.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
  std::vector<float> results[2];
  std::thread threads[2];
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([&, t] {
      runtime::Context ctx(*m, params);
      ctx.eval(kPrompt.data(), static_cast<int64_t>(kPrompt.size()));
      results[t].assign(ctx.logits(), ctx.logits() + ctx.n_vocab());
    });
  }
  for (std::thread& th : threads) th.join();
  params.adapters = {};  // the contexts hold the adapter, not this
  for (const auto& r : results) {
    for (int64_t v = 0; v < alone.n_vocab(); ++v) ASSERT_EQ(r[static_cast<size_t>(v)], alone.logits()[v]);
  }
}

// ---- control vectors -------------------------------------------------------------

std::string write_control_vector(const model::Model& m, const std::string& stem, const std::vector<int64_t>& layers,
                                 uint64_t seed) {
  std::vector<TestTensor> tensors;
  for (int64_t il : layers) {
    tensors.push_back({"direction." + std::to_string(il), GgmlType::F32, {m.hparams().n_embd},
                       test::random_values(static_cast<size_t>(m.hparams().n_embd), 0.5f, seed + static_cast<uint64_t>(il))});
  }
  return test::write_test_gguf(
      stem,
      [&](gguf::GgufWriter& w) {
        w.set_string("general.architecture", "controlvector");
        w.set_string("controlvector.model_hint", model::arch_name(m.hparams().arch));
        w.set_i32("controlvector.layer_count", static_cast<int32_t>(layers.size()));
      },
      tensors);
}

// Layer il's direction of the file at `path`, times `strength`, as doubles.
std::vector<double> scaled_direction(const std::string& path, int64_t il, double strength) {
  const auto file = gguf::GgufFile::open(path);
  const gguf::TensorInfo* t = file->find_tensor("direction." + std::to_string(il));
  if (!t) return {};
  const auto* v = reinterpret_cast<const float*>(t->data);
  std::vector<double> out(static_cast<size_t>(t->ne[0]));
  for (size_t i = 0; i < out.size(); ++i) out[i] = strength * v[i];
  return out;
}

TEST(ControlVectors, TwoVectorsOverALayerRangeEqualTheReference) {
  // 4 layers (smollm3's tiny model), directions for 1, 2 and 3, applied to 1-2.
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::SmolLM3, GgmlType::F32));
  ASSERT_EQ(m->hparams().n_layer, 4);
  const std::string first = write_control_vector(*m, "cv1.gguf", {1, 2, 3}, 40);
  const std::string second = write_control_vector(*m, "cv2.gguf", {2}, 80);
  runtime::Adapters a;
  a.control_vectors = {{model::ControlVector::load(*m, first), 0.8f}, {model::ControlVector::load(*m, second), -0.3f}};
  a.control_first = 1;
  a.control_last = 2;
  expect_matches_reference(
      *m, a,
      [&](test::ReferenceForward& ref) {
        ref.set_layer_offset(1, scaled_direction(first, 1, 0.8));
        std::vector<double> two = scaled_direction(first, 2, 0.8);
        const std::vector<double> more = scaled_direction(second, 2, -0.3);
        for (size_t i = 0; i < two.size(); ++i) two[i] += more[i];
        ref.set_layer_offset(2, two);
      },
      1e-4);
}

TEST(ControlVectors, ALoraAndAControlVectorTogetherEqualTheReference) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Qwen3, GgmlType::F32));
  const std::string cv = write_control_vector(*m, "cv.gguf", {1}, 7);
  const std::vector<AdapterUse> uses = {{write_adapter(*m, "lora.gguf", rank8(4, 16.0f)), 1.0}};
  runtime::Adapters a = loras(*m, uses);
  a.control_vectors = {{model::ControlVector::load(*m, cv), 1.5f}};
  expect_matches_reference(
      *m, a,
      [&](test::ReferenceForward& ref) {
        merge_into(ref, *m, uses);
        ref.set_layer_offset(1, scaled_direction(cv, 1, 1.5));
      },
      1e-4);
}

TEST(ControlVectors, ARangeWithoutTheirLayersOrStrengthZeroChangesNothing) {
  const auto m = model::Model::load(test::write_tiny_model(model::Arch::Llama, GgmlType::F32));
  const auto cv = model::ControlVector::load(*m, write_control_vector(*m, "cv.gguf", {1}, 7));
  EXPECT_EQ(cv->first_layer(), 1);
  EXPECT_EQ(cv->n_directions(), 1);
  runtime::ContextParams params = f32_cache(false);
  runtime::Context base(*m, params);
  base.eval(kPrompt.data(), 8);
  for (const auto& [strength, first, last] : {std::tuple<float, int64_t, int64_t>{1.0f, 0, 0}, {0.0f, 0, 1}}) {
    params.adapters.control_vectors = {{cv, strength}};
    params.adapters.control_first = first;
    params.adapters.control_last = last;
    runtime::Context steered(*m, params);
    steered.eval(kPrompt.data(), 8);
    EXPECT_EQ(logit_distance(base, steered), 0.0);
  }
  params.adapters.control_first = 2;
  params.adapters.control_last = 1;
  EXPECT_THROW(runtime::Context(*m, params), std::invalid_argument);
}

// ---- refusals ----------------------------------------------------------------------

// Loading `path` for `m` fails with a message holding `needle`, and the model
// still computes what it did.
template <typename Load>
void expect_refused(const model::Model& m, Load load, const std::string& path, const std::string& needle) {
  try {
    load(m, path);
    ADD_FAILURE() << "accepted " << path << " (expected a refusal naming '" << needle << "')";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

struct Pair {
  std::string target = "blk.0.attn_q.weight";
  std::vector<int64_t> a_shape, b_shape;
};

class MalformedAdapter : public ::testing::Test {
 protected:
  void SetUp() override { m_ = model::Model::load(test::write_tiny_model(model::Arch::Llama, GgmlType::F32)); }

  // An adapter with `edit` applied after good metadata, and the given tensors
  // (by default one good rank-4 pair for blk.0.attn_q: [64, 4] and [4, 64]).
  std::string adapter(const std::function<void(gguf::GgufWriter&)>& edit, std::vector<TestTensor> tensors = {}) {
    if (tensors.empty()) tensors = good_pair("blk.0.attn_q.weight", 64, 64);
    return test::write_test_gguf(
        "adapter_" + std::to_string(n_++) + ".gguf",
        [&](gguf::GgufWriter& w) {
          w.set_string("general.architecture", "llama");
          w.set_string("general.type", "adapter");
          w.set_string("adapter.type", "lora");
          w.set_f32("adapter.lora.alpha", 8.0f);
          if (edit) edit(w);
        },
        tensors);
  }
  static std::vector<TestTensor> good_pair(const std::string& target, int64_t n_in, int64_t n_out, int64_t rank = 4) {
    return {{target + ".lora_a", GgmlType::F32, {n_in, rank}, test::random_values(static_cast<size_t>(n_in * rank), 0.1f, 1)},
            {target + ".lora_b", GgmlType::F32, {rank, n_out}, test::random_values(static_cast<size_t>(rank * n_out), 0.1f, 2)}};
  }
  // The file at `path` with the second dimension of its first tensor set to 0.
  static std::string with_zero_rank(const std::string& path) {
    std::string bytes;
    if (std::FILE* in = std::fopen(path.c_str(), "rb")) {
      char chunk[4096];
      for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, in)) > 0;) bytes.append(chunk, n);
      std::fclose(in);
    }
    const std::string name = "blk.0.attn_q.weight.lora_a";
    const size_t at = bytes.find(name);
    EXPECT_NE(at, std::string::npos);
    // name, then n_dims (u32) and ne[0] (u64): ne[1] follows.
    const size_t ne1 = at + name.size() + 4 + 8;
    for (size_t i = 0; i < 8; ++i) bytes[ne1 + i] = 0;
    const std::string out = path + ".rank0.gguf";
    std::ofstream(out, std::ios::binary) << bytes;
    return out;
  }
  void refused(const std::string& path, const std::string& needle) {
    expect_refused(*m_, [](const model::Model& mm, const std::string& p) { model::LoraAdapter::load(mm, p); }, path,
                   needle);
  }

  std::unique_ptr<model::Model> m_;
  int n_ = 0;
};

TEST_F(MalformedAdapter, IsRefusedNamingTheKeyOrTensorAndTheModelKeepsWorking) {
  runtime::ContextParams params;
  params.n_ctx = 32;
  runtime::Context before(*m_, params);
  before.eval(kPrompt.data(), 8);

  ASSERT_NO_THROW(model::LoraAdapter::load(*m_, adapter(nullptr)));
  refused(adapter([](gguf::GgufWriter& w) { w.set_string("general.architecture", "qwen3"); }), "general.architecture");
  refused(adapter([](gguf::GgufWriter& w) { w.remove("general.type"); }), "general.type");
  refused(adapter([](gguf::GgufWriter& w) { w.set_string("general.type", "model"); }), "general.type");
  refused(adapter([](gguf::GgufWriter& w) { w.set_string("adapter.type", "ia3"); }), "adapter.type");
  refused(adapter([](gguf::GgufWriter& w) { w.set_f32("adapter.lora.alpha", std::numeric_limits<float>::quiet_NaN()); }),
          "adapter.lora.alpha");
  refused(adapter([](gguf::GgufWriter& w) { w.set_string("adapter.lora.alpha", "8"); }), "adapter.lora.alpha");
  // Shapes: A's input side, B's output side, ranks that differ.
  std::vector<TestTensor> t = good_pair("blk.0.attn_q.weight", 48, 64);
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_a");
  t = good_pair("blk.0.attn_q.weight", 64, 32);
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_b");
  t = good_pair("blk.0.attn_q.weight", 64, 64);
  t[1] = good_pair("blk.0.attn_q.weight", 64, 64, 6)[1];
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_b");
  // The k projection of the tiny llama has 2 KV heads of 16: [64, 32].
  refused(adapter(nullptr, good_pair("blk.1.attn_k.weight", 64, 64)), "blk.1.attn_k.weight.lora_b");
  // A missing half, a target the model lacks, a target peak does not adapt, a stray tensor.
  t = good_pair("blk.0.attn_q.weight", 64, 64);
  t.pop_back();
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_b");
  refused(adapter(nullptr, good_pair("blk.7.attn_q.weight", 64, 64)), "blk.7.attn_q.weight");
  refused(adapter(nullptr, good_pair("output.weight", 64, 300)), "output.weight");
  t = good_pair("blk.0.attn_q.weight", 64, 64);
  t.push_back({"blk.0.attn_q.weight.lora_c", GgmlType::F32, {4}, {1, 2, 3, 4}});
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_c");
  // Rank 0 (no writer makes one: the rank-1 pair's A edited to [64, 0]); the
  // GGUF reader refuses an empty dimension, naming the tensor.
  refused(with_zero_rank(adapter(nullptr, good_pair("blk.0.attn_q.weight", 64, 64, 1))), "blk.0.attn_q.weight.lora_a");
  // Values: a NaN, and a type no kernel multiplies with.
  t = good_pair("blk.0.attn_q.weight", 64, 64);
  t[1].values[70] = std::numeric_limits<float>::quiet_NaN();
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_b");
  t = good_pair("blk.0.attn_q.weight", 64, 64);
  t[0].type = GgmlType::I32;
  t[0].values.clear();
  refused(adapter(nullptr, t), "blk.0.attn_q.weight.lora_a");
  // No pair at all, and a model file instead of an adapter.
  refused(adapter(nullptr, {{"blk.0.attn_norm.weight", GgmlType::F32, {64}, std::vector<float>(64, 1.0f)}}),
          "no LoRA matrices");
  refused(test::write_tiny_model(model::Arch::Llama, GgmlType::F32), "general.type");

  runtime::Context after(*m_, params);
  after.eval(kPrompt.data(), 8);
  EXPECT_EQ(logit_distance(before, after), 0.0);
}

TEST_F(MalformedAdapter, ControlVectorsAreRefusedNamingTheKeyOrTensor) {
  const auto load = [](const model::Model& mm, const std::string& p) { model::ControlVector::load(mm, p); };
  const auto cv = [&](const std::function<void(gguf::GgufWriter&)>& edit, std::vector<TestTensor> tensors) {
    return test::write_test_gguf(
        "cv_" + std::to_string(n_++) + ".gguf",
        [&](gguf::GgufWriter& w) {
          w.set_string("general.architecture", "controlvector");
          if (edit) edit(w);
        },
        tensors);
  };
  const TestTensor good{"direction.1", GgmlType::F32, {64}, test::random_values(64, 1.0f, 3)};
  ASSERT_NO_THROW(load(*m_, cv(nullptr, {good})));
  expect_refused(*m_, load, cv([](gguf::GgufWriter& w) { w.set_string("general.architecture", "llama"); }, {good}),
                 "general.architecture");
  expect_refused(*m_, load, cv([](gguf::GgufWriter& w) { w.set_string("controlvector.model_hint", "gemma2"); }, {good}),
                 "controlvector.model_hint");
  TestTensor t = good;
  t.name = "direction.0";
  expect_refused(*m_, load, cv(nullptr, {t}), "direction.0");
  t.name = "direction.2";  // the tiny llama has layers 0 and 1
  expect_refused(*m_, load, cv(nullptr, {t}), "direction.2");
  t.name = "bias.1";
  expect_refused(*m_, load, cv(nullptr, {t}), "bias.1");
  t = {"direction.1", GgmlType::F32, {32}, test::random_values(32, 1.0f, 3)};
  expect_refused(*m_, load, cv(nullptr, {t}), "direction.1");
  t = good;
  t.values[5] = std::numeric_limits<float>::infinity();
  expect_refused(*m_, load, cv(nullptr, {t}), "direction.1");
  expect_refused(*m_, load, cv(nullptr, {}), "no direction");
}

TEST(AdapterIdentity, AnAdapterOfAnotherModelIsRefusedBySetAdapters) {
  const std::string path = test::write_tiny_model(model::Arch::Llama, GgmlType::F32);
  const auto one = model::Model::load(path);
  const auto two = model::Model::load(path);
  runtime::Adapters a = loras(*one, {{write_adapter(*one, "lora.gguf", rank8(1, 0.0f)), 1.0}});
  runtime::ContextParams params;
  params.n_ctx = 16;
  runtime::Context ctx(*two, params);
  EXPECT_THROW(ctx.set_adapters(a), std::invalid_argument);
  a.loras[0].adapter = model::LoraAdapter::load(*two, test::test_temp_path("lora.gguf"));
  a.loras[0].scale = std::numeric_limits<float>::infinity();
  EXPECT_THROW(ctx.set_adapters(a), std::invalid_argument);
  EXPECT_TRUE(ctx.adapters().empty());
}

}  // namespace
}  // namespace peak
