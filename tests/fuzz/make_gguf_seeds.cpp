// Writes a small seed corpus for fuzz_gguf: valid files that exercise every
// value type, arrays of strings and of arrays, several tensor types, a
// non-default alignment, version 2 and a metadata-only file.
#include <cstdio>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

using peak::gguf::GgufWriter;
using peak::gguf::ValueType;
using peak::kernels::GgmlType;

namespace {

void save(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    std::fprintf(stderr, "make_gguf_seeds: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

std::vector<uint8_t> zero_fill(const GgufWriter& w) {
  return w.write_memory([](size_t, uint8_t* dst, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(i * 7);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_gguf_seeds STORIES260K.gguf OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[2];

  GgufWriter all;
  all.set_u8("t.u8", 1);
  all.set_i8("t.i8", -1);
  all.set_u16("t.u16", 2);
  all.set_i16("t.i16", -2);
  all.set_u32("t.u32", 3);
  all.set_i32("t.i32", -3);
  all.set_u64("t.u64", 4);
  all.set_i64("t.i64", -4);
  all.set_f32("t.f32", 0.5f);
  all.set_f64("t.f64", 0.25);
  all.set_bool("t.bool", true);
  all.set_string("t.str", "hello");
  const int32_t ints[3] = {1, 2, 3};
  all.set_array("t.ints", ValueType::Int32, ints, 3);
  const uint8_t bools[2] = {0, 1};
  all.set_array("t.bools", ValueType::Bool, bools, 2);
  all.set_string_array("t.strs", {"a", "", "\xe2\x96\x81x"});
  const int64_t ne[2] = {32, 2};
  all.add_tensor("f32", GgmlType::F32, 2, ne);
  all.add_tensor("q8", GgmlType::Q8_0, 2, ne);
  save(out, "all_types.gguf", zero_fill(all));

  // The real tokenizer metadata of stories260K with tiny tensors of common types.
  const auto stories = peak::gguf::GgufFile::open(argv[1]);
  GgufWriter meta;
  for (size_t i = 0; i < stories->n_kv(); ++i) meta.copy_value(stories->value(i));
  save(out, "metadata_only.gguf", meta.write_memory());
  const int64_t k_ne[2] = {256, 1};
  meta.add_tensor("token_embd.weight", GgmlType::Q4_K, 2, k_ne);
  meta.add_tensor("output.weight", GgmlType::Q6_K, 2, k_ne);
  meta.add_tensor("blk.0.attn_q.weight", GgmlType::Q4_0, 2, ne);
  save(out, "stories_meta.gguf", zero_fill(meta));

  GgufWriter aligned;
  aligned.set_u32("general.alignment", 64);
  aligned.add_tensor("a", GgmlType::F16, 2, ne);
  aligned.add_tensor("b", GgmlType::BF16, 1, ne);
  save(out, "aligned64.gguf", zero_fill(aligned));

  // Version 2 differs only in the version field.
  std::vector<uint8_t> v2 = zero_fill(aligned);
  v2[4] = 2;
  save(out, "version2.gguf", v2);

  // [[1, 2], ["x"]]: an array of arrays, which the writer only copies.
  const std::vector<uint8_t> nested = {
      'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
      1, 0, 0, 0, 0, 0, 0, 0, 'n',
      9, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
      4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0,
      8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 'x'};
  save(out, "nested.gguf", nested);
  return 0;
}
