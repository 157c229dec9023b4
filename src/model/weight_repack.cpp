#include "model/weight_repack.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>

#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "log/log.h"

namespace peak::model {

using kernels::kernels_for;
using kernels::kRepackRows;

namespace {

constexpr size_t kAlignment = 64;  // the kernels load whole cache lines
// Bytes a thread repacks at a time (whole row groups): taking a piece costs
// nothing next to repacking it, and tinyllama-1.1b's 550 MB of matrices make
// about 300 pieces to balance between the threads.
constexpr size_t kPieceBytes = size_t{2} << 20;
// A background repacking takes its next piece when no forward pass runs, or
// after waiting this long for one to end: passes that follow each other
// closely (decoding) then leave it a piece per wait, at least 100 MB/s.
constexpr auto kMaxYield = std::chrono::milliseconds(20);
constexpr auto kYieldPoll = std::chrono::milliseconds(1);

bool repackable(const core::Tensor* t) {
  return t != nullptr && kernels_for(t->type).repack != nullptr && t->ne[1] % kRepackRows == 0 && t->ne[2] == 1 &&
         t->ne[3] == 1 && t->is_contiguous();
}

// The matrices of `w` to repack, in file order (of data addresses), each once.
std::vector<core::Tensor*> matrices_to_repack(const ModelWeights& w) {
  std::vector<core::Tensor*> chosen;
  const auto choose = [&](core::Tensor* t) {
    if (repackable(t)) chosen.push_back(t);
  };
  for (const LayerWeights& l : w.layers) {
    for (core::Tensor* t : {l.wq, l.wk, l.wv, l.wqkv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) choose(t);
  }
  if (!w.tied_output) choose(w.output);
  std::sort(chosen.begin(), chosen.end(),
            [](const core::Tensor* a, const core::Tensor* b) { return std::less<const void*>()(a->data, b->data); });
  chosen.erase(std::unique(chosen.begin(), chosen.end(),
                           [](const core::Tensor* a, const core::Tensor* b) { return a->data == b->data; }),
               chosen.end());
  return chosen;
}

// A repacked matrix's room in the repacker's memory.
size_t slot_bytes(const core::Tensor& t) { return (t.byte_size() + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

// Rows [row_begin, row_end) of slots_[slot], multiples of kRepackRows.
struct WeightRepacker::Piece {
  size_t slot;
  int64_t row_begin, row_end;
};

// What the threads share while repacking.
struct WeightRepacker::Job {
  Job(const WeightRepacker& r, const std::function<bool(uint64_t)>& p) : repacker(r), progress(p) {}

  const WeightRepacker& repacker;
  std::vector<Piece> pieces;
  std::unique_ptr<std::atomic<int64_t>[]> rows_left;  // per slot: the last piece done publishes it
  std::atomic<size_t> next_piece{0};
  std::atomic<uint64_t> bytes_done{0};
  std::atomic<bool> stop{false};
  bool yield_to_passes = false;  // in the background
  // The calling thread's alone; an empty progress is not called.
  const std::function<bool(uint64_t)>& progress;
  uint64_t reported = 0;
  bool cancelled = false;
  std::exception_ptr error;
};

uint64_t WeightRepacker::bytes_needed(const ModelWeights& w) {
  uint64_t total = 0;
  for (const core::Tensor* t : matrices_to_repack(w)) total += slot_bytes(*t);
  return total;
}

WeightRepacker::WeightRepacker(ModelWeights& w, const gguf::GgufFile& file) : file_(file) {
  const io::MappedFile* mapping = file.mapping();
  if (mapping == nullptr || !mapping->is_mapped() || mapping->is_locked()) return;
  for (core::Tensor* t : matrices_to_repack(w)) slots_.push_back(Slot{t, 0});
  published_ = std::make_unique<std::atomic<const void*>[]>(slots_.size());
  size_t total = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].offset = total;
    total += slot_bytes(*slots_[i].tensor);
    published_[i].store(nullptr, std::memory_order_relaxed);
    slots_[i].tensor->repacked_data = &published_[i];
  }
  if (total > 0) memory_ = std::make_unique<io::PageMemory>(total);
  finished_.store(slots_.empty(), std::memory_order_release);
}

WeightRepacker::~WeightRepacker() {
  stop_.store(true, std::memory_order_relaxed);
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool WeightRepacker::run(int n_threads, const std::function<bool(uint64_t)>& progress) {
  if (!repack_all(n_threads, progress, /*yield_to_passes=*/false)) return false;
  release_file_pages();
  return true;
}

void WeightRepacker::start() {
  if (!finished()) thread_ = std::thread([this] { background(); });
}

void WeightRepacker::wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return finished() || stop_.load(std::memory_order_relaxed); });
}

void WeightRepacker::background() {
  core::lower_current_thread_priority();
  const auto start = std::chrono::steady_clock::now();
  const std::function<bool(uint64_t)> no_progress;
  if (!repack_all(1, no_progress, /*yield_to_passes=*/true)) return;
  if (log::enabled(log::Level::Debug)) {
    log::debug("repacked " + std::to_string(slots_.size()) + " matrices (" + std::to_string(bytes()) +
               " bytes) in the background in " +
               std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()) + " s");
  }
  // Passes that began before the last publication may still read the stored
  // pages: the release waits until none is running (reads_ reaches 0 with
  // kReleasePending set, here or in end_reads).
  if ((reads_.fetch_or(kReleasePending) & ~kReleasePending) == 0) hand_over_release();
  // Timed waits: the pass that hands over notifies without the mutex, which
  // it must not take on the decode path.
  std::unique_lock<std::mutex> lock(mutex_);
  while (!release_ready_.load(std::memory_order_acquire) && !stop_.load(std::memory_order_relaxed)) {
    changed_.wait_for(lock, std::chrono::milliseconds(10));
  }
  lock.unlock();
  if (release_ready_.load(std::memory_order_acquire)) release_file_pages();
}

