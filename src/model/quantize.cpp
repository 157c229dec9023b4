#include "model/quantize.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/model.h"
#include "model/quant_policy.h"
#include "model/tensor_check.h"

namespace peak::model {

using kernels::ggml_row_bytes;
using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::TypeKernels;

namespace {

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// Converts rows [begin, end) of `src` into `dst_type` rows at `dst`. Returns
// false, leaving the rest unconverted, at a row holding NaN or Inf when the type
// changes: quantizing it would give finite nonsense (a block's scale comes from
// its largest magnitude, which skips NaN), hiding a broken file.
bool convert_rows(const gguf::TensorInfo& src, GgmlType dst_type, uint8_t* dst, int64_t begin, int64_t end) {
  const int64_t n = src.ne[0];
  const size_t src_row = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(src.type), static_cast<uint64_t>(n)));
  const size_t dst_row = static_cast<size_t>(ggml_row_bytes(static_cast<uint32_t>(dst_type), static_cast<uint64_t>(n)));
  const TypeKernels& from = kernels_for(src.type);
  const TypeKernels& to = kernels_for(dst_type);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* in = src.data + static_cast<size_t>(r) * src_row;
    uint8_t* out = dst + static_cast<size_t>(r) * dst_row;
    if (src.type == GgmlType::F32) {
      std::memcpy(row.data(), in, src_row);
    } else {
      from.to_float(in, row.data(), n);
    }
    if (dst_type != src.type && !std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); })) {
      return false;
    }
    if (dst_type == GgmlType::F32) {
      std::memcpy(out, row.data(), dst_row);
    } else {
      to.from_float(row.data(), out, n);
    }
  }
  return true;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return a == b ||
         (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

void quantize_model(const std::string& input_path, const std::string& output_path, const QuantizeOptions& options) {
  const FileType file_type = parse_file_type(options.type);
  if (file_type.llama_ftype == 0 && file_type.base != GgmlType::F32 && !options.pure) {
    throw std::invalid_argument("'" + options.type + "' is a tensor type, not a file type: use it with --pure, or "
                                "pick a file type such as Q4_K_M");
  }
  if (same_file(input_path, output_path)) {
    throw std::invalid_argument("refusing to overwrite the input '" + input_path + "'");
  }
  const auto input = gguf::GgufFile::open(input_path);
  const HParams hp = read_hparams(*input);
  ModelLayout layout;
  layout.n_layer = hp.n_layer;
  layout.n_head = hp.n_head;
  layout.n_head_kv = hp.n_head_kv;
  layout.has_output = input->find_tensor("output.weight") != nullptr;
  const QuantPolicy policy(file_type, layout, options.pure);

  gguf::GgufWriter w;
  for (size_t i = 0; i < input->n_kv(); ++i) w.copy_value(input->value(i));
  w.set_u32("general.file_type", file_type.llama_ftype);
  w.set_u32("general.quantization_version", 2);

  std::vector<GgmlType> out_types;
  for (size_t i = 0; i < input->n_tensors(); ++i) {
    const gguf::TensorInfo& t = input->tensor(i);
    const std::string name(t.name);
    GgmlType target = policy.type_for(name, t.n_dims, t.ne[0]);
    if (QuantPolicy::stays_float(name) && is_float_type(t.type)) target = t.type;
    if (!is_float_type(t.type)) {
      if (t.type != target && t.n_dims > 1) {
        throw std::invalid_argument("tensor '" + std::string(t.name) + "' is already " +
                                    ggml_type_name(static_cast<uint32_t>(t.type)) +
                                    ": quantize from an F32, F16 or BF16 model");
      }
      target = t.type;  // copied as it is
    }
    const TypeKernels& k = kernels_for(target);
    if (target != t.type && target != GgmlType::F32 && !k.from_float) {
      throw std::invalid_argument(std::string("peak cannot write ") + ggml_type_name(static_cast<uint32_t>(target)) + " tensors");
    }
    out_types.push_back(target);
    w.add_tensor(t.name, target, t.n_dims, t.ne, target == t.type ? t.data : nullptr);
  }

  const int n_threads = options.n_threads > 0 ? options.n_threads : core::hardware_threads();
  size_t done = 0;
  const size_t total = static_cast<size_t>(std::count_if(out_types.begin(), out_types.end(), [&, i = size_t{0}](GgmlType t) mutable {
    return t != input->tensor(i++).type;
  }));
  w.write_file(output_path, [&](size_t index, uint8_t* dst, uint64_t) {
    const gguf::TensorInfo& t = input->tensor(index);
    const int64_t rows = t.n_elements() / t.ne[0];
    const int64_t per_thread = (rows + n_threads - 1) / n_threads;
    std::vector<char> finite(static_cast<size_t>(n_threads), 1);  // per thread
    std::vector<std::thread> workers;
    for (int th = 1; th < n_threads && th * per_thread < rows; ++th) {
      workers.emplace_back([&, th] {
        finite[static_cast<size_t>(th)] =
            convert_rows(t, out_types[index], dst, th * per_thread, std::min(rows, (th + 1) * per_thread));
      });
    }
    finite[0] = convert_rows(t, out_types[index], dst, 0, std::min(rows, per_thread));
    for (std::thread& th : workers) th.join();
    // Names the tensor and the first non-finite element.
    if (std::count(finite.begin(), finite.end(), 0) != 0) require_finite(t);
    ++done;
    if (options.progress && !options.progress(static_cast<float>(done) / static_cast<float>(total))) {
      throw LoadCancelled();
    }
  });
}

}  // namespace peak::model
