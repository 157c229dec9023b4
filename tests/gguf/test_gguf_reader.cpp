// The reader on real files (stories260K, the tokenizer fixtures, llama.cpp's
// quantized reference files) and on every value type written by the writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

namespace peak::gguf {

using kernels::GgmlType;

namespace {

const std::string kShared = PEAK_SHARED_DIR;
const std::string kStories = kShared + "/models/stories260K.gguf";

std::vector<std::string> gguf_files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) out.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return out;
}

TEST(GgufReader, ReadsStories260K) {
  const auto f = GgufFile::open(kStories);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->n_kv(), 19u);
  EXPECT_EQ(f->n_tensors(), 48u);
  EXPECT_EQ(f->data_offset(), 14176u);  // documented in shared/models/SOURCES.md
  EXPECT_EQ(f->get("general.architecture").str(), "llama");
  EXPECT_EQ(f->get("llama.embedding_length").u32(), 64u);
  EXPECT_EQ(f->get("llama.block_count").u32(), 5u);
  EXPECT_EQ(f->get("llama.attention.head_count_kv").u32(), 4u);
  EXPECT_FLOAT_EQ(f->get("llama.attention.layer_norm_rms_epsilon").f32(), 1e-5f);

  const ArrayView tokens = f->get("tokenizer.ggml.tokens").array();
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens.str(1), "<s>");
  EXPECT_EQ(tokens.str(3), "<0x00>");
  EXPECT_EQ(tokens.str(258), "<0xFF>");
  EXPECT_EQ(f->get("tokenizer.ggml.token_type").array().at<int32_t>(0), 2);

  const TensorInfo* q = f->find_tensor("blk.0.attn_k.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::F32);
  EXPECT_EQ(q->n_dims, 2u);
  EXPECT_EQ(q->ne[0], 64);
  EXPECT_EQ(q->ne[1], 32);
  EXPECT_EQ(q->n_bytes, 64u * 32u * 4u);
  int64_t total = 0;
  for (size_t i = 0; i < f->n_tensors(); ++i) total += f->tensor(i).n_elements();
  EXPECT_EQ(total, 292800);  // SOURCES.md: 292,800 values
}

TEST(GgufReader, TensorDataPointsIntoTheMapping) {
  const auto f = GgufFile::open(kStories);
  ASSERT_NE(f->mapping(), nullptr);
  EXPECT_TRUE(f->mapping()->is_mapped());
  for (size_t i = 0; i < f->n_tensors(); ++i) {
    const TensorInfo& t = f->tensor(i);
    EXPECT_EQ(t.data, f->bytes() + f->data_offset() + t.offset) << t.name;
  }
  // output.weight equals token_embd.weight in this conversion (SOURCES.md).
  const TensorInfo* a = f->find_tensor("token_embd.weight");
  const TensorInfo* b = f->find_tensor("output.weight");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(0, std::memcmp(a->data, b->data, a->n_bytes));
}

TEST(GgufReader, ReadFallbackGivesTheSameBytes) {
  io::MapOptions no_mmap;
  no_mmap.use_mmap = false;
  const auto mapped = GgufFile::open(kStories);
  const auto read = GgufFile::open(kStories, no_mmap);
  EXPECT_FALSE(read->mapping()->is_mapped());
  ASSERT_EQ(mapped->size(), read->size());
  EXPECT_EQ(0, std::memcmp(mapped->bytes(), read->bytes(), mapped->size()));
  io::MapOptions populate_and_lock;
  populate_and_lock.populate = true;
  populate_and_lock.lock = true;  // may silently stay unlocked under RLIMIT_MEMLOCK
  EXPECT_EQ(GgufFile::open(kStories, populate_and_lock)->n_tensors(), 48u);
}

TEST(GgufReader, TypedAccessorsRefuseOtherTypes) {
  const auto f = GgufFile::open(kStories);
  EXPECT_THROW(f->get("general.architecture").u32(), GgufTypeError);
  EXPECT_THROW(f->get("llama.block_count").str(), GgufTypeError);
  EXPECT_THROW(f->get("llama.block_count").u64(), GgufTypeError);
  EXPECT_THROW(f->get("llama.block_count").i32(), GgufTypeError);
  EXPECT_THROW(f->get("tokenizer.ggml.tokens").array().at<float>(0), GgufTypeError);
  EXPECT_THROW(f->get("tokenizer.ggml.tokens").array().str(512), GgufError);  // out of range
  EXPECT_THROW(f->get("no.such.key"), GgufError);
  EXPECT_FALSE(f->find("no.such.key").has_value());
  EXPECT_EQ(f->get("llama.block_count").as_uint(), 5u);
  EXPECT_EQ(f->get("llama.block_count").as_int(), 5);
  EXPECT_THROW(f->get("general.name").as_uint(), GgufTypeError);
  try {
    f->get("general.architecture").u32();
  } catch (const GgufTypeError& e) {
    EXPECT_STREQ(e.what(), "key 'general.architecture' holds string, not uint32");
  }
}

