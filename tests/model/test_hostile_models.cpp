// Hostile variants of stories260K: one metadata key or one vector set to a
// value that passes the format checks but not the model's (a count that would
// size tables from nothing, a product that would overflow, a NaN or negative
// float, a NaN norm weight). Each is refused at load with a message naming
// the key or tensor, before anything is sized by the bad value; a NaN in a
// matrix is found by the opt-in full scan (LoadOptions::check_tensors).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "alloc_counter.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "tiny_models.h"

namespace peak {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using test::KeyEdit;
using test::ValueEdit;

std::string hostile_file(const KeyEdit& edit_keys, const ValueEdit& value = {}) {
  return test::edited_stories(edit_keys, value);
}

std::string load_error(const std::string& path, const model::LoadOptions& options = {}) {
  try {
    model::Model::load(path, options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

KeyEdit u32(const char* key, uint32_t v) { return [=](gguf::GgufWriter& w) { w.set_u32(key, v); }; }
KeyEdit u64(const char* key, uint64_t v) { return [=](gguf::GgufWriter& w) { w.set_u64(key, v); }; }
KeyEdit i32(const char* key, int32_t v) { return [=](gguf::GgufWriter& w) { w.set_i32(key, v); }; }
KeyEdit f32(const char* key, float v) { return [=](gguf::GgufWriter& w) { w.set_f32(key, v); }; }
KeyEdit f64(const char* key, double v) { return [=](gguf::GgufWriter& w) { w.set_f64(key, v); }; }

TEST(HostileModels, StoriesItselfLoads) { EXPECT_EQ(load_error(hostile_file({})), ""); }

TEST(HostileModels, EveryBadHyperParameterIsRefusedNamingItsKey) {
  constexpr uint64_t k2to62 = uint64_t{1} << 62;
  struct Case {
    KeyEdit edit;
    const char* message;
  };
  const Case cases[] = {
      {u32("llama.block_count", 10000000), "'llama.block_count' is 10000000; it must be between 1 and 4096"},
      {u64("llama.block_count", k2to62), "'llama.block_count' is 4611686018427387904; it must be between 1 and 4096"},
      {u32("llama.block_count", 4096), "'llama.block_count' is 4096 but the file holds tensors of 5 blocks"},
      {u32("llama.block_count", 6), "'llama.block_count' is 6 but the file holds tensors of 5 blocks"},
      {u32("llama.block_count", 0), "'llama.block_count' is 0; it must be between 1 and 4096"},
      {u64("llama.attention.key_length", k2to62), "'llama.attention.key_length' is 4611686018427387904; it must be"},
      {u32("llama.attention.key_length", 7), "'llama.attention.key_length' 7 must be even"},
      {u64("llama.attention.value_length", k2to62), "'llama.attention.value_length' is 4611686018427387904"},
      {u64("llama.embedding_length", k2to62), "'llama.embedding_length' is 4611686018427387904; it must be"},
      {u64("llama.feed_forward_length", uint64_t{1} << 40), "'llama.feed_forward_length' is 1099511627776"},
      {u64("llama.attention.head_count", k2to62), "'llama.attention.head_count' is 4611686018427387904"},
      {u32("llama.attention.head_count_kv", 0), "'llama.attention.head_count_kv' is 0; it must be between 1"},
      {u32("llama.attention.head_count_kv", 3), "'llama.attention.head_count' 8 is not a multiple of"},
      {u32("llama.context_length", 2147483648u), "'llama.context_length' is 2147483648; it must be between 1 and"},
      {i32("llama.context_length", -1), "'llama.context_length' is -1; it must be between 1 and"},
      {u64("llama.rope.dimension_count", k2to62), "'llama.rope.dimension_count' 4611686018427387904 must be even"},
      {f32("llama.rope.freq_base", 0.0f), "'llama.rope.freq_base' must be positive and finite, not 0"},
      {f32("llama.rope.freq_base", -10000.0f), "'llama.rope.freq_base' must be positive and finite, not -10000"},
      {f32("llama.rope.freq_base", kNaN), "'llama.rope.freq_base' must be positive and finite, not nan"},
      {f32("llama.rope.freq_base", kInf), "'llama.rope.freq_base' must be positive and finite, not inf"},
      {f64("llama.rope.freq_base", 1e300), "'llama.rope.freq_base' must be positive and finite"},
      {f32("llama.attention.layer_norm_rms_epsilon", kNaN),
       "'llama.attention.layer_norm_rms_epsilon' must be positive and finite, not nan"},
      {f32("llama.attention.layer_norm_rms_epsilon", -1e-5f),
       "'llama.attention.layer_norm_rms_epsilon' must be positive and finite, not -0.00001"},
      {f32("llama.attention.layer_norm_rms_epsilon", kInf),
       "'llama.attention.layer_norm_rms_epsilon' must be positive and finite, not inf"},
      {f32("llama.attention.layer_norm_rms_epsilon", 0.0f),
       "'llama.attention.layer_norm_rms_epsilon' must be positive and finite, not 0"},
      {f64("llama.attention.layer_norm_rms_epsilon", 1e-300),
       "'llama.attention.layer_norm_rms_epsilon' must be positive and finite, not 0"},
      {f32("llama.rope.scale_linear", kNaN), "'llama.rope.scale_linear' must be positive and finite, not nan"},
      {f32("llama.rope.scale_linear", 1e-39f), "'llama.rope.scale_linear' 0.000000 is out of range"},
      {u64("llama.vocab_size", k2to62), ""},  // the token list decides; the key is not read
  };
  int refused = 0;
  for (const Case& c : cases) {
    const std::string error = load_error(hostile_file(c.edit));
    if (*c.message == '\0') {
      EXPECT_EQ(error, "");
      continue;
    }
    EXPECT_NE(error.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << error << "'";
    refused += error.find(c.message) != std::string::npos;
  }
  std::printf("hostile hyper-parameters: %zu files, %d refused naming the key\n", std::size(cases), refused);
}

TEST(HostileModels, AHugeBlockCountIsRefusedBeforeAnythingIsSizedByIt) {
  // Loading stories260K allocates at most a few tens of KB at once (its
  // vocabulary, five layers of descriptors); a block count of 4096 must not
  // change that: 4096 per-layer entries would be over 100 KB.
  for (const uint64_t blocks : {uint64_t{4096}, uint64_t{10000000}, uint64_t{1} << 62}) {
    const std::string path = hostile_file(u64("llama.block_count", blocks));
    test::AllocationScope scope;
    const std::string error = load_error(path);
    const test::AllocationStats stats = scope.stats();
    EXPECT_NE(error.find("'llama.block_count' is"), std::string::npos) << error;
    EXPECT_LT(stats.largest, size_t{64} << 10) << "block_count " << blocks;
    EXPECT_LT(stats.bytes, size_t{4} << 20) << "block_count " << blocks;
  }
}

TEST(HostileModels, NonFiniteVectorsAreRefusedAtLoadNamingTheTensor) {
  struct Case {
    ValueEdit value;
    const char* message;
  };
  const Case cases[] = {
      {{"output_norm.weight", 3, kNaN}, "tensor 'output_norm.weight' holds nan at element 3 (row 0, column 3)"},
      {{"blk.0.attn_norm.weight", 0, kInf}, "tensor 'blk.0.attn_norm.weight' holds inf at element 0"},
      {{"blk.4.ffn_norm.weight", 63, -kInf}, "tensor 'blk.4.ffn_norm.weight' holds -inf at element 63"},
  };
  for (const Case& c : cases) {
    const std::string error = load_error(hostile_file({}, c.value));
    EXPECT_NE(error.find(c.message), std::string::npos) << "expected '" << c.message << "', got '" << error << "'";
  }
}

TEST(HostileModels, TheFullScanFindsANonFiniteMatrixValue) {
  const std::string path = hostile_file({}, {"blk.2.attn_q.weight", 100, kNaN});
  EXPECT_EQ(load_error(path), "") << "matrices are read only when asked to";
  model::LoadOptions options;
  options.check_tensors = true;
  EXPECT_NE(load_error(path, options).find("tensor 'blk.2.attn_q.weight' holds nan at element 100 (row 1, column 36)"),
            std::string::npos);
  EXPECT_EQ(load_error(test::stories_path(), options), "");
}

}  // namespace
}  // namespace peak
