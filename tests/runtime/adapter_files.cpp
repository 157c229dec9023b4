#include "adapter_files.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "kernels/kernels.h"
#include "model/synth_random.h"
#include "tiny_models.h"

namespace peak::test {

using kernels::ggml_row_bytes;
using kernels::GgmlType;
using kernels::kernels_for;

std::string write_test_gguf(const std::string& stem, const std::function<void(gguf::GgufWriter&)>& keys,
                            const std::vector<TestTensor>& tensors) {
  gguf::GgufWriter w;
  if (keys) keys(w);
  std::vector<std::vector<uint8_t>> data;
  for (const TestTensor& t : tensors) {
    int64_t ne[4] = {1, 1, 1, 1};
    for (size_t d = 0; d < t.ne.size(); ++d) ne[d] = t.ne[d];
    const size_t row_bytes = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(t.type), static_cast<uint64_t>(ne[0])));
    const size_t rows = static_cast<size_t>(ne[1] * ne[2] * ne[3]);
    std::vector<uint8_t> bytes(row_bytes * rows);
    for (size_t r = 0; r < rows && !t.values.empty(); ++r) {
      const float* row = t.values.data() + r * static_cast<size_t>(ne[0]);
      if (t.type == GgmlType::F32) {
        std::memcpy(bytes.data() + r * row_bytes, row, row_bytes);
      } else {
        kernels_for(t.type).from_float(row, bytes.data() + r * row_bytes, ne[0]);
      }
    }
    data.push_back(std::move(bytes));
    w.add_tensor(t.name, t.type, static_cast<uint32_t>(t.ne.size()), ne, data.back().data());
  }
  const std::string path = test_temp_path(stem);
  w.write_file(path);
  return path;
}

std::vector<float> random_values(size_t n, float stddev, uint64_t seed) {
  model::SplitMix64 rng{seed};
  std::vector<float> v(n);
  for (float& x : v) x = rng.normal() * stddev;
  return v;
}

namespace {

std::vector<double> read_values(const gguf::TensorInfo& t) {
  std::vector<float> f(static_cast<size_t>(t.n_elements()));
  const size_t row_bytes = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(t.type), static_cast<uint64_t>(t.ne[0])));
  for (int64_t r = 0; r < t.n_elements() / t.ne[0]; ++r) {
    const uint8_t* src = t.data + static_cast<size_t>(r) * row_bytes;
    float* dst = f.data() + r * t.ne[0];
    if (t.type == GgmlType::F32) {
      std::memcpy(dst, src, row_bytes);
    } else {
      kernels_for(t.type).to_float(src, dst, t.ne[0]);
    }
  }
  return std::vector<double>(f.begin(), f.end());
}

}  // namespace

std::vector<double> merged_matrix(const gguf::GgufFile& base, const std::string& name,
                                  const std::vector<AdapterUse>& adapters) {
  const gguf::TensorInfo* w = base.find_tensor(name);
  if (!w) throw std::runtime_error("no base tensor " + name);
  std::vector<double> merged = read_values(*w);
  const auto n_in = static_cast<size_t>(w->ne[0]), n_out = static_cast<size_t>(w->ne[1]);
  for (const AdapterUse& use : adapters) {
    const auto file = gguf::GgufFile::open(use.path);
    const gguf::TensorInfo* a = file->find_tensor(name + ".lora_a");
    const gguf::TensorInfo* b = file->find_tensor(name + ".lora_b");
    if (!a || !b) continue;
    const auto rank = static_cast<size_t>(a->ne[1]);
    const auto alpha_value = file->find("adapter.lora.alpha");
    const double alpha = alpha_value ? alpha_value->as_float() : 0.0;
    const double scale = alpha != 0.0 ? use.scale * alpha / static_cast<double>(rank) : use.scale;
    const std::vector<double> av = read_values(*a), bv = read_values(*b);
    // A [n_in, rank]: row r holds n_in values; B [rank, n_out]: row j holds rank values.
    for (size_t j = 0; j < n_out; ++j) {
      for (size_t i = 0; i < n_in; ++i) {
        double delta = 0;
        for (size_t r = 0; r < rank; ++r) delta += bv[j * rank + r] * av[r * n_in + i];
        merged[j * n_in + i] += scale * delta;
      }
    }
  }
  return merged;
}

}  // namespace peak::test