TEST(GgufReader, OpeningAMissingFileNamesIt) {
  try {
    GgufFile::open("/nonexistent/model.gguf");
    FAIL();
  } catch (const io::IoError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("/nonexistent/model.gguf"));
  }
}

TEST(GgufReader, ParsesEverySharedModelAndFixture) {
  std::vector<std::string> files = gguf_files_in(kShared + "/models");
  for (const auto& dir : {"/fixtures/vocab", "/reference/quant"}) {
    const auto more = gguf_files_in(kShared + dir);
    files.insert(files.end(), more.begin(), more.end());
  }
  ASSERT_GE(files.size(), 16u) << "shared fixtures missing";
  for (const std::string& path : files) {
    EXPECT_NO_THROW(GgufFile::open(path)) << path;
  }
}

TEST(GgufReader, ReadsQuantizedTensorsFromLlamaCpp) {
  const auto f = GgufFile::open(kShared + "/reference/quant/Q4_K.gguf");
  const TensorInfo* t = f->find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, GgmlType::Q4_K);
  EXPECT_EQ(t->ne[0], 256);
  EXPECT_EQ(t->ne[1], 256);
  EXPECT_EQ(t->n_bytes, 256u * 144u);
}

TEST(GgufRoundTrip, EveryValueTypeSurvivesWriteAndRead) {
  GgufWriter w;
  w.set_u8("t.u8", 200);
  w.set_i8("t.i8", -100);
  w.set_u16("t.u16", 60000);
  w.set_i16("t.i16", -30000);
  w.set_u32("t.u32", 4000000000u);
  w.set_i32("t.i32", -2000000000);
  w.set_u64("t.u64", uint64_t{1} << 63);
  w.set_i64("t.i64", -(int64_t{1} << 62));
  w.set_f32("t.f32", 0.15625f);
  w.set_f64("t.f64", -2.5e300);
  w.set_bool("t.bool", true);
  w.set_string("t.str", std::string("h\0i", 3));
  const float floats[3] = {1.5f, -2.0f, NAN};
  w.set_array("t.arr_f32", ValueType::Float32, floats, 3);
  w.set_string_array("t.arr_str", {"", "x", "\xe2\x96\x81hello"});
  const uint8_t bools[2] = {0, 1};
  w.set_array("t.arr_bool", ValueType::Bool, bools, 2);

  const std::vector<uint8_t> bytes = w.write_memory();
  const auto f = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_EQ(f->n_kv(), 15u);
  EXPECT_EQ(f->key(0), "t.u8");
  EXPECT_EQ(f->get("t.u8").u8(), 200);
  EXPECT_EQ(f->get("t.i8").i8(), -100);
  EXPECT_EQ(f->get("t.u16").u16(), 60000);
  EXPECT_EQ(f->get("t.i16").i16(), -30000);
  EXPECT_EQ(f->get("t.u32").u32(), 4000000000u);
  EXPECT_EQ(f->get("t.i32").i32(), -2000000000);
  EXPECT_EQ(f->get("t.u64").u64(), uint64_t{1} << 63);
  EXPECT_THROW(f->get("t.u64").as_int(), GgufError);
  EXPECT_EQ(f->get("t.i64").i64(), -(int64_t{1} << 62));
  EXPECT_THROW(f->get("t.i64").as_uint(), GgufError);
  EXPECT_EQ(f->get("t.f32").f32(), 0.15625f);
  EXPECT_EQ(f->get("t.f64").f64(), -2.5e300);
  EXPECT_TRUE(f->get("t.bool").boolean());
  EXPECT_EQ(f->get("t.str").str(), std::string("h\0i", 3));
  const ArrayView af = f->get("t.arr_f32").array();
  EXPECT_EQ(af.elem_type(), ValueType::Float32);
  EXPECT_EQ(af.at<float>(1), -2.0f);
  EXPECT_TRUE(std::isnan(af.at<float>(2)));
  const ArrayView as = f->get("t.arr_str").array();
  EXPECT_EQ(as.str(0), "");
  EXPECT_EQ(as.str(2), "\xe2\x96\x81hello");
  EXPECT_TRUE(f->get("t.arr_bool").array().at<bool>(1));
}