void WeightRepacker::begin_reads() { reads_.fetch_add(1); }

void WeightRepacker::end_reads() {
  if (reads_.fetch_sub(1) == (kReleasePending | 1)) hand_over_release();
}

void WeightRepacker::hand_over_release() {
  // Fails when a pass began meanwhile: that one published nothing stale (it
  // began after every publication) and hands over when it ends.
  uint64_t pending = kReleasePending;
  if (!reads_.compare_exchange_strong(pending, 0)) return;
  release_ready_.store(true, std::memory_order_release);
  changed_.notify_all();
}

bool WeightRepacker::repack_all(int n_threads, const std::function<bool(uint64_t)>& progress,
                                bool yield_to_passes) {
  Job job(*this, progress);
  job.yield_to_passes = yield_to_passes;
  job.rows_left = std::make_unique<std::atomic<int64_t>[]>(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const core::Tensor& t = *slots_[i].tensor;
    const size_t group_bytes = t.nb[1] * kRepackRows;
    const int64_t piece_rows = std::max<int64_t>(1, static_cast<int64_t>(kPieceBytes / group_bytes)) * kRepackRows;
    for (int64_t row = 0; row < t.ne[1]; row += piece_rows) {
      job.pieces.push_back(Piece{i, row, std::min(t.ne[1], row + piece_rows)});
    }
    job.rows_left[i].store(t.ne[1], std::memory_order_relaxed);
  }
  if (!job.pieces.empty()) {
    n_threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(n_threads, 1)), job.pieces.size()));
    core::ThreadPool(n_threads).run(n_threads, work, &job);
  }
  if (job.error) std::rethrow_exception(job.error);
  if (job.cancelled || job.next_piece.load() < job.pieces.size()) return false;
  // Other threads may have done the last pieces: progress ends with the total.
  if (progress && job.reported != job.bytes_done.load() && !progress(job.bytes_done.load())) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
  return true;
}

void WeightRepacker::publish(size_t slot) const {
  const Slot& s = slots_[slot];
  published_[slot].store(memory_->data() + s.offset, std::memory_order_release);
  // Passes still reading the stored rows map them in again from the page cache.
  file_.mapping()->drop(file_offset(*s.tensor), s.tensor->byte_size());
}

void WeightRepacker::release_file_pages() const {
  for (const Slot& s : slots_) file_.mapping()->release(file_offset(*s.tensor), s.tensor->byte_size());
}

void WeightRepacker::yield_to_passes() const {
  // Mapping in a piece's memory slows a pass on the same cores more than the
  // thread's low priority can prevent (its page faults).
  const auto deadline = std::chrono::steady_clock::now() + kMaxYield;
  while ((reads_.load(std::memory_order_relaxed) & ~kReleasePending) != 0 && !stop_.load(std::memory_order_relaxed) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kYieldPoll);
  }
}

bool WeightRepacker::chosen(const gguf::TensorInfo& info) const {
  const auto it = std::lower_bound(slots_.begin(), slots_.end(), info.data, data_before);
  return it != slots_.end() && it->tensor->data == info.data;
}

size_t WeightRepacker::file_offset(const core::Tensor& t) const {
  return static_cast<size_t>(static_cast<const uint8_t*>(t.data) - file_.mapping()->data());
}

void WeightRepacker::work(void* job_ptr, int thread_index, int) {
  Job& job = *static_cast<Job*>(job_ptr);
  const WeightRepacker& self = job.repacker;
  while (!job.stop.load(std::memory_order_relaxed) && !self.stop_.load(std::memory_order_relaxed)) {
    if (job.yield_to_passes) self.yield_to_passes();
    const size_t index = job.next_piece.fetch_add(1, std::memory_order_relaxed);
    if (index >= job.pieces.size()) break;
    const Piece& piece = job.pieces[index];
    const Slot& slot = self.slots_[piece.slot];
    const core::Tensor& t = *slot.tensor;
    const int64_t rows = piece.row_end - piece.row_begin;
    const size_t begin = static_cast<size_t>(piece.row_begin) * t.nb[1];
    const size_t bytes = static_cast<size_t>(rows) * t.nb[1];
    self.memory_->populate(slot.offset + begin, bytes);
    kernels_for(t.type).repack(static_cast<const uint8_t*>(t.data) + begin, self.memory_->data() + slot.offset + begin,
                               t.ne[0], rows);
    // acq_rel: the last piece of a tensor sees every other piece's writes done.
    if (job.rows_left[piece.slot].fetch_sub(rows, std::memory_order_acq_rel) == rows) self.publish(piece.slot);
    const uint64_t done = job.bytes_done.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (thread_index != 0 || !job.progress) continue;
    try {
      job.reported = done;
      job.cancelled = !job.progress(done);
    } catch (...) {
      job.error = std::current_exception();
    }
    if (job.cancelled || job.error) job.stop.store(true, std::memory_order_relaxed);
  }
}

}  // namespace peak::model
