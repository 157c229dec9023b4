// Our quantizers and dequantizers against llama.cpp's output on the same model:
// /work/shared/reference/quant/<TYPE>.gguf is source-f16.gguf quantized by
// llama-quantize --pure. Legacy types (and BF16, F32) must match byte for byte;
// the K and IQ4 types, whose search is not fixed by the format, must come
// within a few percent of llama.cpp's error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"

namespace peak {

using kernels::ggml_row_bytes;
using kernels::ggml_type_from_name;
using kernels::GgmlType;
using kernels::Isa;
using kernels::kernels_for_isa;
using kernels::TypeKernels;

namespace {

const std::string kQuantDir = std::string(PEAK_SHARED_DIR) + "/reference/quant/";

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

std::vector<float> tensor_to_float(const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  kernels_for_isa(t.type, Isa::Scalar).to_float(t.data, out.data(), t.n_elements());
  return out;
}

double squared_error(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
  return sum;
}

struct RefCase {
  const char* type_name;
  bool byte_exact;
  double max_error_ratio;  // our squared error / llama.cpp's, for non-exact types
};

class ReferenceQuant : public ::testing::TestWithParam<RefCase> {};

TEST_P(ReferenceQuant, MatchesLlamaCpp) {
  const RefCase& c = GetParam();
  const std::string ref_path = kQuantDir + c.type_name + ".gguf";
  if (!file_exists(ref_path)) GTEST_SKIP() << "missing " << ref_path;
  GgmlType type;
  ASSERT_TRUE(ggml_type_from_name(c.type_name, &type));
  const auto source = gguf::GgufFile::open(kQuantDir + "source-f16.gguf");
  const auto ref = gguf::GgufFile::open(ref_path);
  const TypeKernels& k = kernels_for_isa(type, Isa::Scalar);
  ASSERT_NE(k.from_float, nullptr);
  int compared = 0;
  double ours_err = 0.0, theirs_err = 0.0, signal = 0.0;
  for (size_t i = 0; i < ref->n_tensors(); ++i) {
    const gguf::TensorInfo& rt = ref->tensor(i);
    if (rt.n_dims != 2) continue;
    const gguf::TensorInfo* st = source->find_tensor(rt.name);
    ASSERT_NE(st, nullptr) << rt.name;
    ASSERT_EQ(rt.type, type) << rt.name;
    const std::vector<float> x = tensor_to_float(*st);
    std::vector<uint8_t> ours(rt.n_bytes);
    const int64_t row = rt.ne[0];
    const uint64_t row_bytes = ggml_row_bytes(static_cast<uint32_t>(type), static_cast<uint64_t>(row));
    for (int64_t r = 0; r < rt.ne[1]; ++r) {
      k.from_float(x.data() + r * row, ours.data() + static_cast<size_t>(r) * row_bytes, row);
    }
    const std::vector<float> theirs_f = tensor_to_float(rt);
    std::vector<float> ours_f(x.size());
    k.to_float(ours.data(), ours_f.data(), static_cast<int64_t>(x.size()));
    if (c.byte_exact) {
      size_t first_diff = 0;
      while (first_diff < ours.size() && ours[first_diff] == rt.data[first_diff]) ++first_diff;
      EXPECT_EQ(first_diff, ours.size()) << rt.name << ": first differing byte " << first_diff << " of "
                                         << ours.size();
    }
    ours_err += squared_error(ours_f, x);
    theirs_err += squared_error(theirs_f, x);
    for (float v : x) signal += static_cast<double>(v) * v;
    ++compared;
  }
  EXPECT_GT(compared, 0);
  const double ratio = theirs_err > 0 ? ours_err / theirs_err : 1.0;
  std::printf("[ %-6s ] NMSE ours %.3e, llama.cpp %.3e, ratio %.3f over %d tensors\n", c.type_name,
              ours_err / signal, theirs_err / signal, ratio, compared);
  if (!c.byte_exact) {
    EXPECT_LE(ratio, c.max_error_ratio);
    // Far below 1 would mean our dequantizer misreads llama.cpp's blocks.
    EXPECT_GE(ratio, 0.8);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReferenceQuant,
                         ::testing::Values(RefCase{"F32", true, 1.0}, RefCase{"BF16", true, 1.0},
                                           RefCase{"Q4_0", true, 1.0}, RefCase{"Q4_1", true, 1.0},
                                           RefCase{"Q5_0", true, 1.0}, RefCase{"Q5_1", true, 1.0},
                                           RefCase{"Q8_0", true, 1.0}, RefCase{"Q2_K", false, 1.10},
                                           RefCase{"Q3_K", false, 1.10}, RefCase{"Q4_K", false, 1.10},
                                           RefCase{"Q5_K", false, 1.10}, RefCase{"Q6_K", false, 1.10},
                                           RefCase{"IQ4_NL", false, 1.10}, RefCase{"IQ4_XS", false, 1.10}),
                         [](const ::testing::TestParamInfo<RefCase>& p) { return std::string(p.param.type_name); });

}  // namespace
}  // namespace peak