// Arrays of arrays (of strings and of numbers) need a hand-built file: the
// writer makes them only by copying.
TEST(GgufRoundTrip, ArraysOfArraysCopyThroughTheWriter) {
  GgufWriter inner;
  inner.set_string_array("s", {"ab", "c"});
  const uint32_t nums[2] = {7, 9};
  inner.set_array("n", ValueType::UInt32, nums, 2);
  // Build [[ "ab","c" ], [7, 9]] by hand from the serialized pieces.
  std::vector<uint8_t> file = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  auto put64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) file.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto put32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) file.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  put64(0);
  put64(1);
  put64(2);
  file.push_back('a');
  file.push_back('a');
  put32(9);  // array
  put32(9);  // of arrays
  put64(2);
  put32(8);  // [ "ab", "c" ]
  put64(2);
  put64(2);
  file.push_back('a');
  file.push_back('b');
  put64(1);
  file.push_back('c');
  put32(4);  // [7, 9]
  put64(2);
  put32(7);
  put32(9);
  const auto f = GgufFile::parse(file.data(), file.size());
  const ArrayView outer = f->get("aa").array();
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(outer.array(0).str(0), "ab");
  EXPECT_EQ(outer.array(0).str(1), "c");
  EXPECT_EQ(outer.array(1).at<uint32_t>(1), 9u);
  EXPECT_THROW(outer.str(0), GgufTypeError);

  GgufWriter copy;
  copy.copy_value(f->get("aa"));
  const std::vector<uint8_t> rewritten = copy.write_memory();
  EXPECT_EQ(rewritten, file);
}

TEST(GgufRoundTrip, Stories260KRewritesToTheSameMetadataAndTensorBytes) {
  const auto original = GgufFile::open(kStories);
  GgufWriter w;
  for (size_t i = 0; i < original->n_kv(); ++i) w.copy_value(original->value(i));
  for (size_t i = 0; i < original->n_tensors(); ++i) {
    const TensorInfo& t = original->tensor(i);
    w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data);
  }
  const std::vector<uint8_t> once = w.write_memory();
  const std::vector<uint8_t> twice = w.write_memory();
  EXPECT_EQ(once, twice);

  const auto again = GgufFile::parse(once.data(), once.size());
  ASSERT_EQ(again->n_kv(), original->n_kv());
  for (size_t i = 0; i < original->n_kv(); ++i) {
    EXPECT_EQ(again->key(i), original->key(i));
    GgufWriter a, b;
    a.copy_value(original->value(i));
    b.copy_value(again->value(i));
    EXPECT_EQ(a.write_memory(), b.write_memory()) << original->key(i);
  }
  ASSERT_EQ(again->n_tensors(), original->n_tensors());
  for (size_t i = 0; i < original->n_tensors(); ++i) {
    const TensorInfo& x = original->tensor(i);
    const TensorInfo& y = again->tensor(i);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.offset, y.offset);
    ASSERT_EQ(x.n_bytes, y.n_bytes);
    EXPECT_EQ(0, std::memcmp(x.data, y.data, x.n_bytes)) << x.name;
  }
  // The layout matches llama.cpp's writer byte for byte.
  ASSERT_EQ(once.size(), original->size());
  EXPECT_EQ(0, std::memcmp(once.data(), original->bytes(), once.size()));
}

TEST(GgufWriter, StreamsTensorDataThroughTheFillFunction) {
  GgufWriter w;
  const int64_t ne[2] = {32, 3};
  w.add_tensor("q", GgmlType::Q8_0, 2, ne);
  w.add_tensor("f", GgmlType::F32, 1, ne);
  std::vector<size_t> filled;
  const auto bytes = w.write_memory([&](size_t index, uint8_t* dst, uint64_t n) {
    filled.push_back(index);
    for (uint64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(index + 1);
  });
  EXPECT_EQ(filled, (std::vector<size_t>{0, 1}));
  const auto f = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_EQ(f->tensor(0).n_bytes, 3u * 34u);
  EXPECT_EQ(f->tensor(1).offset % 32, 0u);
  EXPECT_EQ(f->tensor(1).data[0], 2);
}

TEST(GgufWriter, RefusesWhatTheReaderWouldRefuse) {
  GgufWriter w;
  const int64_t ne[1] = {33};
  EXPECT_THROW(w.add_tensor("q", GgmlType::Q4_0, 1, ne), GgufError);
  EXPECT_THROW(w.add_tensor(std::string(64, 'x'), GgmlType::F32, 1, ne), GgufError);
  EXPECT_THROW(w.add_tensor("x", GgmlType::F32, 0, ne), GgufError);
  EXPECT_THROW(w.set_u32("", 1), GgufError);
  EXPECT_THROW(w.set_u32("bad\x01key", 1), GgufError);
  w.add_tensor("x", GgmlType::F32, 1, ne);
  EXPECT_THROW(w.add_tensor("x", GgmlType::F32, 1, ne), GgufError);
  EXPECT_THROW(w.write_memory(), GgufError);  // no data and no fill function
}

TEST(GgufWriter, WritesFilesAtomically) {
  const std::string path = ::testing::TempDir() + "peak_writer_test.gguf";
  GgufWriter w;
  w.set_string("general.name", "x");
  w.write_file(path);
  const auto f = GgufFile::open(path);
  EXPECT_EQ(f->get("general.name").str(), "x");
  EXPECT_THROW(w.write_file("/nonexistent-dir/out.gguf"), io::IoError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peak::gguf
