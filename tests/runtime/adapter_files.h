// Adapter files for tests, written here whatever their content (well-formed
// or not), and the weights a merged adapter gives, computed in double
// precision from the files alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "kernels/ggml_type.h"

namespace peak::test {

struct TestTensor {
  std::string name;
  kernels::GgmlType type = kernels::GgmlType::F32;
  std::vector<int64_t> ne;
  std::vector<float> values;  // ne's product of them, converted to `type`
};

// Writes a GGUF of `keys` (applied to an empty writer) and `tensors` to the
// test's temp folder; returns its path.
std::string write_test_gguf(const std::string& stem, const std::function<void(gguf::GgufWriter&)>& keys,
                            const std::vector<TestTensor>& tensors);

// N(0, stddev²) values, the same for a seed everywhere.
std::vector<float> random_values(size_t n, float stddev, uint64_t seed);

struct AdapterUse {
  std::string path;
  double scale = 1.0;
};

// base's matrix `name` (F32, ggml [n_in, n_out], row j = output j) plus, for
// each adapter that has a pair for it, scale·alpha/rank·B·A (scale alone when
// alpha is 0), A and B read from the file in any type.
std::vector<double> merged_matrix(const gguf::GgufFile& base, const std::string& name,
                                  const std::vector<AdapterUse>& adapters);

}  // namespace peak::test
