#include "model/lora_merge.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "kernels/kernels.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "model/model_error.h"
#include "model/quantize.h"

namespace peak::model {

using kernels::ggml_row_bytes;
using kernels::ggml_type_from_name;
using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;

namespace {

// Rows of a tensor as floats, whatever its type.
void read_rows(const core::Tensor& t, int64_t first, int64_t count, float* out) {
  for (int64_t r = first; r < first + count; ++r) {
    const char* src = t.row_ptr(r);
    float* dst = out + (r - first) * t.ne[0];
    if (t.type == GgmlType::F32) {
      std::memcpy(dst, src, static_cast<size_t>(t.ne[0]) * sizeof(float));
    } else {
      kernels_for(t.type).to_float(src, dst, t.ne[0]);
    }
  }
}

// Rows [begin, end) of W + s·B·A into `dst` rows of `type`; false at a row
// that is not finite.
bool merge_rows(const core::Tensor& w, const LoraPair& pair, const std::vector<float>& a, float s, GgmlType type,
                uint8_t* dst, int64_t begin, int64_t end) {
  const int64_t n_in = w.ne[0], rank = pair.rank;
  const size_t row_bytes = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(type), static_cast<uint64_t>(n_in)));
  std::vector<float> row(static_cast<size_t>(n_in)), b(static_cast<size_t>(rank));
  for (int64_t j = begin; j < end; ++j) {
    read_rows(w, j, 1, row.data());
    read_rows(*pair.b, j, 1, b.data());  // B [rank, n_out]: row j holds output j's rank weights
    for (int64_t r = 0; r < rank; ++r) {
      const float c = s * b[static_cast<size_t>(r)];
      const float* a_row = &a[static_cast<size_t>(r * n_in)];
      for (int64_t i = 0; i < n_in; ++i) row[static_cast<size_t>(i)] += c * a_row[i];
    }
    if (!std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); })) return false;
    uint8_t* out = dst + static_cast<size_t>(j) * row_bytes;
    if (type == GgmlType::F32) {
      std::memcpy(out, row.data(), row_bytes);
    } else {
      kernels_for(type).from_float(row.data(), out, n_in);
    }
  }
  return true;
}

}  // namespace

void merge_lora(const std::string& base_path, const std::string& adapter_path, const std::string& output_path,
                const LoraMergeOptions& options) {
  if (same_file(base_path, output_path) || same_file(adapter_path, output_path)) {
    throw std::invalid_argument("refusing to overwrite an input with the merged model '" + output_path + "'");
  }
  if (!std::isfinite(options.scale)) throw std::invalid_argument("the scale must be a finite number");
  GgmlType forced = GgmlType::F32;
  const bool force_type = !options.type.empty();
  if (force_type) {
    if (!ggml_type_from_name(options.type.c_str(), &forced) ||
        (forced != GgmlType::F32 && (!kernels_for(forced).from_float || !kernels_for(forced).vec_dot))) {
      throw std::invalid_argument("'" + options.type + "' is not a type peak writes matrices in (F32, F16, Q8_0 ...)");
    }
  }
  LoadOptions load;
  load.repack_weights = false;  // read as stored
  const std::unique_ptr<Model> base = Model::load(base_path, load);
  const std::shared_ptr<const LoraAdapter> adapter = LoraAdapter::load(*base, adapter_path);
  const gguf::GgufFile& f = base->file();

  struct Merge {
    const core::Tensor* w = nullptr;  // null: copied as it is
    const LoraPair* pair = nullptr;
    GgmlType type = GgmlType::F32;
  };
  std::vector<Merge> merges(f.n_tensors());
  gguf::GgufWriter writer;
  for (size_t i = 0; i < f.n_kv(); ++i) writer.copy_value(f.value(i));
  size_t n_merged = 0;
  for (size_t i = 0; i < f.n_tensors(); ++i) {
    const gguf::TensorInfo& t = f.tensor(i);
    Merge& m = merges[i];
    if (const auto target = parse_lora_target(t.name)) {
      m.pair = target->layer < base->hparams().n_layer ? adapter->pair(target->layer, target->projection) : nullptr;
      if (m.pair) {
        m.w = projection_weight(base->weights().layers[static_cast<size_t>(target->layer)], target->projection);
        m.type = force_type ? forced : t.type;
        if (m.type != GgmlType::F32 && !kernels_for(m.type).from_float) {
          throw std::invalid_argument(std::string("peak cannot write ") + ggml_type_name(static_cast<uint32_t>(m.type)) +
                                      " tensors ('" + std::string(t.name) + "'): pick one with --type");
        }
        if (t.ne[0] % core::type_block_elements(m.type) != 0) {
          throw std::invalid_argument("'" + std::string(t.name) + "' has rows of " + std::to_string(t.ne[0]) +
                                      " elements, which " + ggml_type_name(static_cast<uint32_t>(m.type)) +
                                      " blocks do not divide");
        }
        ++n_merged;
      }
    }
    writer.add_tensor(t.name, m.pair ? m.type : t.type, t.n_dims, t.ne, m.pair ? nullptr : t.data);
  }

  const int n_threads = options.n_threads > 0 ? options.n_threads : core::hardware_threads();
  size_t done = 0;
  writer.write_file(output_path, [&](size_t index, uint8_t* dst, uint64_t) {
    const Merge& m = merges[index];
    const core::Tensor& w = *m.w;
    const float s = options.scale * m.pair->alpha_scale;
    std::vector<float> a(static_cast<size_t>(m.pair->rank * w.ne[0]));
    read_rows(*m.pair->a, 0, m.pair->rank, a.data());  // A [n_in, rank]: row r holds n_in values
    const int64_t rows = w.ne[1];
    const int64_t per_thread = (rows + n_threads - 1) / n_threads;
    std::vector<char> finite(static_cast<size_t>(n_threads), 1);
    std::vector<std::thread> workers;
    for (int th = 1; th < n_threads && th * per_thread < rows; ++th) {
      workers.emplace_back([&, th] {
        finite[static_cast<size_t>(th)] =
            merge_rows(w, *m.pair, a, s, m.type, dst, th * per_thread, std::min(rows, (th + 1) * per_thread));
      });
    }
    finite[0] = merge_rows(w, *m.pair, a, s, m.type, dst, 0, std::min(rows, per_thread));
    for (std::thread& t : workers) t.join();
    if (std::count(finite.begin(), finite.end(), 0) != 0) {
      throw InvalidModel("merging the adapter into '" + std::string(f.tensor(index).name) +
                         "' gives values that are not finite");
    }
    ++done;
    if (options.progress && !options.progress(static_cast<float>(done) / static_cast<float>(n_merged))) {
      throw LoadCancelled();
    }
  });
}

}  // namespace peak::model
