// What the grammar stage costs a sampler chain per token, on real vocabularies:
// qwen3 (151,936 tokens) and gpt-4o / Phi-4-mini (200,019) from the vocabulary
// fixtures, and any GGUF named in PEAK_BENCH_VOCABS (colon-separated paths, e.g.
// a gemma3 model for 262,144 tokens). The chain is driven through a JSON
// document, its tokens as the tokenizer writes it: each step's logits are
// random with the document's next token far above the rest (a model that
// writes the document), the chain samples, then accepts the document's token.
// The same run without the grammar is the baseline; the difference is the
// grammar's cost per token.
//
// Chains: greedy; llama.cpp's defaults (top-k 40, top-p 0.95, min-p 0.05,
// temperature 0.8); the whole distribution (top-k 0), where the stage takes
// the mask of every state.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "sampling/grammar.h"
#include "sampling/grammar_vocabulary.h"
#include "sampling/pcg32.h"
#include "sampling/sampler_chain.h"
#include "tokenizer/tokenizer.h"

namespace {

using peak::sampling::SamplerChain;
using peak::sampling::SamplerParams;

const std::string kSourceDir = PEAK_SOURCE_DIR;

const char* const kDocument = R"({
  "id": "order-20481",
  "customer": {"name": "Zoë Ångström", "email": "zoe@example.com", "city": "Malmö", "vip": true},
  "items": [
    {"sku": "A-1001", "title": "Ceramic mug, 350 ml", "quantity": 2, "price": 12.5},
    {"sku": "B-2040", "title": "日本茶 (sencha), 100 g", "quantity": 1, "price": 18.0},
    {"sku": "C-0007", "title": "Notebook \"Dot grid\"", "quantity": 3, "price": 4.75}
  ],
  "discount": null,
  "total": 54.25,
  "notes": ["leave at the door", "fragile 🍵"],
  "history": [{"at": "2026-11-02T10:15:00Z", "status": "paid"}, {"at": "2026-11-03T08:01:12Z", "status": "shipped"}]
})";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Vocabulary {
  std::unique_ptr<peak::tokenizer::Tokenizer> tokenizer;
  std::shared_ptr<const peak::sampling::GrammarVocabulary> grammar_vocabulary;
  std::vector<int32_t> document;  // kDocument's tokens
};

const Vocabulary& vocabulary(const std::string& path) {
  static std::vector<std::pair<std::string, std::unique_ptr<Vocabulary>>> loaded;
  for (const auto& [p, v] : loaded) {
    if (p == path) return *v;
  }
  auto v = std::make_unique<Vocabulary>();
  const auto file = peak::gguf::GgufFile::open(path);
  v->tokenizer = peak::tokenizer::Tokenizer::from_gguf(*file);
  v->grammar_vocabulary = peak::sampling::GrammarVocabulary::from_tokenizer(*v->tokenizer, v->tokenizer->n_vocab());
  v->document = v->tokenizer->encode(kDocument, false, false);
  loaded.emplace_back(path, std::move(v));
  return *loaded.back().second;
}

enum class Chain { kGreedy, kDefaults, kWhole };

SamplerParams params_for(Chain chain, bool grammar) {
  SamplerParams p;
  if (chain == Chain::kGreedy) p.temperature = 0.0f;
  if (chain == Chain::kWhole) p.top_k = 0;
  if (grammar) p.grammar = peak::sampling::Grammar::parse(read_file(kSourceDir + "/tools/grammars/json.gbnf"));
  return p;
}

