#include "model/projector.h"

#include <cstring>

#include "kernels/kernels.h"
#include "model/model_error.h"
#include "model/tensor_check.h"

namespace peak::model {

std::unique_ptr<Projector> Projector::load(const std::string& path, const LoadOptions& options) {
  return load(io::FileSource::path(path), options);
}

std::unique_ptr<Projector> Projector::load(const io::FileSource& source, const LoadOptions& options) {
  Model::check_source(source, options);
  io::MapOptions map;
  map.use_mmap = options.use_mmap;
  map.lock = options.use_mlock;
  std::unique_ptr<Projector> p(new Projector());
  p->read_layout(source, map, /*check_values=*/true);
  if (options.check_tensors) require_all_finite(*p->file_);
  if (p->hparams_.spec().connector == VisionConnector::MeanNormProject) p->transpose_projector(/*copy_values=*/true);
  return p;
}

std::unique_ptr<Projector> Projector::load_layout(const io::FileSource& source) {
  std::unique_ptr<Projector> p(new Projector());
  p->read_layout(source, io::MapOptions{}, /*check_values=*/false);  // mapped: only the metadata's pages are read
  if (p->hparams_.spec().connector == VisionConnector::MeanNormProject) p->transpose_projector(/*copy_values=*/false);
  return p;
}

void Projector::read_layout(const io::FileSource& source, const io::MapOptions& map, bool check_values) {
  file_ = gguf::GgufFile::open(source, map);
  hparams_ = read_projector_hparams(*file_);
  weights_ = bind_weights(*file_, hparams_, check_values);
  for (size_t i = 0; i < file_->n_tensors(); ++i) {
    n_params_ += static_cast<uint64_t>(file_->tensor(i).n_elements());
    weight_bytes_ += file_->tensor(i).n_bytes;
  }
}

void Projector::transpose_projector(bool copy_values) {
  const Tensor* stored = weights_.projector;  // [n_out, n_in]: element (o, i) at o + n_out i
  const kernels::GgmlType type = stored->type;
  size_t element = 0;
  switch (type) {
    case kernels::GgmlType::F32: element = 4; break;
    case kernels::GgmlType::F16:
    case kernels::GgmlType::BF16: element = 2; break;
    default:
      throw UnsupportedModel(std::string("tensor 'mm.input_projection.weight' has type ") +
                             kernels::ggml_type_name(static_cast<uint32_t>(type)) +
                             "; a projector matrix must be F32, F16 or BF16 (it is transposed at load)");
  }
  const int64_t n_out = stored->ne[0], n_in = stored->ne[1];
  transposed_bytes_ = static_cast<uint64_t>(n_out * n_in) * element;
  Tensor* t = transposed_descriptor_.new_tensor(type, {n_in, n_out});
  t->set_name("%s", "mm.input_projection.weight (transposed)");
  weights_.projector = t;
  if (!copy_values) return;
  transposed_.resize(static_cast<size_t>(transposed_bytes_));
  const auto* src = static_cast<const uint8_t*>(stored->data);
  auto* dst = static_cast<uint8_t*>(transposed_.data());
  for (int64_t o = 0; o < n_out; ++o) {
    for (int64_t i = 0; i < n_in; ++i) {
      std::memcpy(dst + static_cast<size_t>(o * n_in + i) * element, src + static_cast<size_t>(i * n_out + o) * element,
                  element);
    }
  }
  t->data = transposed_.data();
}

}  // namespace peak::model
