// How long it takes to parse and validate a GGUF file with a large vocabulary:
// ggml-vocab-qwen3.gguf holds 151,936 token strings and 151,387 merges.
#include <benchmark/benchmark.h>

#include <string>

#include "gguf/gguf_reader.h"

namespace {

const std::string kVocab = std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-qwen3.gguf";

// Parse only: the bytes are already in memory (read once, outside the timing).
void BM_ParseVocab150k(benchmark::State& state) {
  peak::io::MapOptions read_into_memory;
  read_into_memory.use_mmap = false;
  const auto mapping = peak::io::MappedFile::open(kVocab, read_into_memory);
  for (auto _ : state) {
    auto file = peak::gguf::GgufFile::parse(mapping->data(), mapping->size());
    benchmark::DoNotOptimize(file->n_kv());
  }
  state.counters["entries"] = static_cast<double>(
      peak::gguf::GgufFile::parse(mapping->data(), mapping->size())->get("tokenizer.ggml.tokens").array().size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mapping->size()));
}
BENCHMARK(BM_ParseVocab150k)->Unit(benchmark::kMillisecond);

// Open from disk (mmap, page cache warm) and parse: what loading a model costs.
void BM_OpenVocab150k(benchmark::State& state) {
  for (auto _ : state) {
    auto file = peak::gguf::GgufFile::open(kVocab);
    benchmark::DoNotOptimize(file->n_kv());
  }
}
BENCHMARK(BM_OpenVocab150k)->Unit(benchmark::kMillisecond);

}  // namespace