// `cold`: a new chain for each pass over the document, so the grammar's
// cache starts empty (a new request); else one chain for every pass (a
// long generation, or the next request of an app that keeps its sampler).
void BM_SampleJsonDocument(benchmark::State& state, const std::string& path, Chain kind, bool grammar, bool cold) {
  if (!std::ifstream(path)) {
    state.SkipWithError(("no " + path).c_str());
    return;
  }
  const Vocabulary& v = vocabulary(path);
  std::string spelled;
  for (const int32_t token : v.document) spelled += v.grammar_vocabulary->bytes(token);
  if (spelled != kDocument) {
    // A synthetic SentencePiece vocabulary without a U+2581 token spells a
    // space as that character's bytes, which no JSON grammar takes there.
    state.SkipWithError("its tokens do not write the document as it is (e.g. a space as U+2581)");
    return;
  }
  const int32_t n_vocab = v.tokenizer->n_vocab();
  const SamplerParams params = params_for(kind, grammar);
  std::unique_ptr<SamplerChain> chain = std::make_unique<SamplerChain>(n_vocab, params, v.grammar_vocabulary);
  peak::sampling::Pcg32 rng(1);
  std::vector<std::vector<float>> rows(4, std::vector<float>(static_cast<size_t>(n_vocab)));
  for (auto& row : rows) {
    for (float& l : row) l = static_cast<float>(rng.next_unit_double() * 10.0);
  }
  size_t step = 0;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      chain = std::make_unique<SamplerChain>(n_vocab, params, v.grammar_vocabulary);
      state.ResumeTiming();
    }
    for (const int32_t token : v.document) {
      std::vector<float>& row = rows[step++ % rows.size()];
      const float kept = row[static_cast<size_t>(token)];
      row[static_cast<size_t>(token)] = 40.0f;
      benchmark::DoNotOptimize(chain->sample(row.data()));
      row[static_cast<size_t>(token)] = kept;
      chain->accept(token);
    }
    chain->reset();
  }
  state.counters["tokens"] = static_cast<double>(v.document.size());
  state.counters["per_token"] =
      benchmark::Counter(static_cast<double>(v.document.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A model that writes what it likes (random logits, as `peak synth` models
// give): the chain's own choices are accepted, so the grammar goes wherever
// sampling takes it, through states a document would not visit; its end
// starts it again. The cache lives on across passes, as in one long
// generation.
void BM_SampleWandering(benchmark::State& state, const std::string& path, Chain kind, bool grammar) {
  if (!std::ifstream(path)) {
    state.SkipWithError(("no " + path).c_str());
    return;
  }
  const Vocabulary& v = vocabulary(path);
  const int32_t n_vocab = v.tokenizer->n_vocab();
  SamplerChain chain(n_vocab, params_for(kind, grammar), v.grammar_vocabulary);
  peak::sampling::Pcg32 rng(2);
  std::vector<std::vector<float>> rows(16, std::vector<float>(static_cast<size_t>(n_vocab)));
  for (auto& row : rows) {
    for (float& l : row) l = static_cast<float>(rng.next_unit_double() * 10.0);
  }
  constexpr int kSteps = 128;
  size_t step = 0;
  for (auto _ : state) {
    for (int i = 0; i < kSteps; ++i) {
      const int32_t token = chain.sample(rows[(step++ * 7) % rows.size()].data());
      if (v.tokenizer->is_eog(token)) {
        chain.reset();
      } else {
        chain.accept(token);
      }
    }
  }
  state.counters["per_token"] =
      benchmark::Counter(kSteps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void register_all() {
  std::vector<std::pair<std::string, std::string>> files = {
      {"qwen3", std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-qwen3.gguf"},
      {"gpt-4o", std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-gpt-4o.gguf"}};
  if (const char* more = std::getenv("PEAK_BENCH_VOCABS")) {
    std::stringstream list(more);
    for (std::string path; std::getline(list, path, ':');) {
      if (!path.empty()) files.emplace_back(path.substr(path.find_last_of('/') + 1), path);
    }
  }
  const std::pair<const char*, Chain> chains[] = {
      {"greedy", Chain::kGreedy}, {"defaults", Chain::kDefaults}, {"whole", Chain::kWhole}};
  for (const auto& [name, path] : files) {
    for (const auto& [chain_name, chain] : chains) {
      for (const bool grammar : {false, true}) {
        const std::string label = "SampleWandering/" + name + "/" + chain_name + (grammar ? "/json" : "/free");
        benchmark::RegisterBenchmark(label.c_str(), BM_SampleWandering, path, chain, grammar)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(1.0);
      }
      for (const char* variant : {"free", "json", "json-cold"}) {
        const bool grammar = variant[0] == 'j';
        const bool cold = variant[4] == '-';
        const std::string label = "SampleJsonDocument/" + name + "/" + chain_name + "/" + variant;
        benchmark::RegisterBenchmark(label.c_str(), BM_SampleJsonDocument, path, chain, grammar, cold)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(1.0);
      }
    }
  }
}

const bool registered = (register_all(), true);

}  // namespace
