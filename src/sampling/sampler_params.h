// What a sampler chain does: which samplers run, in which order, how strongly.
// Defaults follow llama.cpp's common_params_sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sampling/grammar.h"

namespace peak::sampling {

enum class SamplerStage : uint8_t { Penalties, TopK, TopP, MinP, Temperature };

std::string_view stage_name(SamplerStage stage);

// llama.cpp's default order: penalties, top-k, top-p, min-p, temperature (the
// final distribution draw always comes last).
std::vector<SamplerStage> default_stage_order();

struct SamplerParams {
  float temperature = 0.8f;       // finite, >= 0; 0 = greedy (only the penalties then apply)
  int32_t top_k = 40;             // >= 0; 0 = off
  float top_p = 0.95f;            // (0, 1]; 1 = off
  float min_p = 0.05f;            // [0, 1]; 0 = off
  int32_t penalty_last_n = 64;    // >= 0 tokens; 0 = off
  float repeat_penalty = 1.0f;    // finite, > 0; 1 = off
  float frequency_penalty = 0.0f; // finite; 0 = off
  float presence_penalty = 0.0f;  // finite; 0 = off
  uint64_t seed = 0;              // of the distribution draw
  std::vector<SamplerStage> order = default_stage_order();  // each stage at most once
  // When set, runs before every stage: only tokens that continue the grammar
  // can be chosen (grammar_stage.h). The chain then needs the vocabulary.
  std::shared_ptr<const Grammar> grammar;
  // Control tokens, in increasing order, that count as their text (e.g. a
  // model's "<|tool_call|>"): a grammar allows one where its text can continue
  // the grammar, and runtime::generate writes its text, where other control
  // tokens write nothing. The chain then needs the vocabulary, which checks
  // them (GrammarVocabulary::check_preserved).
  std::vector<int32_t> preserved_tokens;
};

// Throws std::invalid_argument naming the first parameter out of its range.
void validate(const SamplerParams& params);

}  // namespace peak::sampling
