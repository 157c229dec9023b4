#include "model/weight_repack.h"

#include <new>

#include "kernels/kernels.h"

namespace peak::model {

namespace {

constexpr size_t kAlignment = 64;  // the kernels load whole cache lines

bool repackable(const core::Tensor* t) {
  return t != nullptr && kernels_for(t->type).repack != nullptr && t->ne[1] % kRepackRows == 0 && t->ne[2] == 1 &&
         t->ne[3] == 1 && t->is_contiguous();
}

}  // namespace

void WeightRepacker::Free::operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t{kAlignment}); }

WeightRepacker::WeightRepacker(const ModelWeights& w, const gguf::GgufFile& file) {
  const io::MappedFile* mapping = file.mapping();
  if (mapping == nullptr || !mapping->is_mapped() || mapping->is_locked()) return;
  size_t total = 0;
  const auto choose = [&](core::Tensor* t) {
    if (!repackable(t) || slots_.count(t->data) != 0) return;
    slots_.emplace(t->data, Slot{t, total});
    total += (t->byte_size() + kAlignment - 1) / kAlignment * kAlignment;
  };
  for (const LayerWeights& l : w.layers) {
    for (core::Tensor* t : {l.wq, l.wk, l.wv, l.wqkv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) choose(t);
  }
  if (!w.tied_output) choose(w.output);
  if (total == 0) return;
  memory_.reset(static_cast<uint8_t*>(::operator new(total, std::align_val_t{kAlignment})));
}

bool WeightRepacker::repack(const gguf::TensorInfo& info, const gguf::GgufFile& file) {
  const auto it = slots_.find(info.data);
  if (it == slots_.end()) return false;
  core::Tensor& t = *it->second.tensor;
  uint8_t* dst = memory_.get() + it->second.offset;
  kernels_for(t.type).repack(t.data, dst, t.ne[0], t.ne[1]);
  t.data = dst;
  t.repacked = true;
  file.mapping()->release(static_cast<size_t>(file.data_offset() + info.offset), static_cast<size_t>(info.n_bytes));
  return true;
}

}  // namespace peak::model
