// The memory a context needs, computed before it exists, is what a context
// with those parameters then holds; and the estimate made from a model file's
// metadata alone (through a region of a larger file, too) is what loading it
// and creating that context take: the file's tensor bytes, the repacked
// matrices' memory, the KV cache and the compute buffers.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/model.h"
#include "runtime/context.h"
#include "runtime/memory_estimate.h"
#include "tiny_models.h"

namespace peak::runtime {

using kernels::GgmlType;

namespace {

const model::Model& stories() {
  static const auto m = model::Model::load(test::stories_path());
  return *m;
}

std::vector<ContextParams> varied_params() {
  std::vector<ContextParams> all;
  for (const int64_t n_ctx : {64, 512}) {
    for (const int64_t n_batch : {1, 32, 512}) {
      for (const GgmlType kv : {GgmlType::F16, GgmlType::F32}) {  // head size 8: no quantized cache
        ContextParams p;
        p.n_ctx = n_ctx;
        p.n_batch = n_batch;
        p.type_k = p.type_v = kv;
        p.n_threads = n_batch == 32 ? 3 : 1;
        p.logits_all = n_batch == 512;
        all.push_back(p);
      }
    }
  }
  return all;
}

TEST(MemoryEstimate, AContextHoldsWhatMemoryNeededComputedForIt) {
  for (const ContextParams& p : varied_params()) {
    const ContextMemory needed = Context::memory_needed(stories(), p);
    const Context ctx(stories(), p);
    const ContextMemory held = ctx.memory();
    EXPECT_EQ(needed.kv_bytes, held.kv_bytes) << "n_ctx " << p.n_ctx << ", n_batch " << p.n_batch;
    EXPECT_EQ(needed.compute_bytes, held.compute_bytes) << "n_ctx " << p.n_ctx << ", n_batch " << p.n_batch;
  }
}

// The KV cache as the model's shape gives it, computed here from the header's
// numbers: K and V, per layer, per cell, n_head_kv x head_dim elements, and
// each cell's int32 position.
TEST(MemoryEstimate, TheKvCacheIsTheModelsShapeTimesTheCells) {
  const model::HParams& hp = stories().hparams();
  ContextParams p;
  p.n_ctx = 256;
  p.type_k = p.type_v = GgmlType::F32;
  EXPECT_EQ(Context::memory_needed(stories(), p).kv_bytes,
            static_cast<size_t>(2 * hp.n_layer * 256 * hp.n_head_kv * hp.head_dim * 4 + 256 * 4));
  p.type_k = p.type_v = GgmlType::F16;
  EXPECT_EQ(Context::memory_needed(stories(), p).kv_bytes,
            static_cast<size_t>(2 * hp.n_layer * 256 * hp.n_head_kv * hp.head_dim * 2 + 256 * 4));
}

uint64_t tensor_bytes_of(const std::string& path) {
  const auto file = gguf::GgufFile::open(path);
  uint64_t total = 0;
  for (size_t i = 0; i < file->n_tensors(); ++i) total += file->tensor(i).n_bytes;
  return total;
}

TEST(MemoryEstimate, FromTheFileMatchesTheLoadedModelAndItsContext) {
  ContextParams p;
  p.n_ctx = 300;
  p.n_batch = 64;
  p.n_threads = 2;
  model::LoadOptions load;
  const MemoryEstimate e = estimate_memory(io::FileSource::path(test::stories_path()), load, p);
  EXPECT_EQ(e.weight_bytes, stories().weight_bytes());
  EXPECT_EQ(e.weight_bytes, tensor_bytes_of(test::stories_path()));
  EXPECT_EQ(e.repacked_bytes, 0u);  // F32: nothing to repack
  const ContextMemory held = Context(stories(), p).memory();
  EXPECT_EQ(e.context.kv_bytes, held.kv_bytes);
  EXPECT_EQ(e.context.compute_bytes, held.compute_bytes);
  EXPECT_EQ(e.total(), e.weight_bytes + held.kv_bytes + held.compute_bytes);

  // Read into memory, the weights are the whole file.
  load.use_mmap = false;
  std::ifstream file(test::stories_path(), std::ios::binary | std::ios::ate);
  EXPECT_EQ(estimate_memory(io::FileSource::path(test::stories_path()), load, p).weight_bytes,
            static_cast<uint64_t>(file.tellg()));
}

// Matrices the kernels repack (Q4_0 on AVX-512 and arm64) take new memory of
// their size, as the repacker of a loaded model allocates it; a file read into
// memory or locked is not repacked.
TEST(MemoryEstimate, RepackedMatricesAreCountedAsTheLoadAllocatesThem) {
  const std::string path = test::write_tiny_model(model::Arch::Llama, GgmlType::Q4_0);
  model::LoadOptions load;
  load.repack_weights = true;
  load.repack_in_background = false;
  const auto model = model::Model::load(path, load);
  const MemoryEstimate e = estimate_memory(io::FileSource::path(path), load, ContextParams{});
  EXPECT_EQ(e.repacked_bytes, model->repacked_bytes());
  if (model->repacked_bytes() == 0) GTEST_SKIP() << "this CPU path repacks no Q4_0 matrix";
  load.repack_weights = false;
  EXPECT_EQ(estimate_memory(io::FileSource::path(path), load, ContextParams{}).repacked_bytes, 0u);
  load.repack_weights = true;
  load.use_mmap = false;
  EXPECT_EQ(estimate_memory(io::FileSource::path(path), load, ContextParams{}).repacked_bytes, 0u);
}

TEST(MemoryEstimate, RefusesWhatTheLoadRefuses) {
  model::LoadOptions load;
  EXPECT_THROW(estimate_memory(io::FileSource::path("/nonexistent/model.gguf"), load, ContextParams{}), io::IoError);
  const int fd = ::open(test::stories_path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_THROW(estimate_memory(io::FileSource::region(fd, 2, 1000), load, ContextParams{}), std::invalid_argument);
  ::close(fd);
  ContextParams too_many_threads;
  too_many_threads.n_threads = 1000;
  EXPECT_THROW(estimate_memory(io::FileSource::path(test::stories_path()), load, too_many_threads),
               std::invalid_argument);
}

}  // namespace
}  // namespace peak::runtime
