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
// (io::PageMemory). A matrix is published (core::Tensor::repacked_data) once
// its last piece is done, and its file pages are then dropped from the process,
// so a mapped model's resident size stays about the file size; they are made
// unreadable once nothing can still read them as stored (doing that earlier
// stalled the page faults of the repacking threads: io::MappedFile::release).
// A file read into memory or locked in RAM keeps the stored layout (repacking
// it would hold both copies).
//
// Repacking can run during the load (run) or after it, in the background
// (start): mapping in the new memory is most of its cost, and the first prompt
// need not wait for it. Until a matrix is published mul_mat reads its stored
// rows, with bit-identical results, so a context may run meanwhile. Forward
// passes announce themselves (begin_reads, end_reads) so that the stored pages
// are made unreadable only when no pass that may still read them is running.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "gguf/gguf_reader.h"
#include "io/page_memory.h"
#include "model/weights.h"

namespace peak::model {

class WeightRepacker {
 public:
  // Chooses the tensors of `w` to repack, allocates room for them and points
  // their descriptors' repacked_data at slots that stay null until published.
  WeightRepacker(ModelWeights& w, const gguf::GgufFile& file);
  // Stops a background repacking after its current pieces and joins it.
  ~WeightRepacker();
  WeightRepacker(const WeightRepacker&) = delete;
  WeightRepacker& operator=(const WeightRepacker&) = delete;

  // The memory a repacker of `w` allocates when its file is mapped and not
  // locked (none otherwise), computed without allocating it.
  static uint64_t bytes_needed(const ModelWeights& w);
  // The memory this one allocated for the repacked matrices.
  size_t bytes() const { return memory_ ? memory_->size() : 0; }

  // Whether `info` holds one of the chosen tensors.
  bool chosen(const gguf::TensorInfo& info) const;

  // Repacks the chosen tensors on up to n_threads threads, the calling thread
  // among them (none outlives the call), and publishes each one as it is done.
  // After each of its pieces, and at the end, the calling thread calls
  // progress(bytes repacked so far). When that returns false, the threads stop
  // after their current pieces and run returns false (some tensors may be
  // published, the rest read as stored). An exception from progress is
  // rethrown the same way. No forward pass may run during the call.
  bool run(int n_threads, const std::function<bool(uint64_t)>& progress);

  // Repacks the chosen tensors on one thread of its own, at the lowest
  // scheduling priority, and returns at once. Forward passes may run
  // meanwhile; the thread takes its pieces between them where it can (see
  // yield_to_passes). One thread: more took CPU time and page-fault time from
  // the first prompt in spite of their priority.
  void start();
  // Blocks until every chosen tensor is published.
  void wait() const;
  bool finished() const { return finished_.load(std::memory_order_acquire); }

  // Called around every forward pass that may read the chosen tensors, from
  // any thread (two atomic operations, no lock).
  void begin_reads();
  void end_reads();

 private:
  struct Slot {
    core::Tensor* tensor;
    size_t offset;  // in memory_
  };
  // Orders slots by where their tensor's data lies.
  static bool data_before(const Slot& s, const void* data) {
    return std::less<const void*>()(s.tensor->data, data);
  }
  struct Piece;
  struct Job;
  static void work(void* job, int thread_index, int n_threads);
  // Repacks every piece on n_threads threads; false when stopped before the end.
  bool repack_all(int n_threads, const std::function<bool(uint64_t)>& progress, bool yield_to_passes);
  // Waits, for a bounded time, until no forward pass runs.
  void yield_to_passes() const;
  void publish(size_t slot) const;
  // Makes the chosen tensors' file pages unreadable (io::MappedFile::release).
  void release_file_pages() const;
  // Where a chosen tensor's data starts in the mapped file.
  size_t file_offset(const core::Tensor& t) const;
  void background();
  // The thread that takes reads_ from kReleasePending to 0 hands the release
  // to the background thread.
  void hand_over_release();

  const gguf::GgufFile& file_;
  std::vector<Slot> slots_;  // in file order (of data addresses), each matrix once
  std::unique_ptr<std::atomic<const void*>[]> published_;  // per slot: repacked bytes, or null
  std::unique_ptr<io::PageMemory> memory_;

  // Forward passes running, plus kReleasePending once everything is published
  // and the file pages wait to be made unreadable.
  static constexpr uint64_t kReleasePending = uint64_t{1} << 63;
  std::atomic<uint64_t> reads_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> release_ready_{false};
  mutable std::mutex mutex_;  // for the condition variable only
  mutable std::condition_variable changed_;
  std::thread thread_;
};

}  // namespace peak::model
