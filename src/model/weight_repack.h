// Weight matrices the kernels read faster in their own layout (kernels.h,
// TypeKernels::repack; today Q4_0 on the AVX-512 path, whose decode GEMVs
// otherwise spend most of their time transposing, and Q4_0 and Q8_0 on every
// arm64 path, whose 128-bit kernels then multiply 4 rows per instruction).
// Only matrices that nothing but mul_mat reads are repacked: the layer
// projections and a separate output matrix, never the token embedding
// (get_rows reads its rows).
//
// Several threads repack at once, taking pieces of whole row groups
// (kRepackRows rows, about 2 MiB) in file order; each maps its piece's pages in
// before writing them. The repacked bytes live in memory the model owns
// (io::PageMemory). The file pages of a matrix are dropped from the process
// once its last piece is done, so a mapped model's resident size stays about
// the file size, and made unreadable once the threads are done (doing that
// earlier stalled their page faults: io::MappedFile::release). A file read into
// memory or locked in RAM keeps the stored layout (repacking it would hold both
// copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/tensor.h"
#include "gguf/gguf_reader.h"
#include "io/page_memory.h"
#include "model/weights.h"

namespace peak::model {

class WeightRepacker {
 public:
  // Chooses the tensors of `w` to repack and allocates room for them.
  WeightRepacker(const ModelWeights& w, const gguf::GgufFile& file);

  // Whether `info` holds one of the chosen tensors.
  bool chosen(const gguf::TensorInfo& info) const { return chosen_data_.count(info.data) != 0; }

  // Repacks the chosen tensors on up to n_threads threads, the calling thread
  // among them (none outlives the call), points their descriptors at the
  // repacked bytes and releases their file pages. After each of its pieces, and
  // at the end, the calling thread calls progress(bytes repacked so far). When
  // that returns false, the threads stop after their current pieces and run
  // returns false with the descriptors unchanged (reading the file as stored).
  // An exception from progress is rethrown the same way.
  bool run(int n_threads, const std::function<bool(uint64_t)>& progress);

  // The repacked bytes; the model keeps them as long as its descriptors.
  std::unique_ptr<io::PageMemory> take_memory() { return std::move(memory_); }

 private:
  struct Slot {
    core::Tensor* tensor;
    size_t offset;  // in memory_
  };
  struct Piece;
  struct Job;
  static void work(void* job, int thread_index, int n_threads);
  // Where a chosen tensor's data starts in the mapped file.
  size_t file_offset(const core::Tensor& t) const;

  const gguf::GgufFile& file_;
  std::vector<Slot> slots_;  // in file order
  std::unordered_set<const void*> chosen_data_;
  std::unique_ptr<io::PageMemory> memory_;
};

}  // namespace peak::model
