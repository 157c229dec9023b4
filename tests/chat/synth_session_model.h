// A small synthetic model for session tests (random weights, a raw-text
// vocabulary of 512): heads of 32, so Q8_0 KV blocks fit, unlike stories260K's
// heads of 8.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/model.h"
#include "model/synth.h"

namespace peak::chat::testing {

inline std::unique_ptr<model::Model> synth_session_model(int64_t n_layer, const std::string& path) {
  model::SynthSpec spec;
  spec.n_layer = n_layer;
  spec.n_embd = 64;
  spec.n_head = 2;
  spec.n_head_kv = 2;
  spec.head_dim = 32;
  spec.n_ff = 128;
  spec.n_vocab = 512;
  model::write_synth_model(spec, model::SynthOptions{}, path);
  return model::Model::load(path);
}

}  // namespace peak::chat::testing
