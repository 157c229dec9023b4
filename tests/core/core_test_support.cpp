#include "core_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/kernels.h"

namespace peak::core::testing {

using kernels::GgmlType;
using kernels::kernels_for;

ThreadPool& test_pool() {
  static ThreadPool pool(kMaxTestThreads);
  return pool;
}

Dense::Dense(const int64_t (&shape)[kMaxDims]) {
  for (int d = 0; d < kMaxDims; ++d) ne[d] = shape[d];
  values.assign(static_cast<size_t>(ne[0] * ne[1] * ne[2] * ne[3]), 0.0);
}

Dense swap_axes(const Dense& d, int axis_a, int axis_b) {
  int64_t shape[kMaxDims] = {d.ne[0], d.ne[1], d.ne[2], d.ne[3]};
  std::swap(shape[axis_a], shape[axis_b]);
  Dense out(shape);
  int64_t i[kMaxDims];
  for (i[3] = 0; i[3] < d.ne[3]; ++i[3])
    for (i[2] = 0; i[2] < d.ne[2]; ++i[2])
      for (i[1] = 0; i[1] < d.ne[1]; ++i[1])
        for (i[0] = 0; i[0] < d.ne[0]; ++i[0]) {
          int64_t j[kMaxDims] = {i[0], i[1], i[2], i[3]};
          std::swap(j[axis_a], j[axis_b]);
          out.at(j[0], j[1], j[2], j[3]) = d.at(i[0], i[1], i[2], i[3]);
        }
  return out;
}

Dense read_dense(const Tensor& t) {
  Dense out(t.ne);
  std::vector<float> row(static_cast<size_t>(t.ne[0]));
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        const char* p = t.row_ptr(i1, i2, i3);
        if (t.type == GgmlType::F32) {
          for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
            float v;
            std::memcpy(&v, p + static_cast<size_t>(i0) * t.nb[0], sizeof v);
            row[static_cast<size_t>(i0)] = v;
          }
        } else if (t.type == GgmlType::I32) {
          for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
            int32_t v;
            std::memcpy(&v, p + static_cast<size_t>(i0) * t.nb[0], sizeof v);
            row[static_cast<size_t>(i0)] = static_cast<float>(v);
          }
        } else {
          kernels_for(t.type).to_float(p, row.data(), t.ne[0]);
        }
        for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) out.at(i0, i1, i2, i3) = row[static_cast<size_t>(i0)];
      }
    }
  }
  return out;
}

double nmse(const Dense& expected, const Dense& actual) {
  double error = 0.0;
  double norm = 0.0;
  for (size_t i = 0; i < expected.values.size(); ++i) {
    const double d = actual.values[i] - expected.values[i];
    error += d * d;
    norm += expected.values[i] * expected.values[i];
  }
  if (norm == 0.0) return error;
  return error / norm;
}

double partner_bound(GgmlType type) {
  switch (kernels_for(type).dot_partner) {
    case GgmlType::F32: return 1e-10;
    case GgmlType::F16: return kF16Partner;
    default: return kQ8Partner;
  }
}

Tensor* Leaves::with_memory(GgmlType type, std::initializer_list<int64_t> ne) {
  Tensor* t = arena_.new_tensor(type, ne);
  auto memory = std::make_unique<AlignedBuffer>();
  memory->resize(t->byte_size() + 1);
  t->data = memory->data();
  memory_.push_back(std::move(memory));
  return t;
}

Tensor* Leaves::random(GgmlType type, std::initializer_list<int64_t> ne, float lo, float hi) {
  Tensor* t = with_memory(type, ne);
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> row(static_cast<size_t>(t->ne[0]));
  for (int64_t r = 0; r < t->row_count(); ++r) {
    for (float& v : row) v = uniform(rng_);
    char* dst = static_cast<char*>(t->data) + static_cast<size_t>(r) * t->nb[1];
    kernels_for(type).from_float(row.data(), dst, t->ne[0]);
  }
  return t;
}

Tensor* Leaves::zeros(GgmlType type, std::initializer_list<int64_t> ne) {
  Tensor* t = with_memory(type, ne);
  std::memset(t->data, 0, t->byte_size());
  return t;
}

Tensor* Leaves::shape_only(GgmlType type, std::initializer_list<int64_t> ne) {
  return arena_.new_tensor(type, ne);
}

Tensor* Leaves::ids(const std::vector<int32_t>& values) {
  Tensor* t = with_memory(GgmlType::I32, {static_cast<int64_t>(values.size())});
  std::memcpy(t->data, values.data(), values.size() * sizeof(int32_t));
  return t;
}

Dense compute_once(const std::function<Tensor*(Graph&)>& build, int n_threads, ThreadPool& pool) {
  Graph graph(256);
  Tensor* result = build(graph);
  graph.output(result);
  GraphAllocator allocator;
  allocator.reserve(graph, n_threads);
  compute_graph(graph, pool, n_threads, allocator.work_buffer());
  return read_dense(*result);
}

void expect_graph_matches(const std::function<Tensor*(Graph&)>& build, const Dense& expected,
                          double max_nmse) {
  for (int n_threads = 1; n_threads <= kMaxTestThreads; ++n_threads) {
    const Dense actual = compute_once(build, n_threads);
    ASSERT_EQ(actual.values.size(), expected.values.size());
    for (int d = 0; d < kMaxDims; ++d) ASSERT_EQ(actual.ne[d], expected.ne[d]) << "dimension " << d;
    const double error = nmse(expected, actual);
    EXPECT_LE(error, max_nmse) << "with " << n_threads << " threads";
    EXPECT_FALSE(std::isnan(error)) << "with " << n_threads << " threads";
  }
}

}  // namespace peak::core::testing
