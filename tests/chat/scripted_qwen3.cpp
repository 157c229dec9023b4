#include "scripted_qwen3.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "model/tensor_manifest.h"
#include "template_fixtures.h"
#include "tokenizer/tokenizer.h"

namespace peak::test {

using kernels::GgmlType;

namespace {

const std::string kFixtures = std::string(PEAK_SHARED_DIR) + "/fixtures/";

// One token's id in the Qwen3 vocabulary (control tokens parsed).
int32_t id_of(const tokenizer::Tokenizer& tok, const std::string& text) {
  const std::vector<int32_t> ids = tok.encode(text, false, true);
  if (ids.size() != 1) throw std::runtime_error("'" + text + "' is not one token");
  return ids[0];
}

}  // namespace

void write_scripted_qwen3(const std::string& path, Qwen3Script which) {
  const auto vocab = gguf::GgufFile::open(kFixtures + "vocab/ggml-vocab-qwen3.gguf");
  gguf::GgufWriter w;
  for (size_t i = 0; i < vocab->n_kv(); ++i) {
    if (vocab->key(i).rfind("tokenizer.", 0) == 0) w.copy_value(vocab->value(i));
  }
  w.set_string("tokenizer.chat_template", fixture_template("Qwen-Qwen3-0.6B"));
  w.set_string("general.architecture", "llama");
  const auto tok = tokenizer::Tokenizer::from_gguf(*vocab);
  const bool calls = which == Qwen3Script::Call || which == Qwen3Script::CallAgain;
  const std::vector<std::pair<std::string, std::string>> script = {
      {"\n", "<think>"},
      {"<think>", "Reason"},
      {"Reason", "</think>"},
      {"</think>", "\n\n"},
      {"\n\n", calls ? "<tool_call>" : "Blue"},
      {"Blue", "."},
      {".", which == Qwen3Script::TextThenCall ? "<tool_call>" : "<|im_end|>"},
      // The last character of a call's closing marker, which ties spell out.
      {">", which == Qwen3Script::CallAgain ? "\n" : "<|im_end|>"}};

  constexpr int64_t n_embd = 16, n_ff = 16, n_head = 2;
  const int64_t n_vocab = static_cast<int64_t>(vocab->find("tokenizer.ggml.tokens")->array().size());
  static std::vector<float> embd, out, ones, zeros;
  embd.assign(static_cast<size_t>(n_embd * n_vocab), 0.0f);
  out.assign(embd.size(), 0.0f);
  ones.assign(n_embd, 1.0f);
  zeros.assign(n_embd * std::max(n_embd, n_ff), 0.0f);
  for (int64_t t = 0; t < n_vocab; ++t) embd[static_cast<size_t>(t * n_embd + n_embd - 1)] = 1.0f;
  for (size_t i = 0; i < script.size(); ++i) {
    const int64_t from = id_of(*tok, script[i].first), to = id_of(*tok, script[i].second);
    embd[static_cast<size_t>(from * n_embd + n_embd - 1)] = 0.0f;
    embd[static_cast<size_t>(from * n_embd) + i] = 1.0f;
    out[static_cast<size_t>(to * n_embd) + i] = 10.0f;
  }
  w.set_u32("llama.context_length", 4096);
  w.set_u32("llama.embedding_length", n_embd);
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.feed_forward_length", n_ff);
  w.set_u32("llama.attention.head_count", n_head);
  w.set_u32("llama.attention.head_count_kv", n_head);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-6f);
  // llama's tensors of one block with an untied output: the scripted
  // embedding and output matrices, unit norm weights, zeros elsewhere.
  model::HParams hp;
  hp.arch = model::Arch::Llama;
  hp.n_vocab = n_vocab;
  hp.n_embd = n_embd;
  hp.n_layer = 1;
  hp.n_head = hp.n_head_kv = n_head;
  hp.head_dim = n_embd / n_head;
  hp.n_ff = n_ff;
  for (const model::ManifestTensor& t : model::tensor_manifest(hp)) {
    if (t.presence != model::Presence::Required && t.presence != model::Presence::UntiedOutput) continue;
    const float* data = t.role == model::TensorRole::NormWeight ? ones.data() : zeros.data();
    if (t.model_slot == &model::ModelWeights::token_embd) data = embd.data();
    if (t.model_slot == &model::ModelWeights::output) data = out.data();
    w.add_tensor(t.name, GgmlType::F32, t.n_dims, t.ne, data);
  }
  w.write_file(path);
}

}  // namespace peak::test
