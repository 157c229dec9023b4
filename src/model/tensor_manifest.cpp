#include "model/tensor_manifest.h"

namespace peak::model {
namespace {

class ManifestBuilder {
 public:
  void model(const std::string& name, std::initializer_list<int64_t> shape, TensorRole role, Presence presence,
             Tensor* ModelWeights::*slot) {
    add(name, shape, role, presence, -1).model_slot = slot;
  }

  void layer(int64_t il, const std::string& name, std::initializer_list<int64_t> shape, TensorRole role,
             Tensor* LayerWeights::*slot, Presence presence = Presence::Required) {
    add(block_tensor_name(il, name), shape, role, presence, il).layer_slot = slot;
  }

  // Vision transformers' files (llama.cpp's clip names) call a block's norms
  // ln1 and ln2 and its attention output attn_out.
  explicit ManifestBuilder(std::vector<ManifestTensor>& out, bool vision) : out_(out), vision_(vision) {}

 private:
  ManifestTensor& add(const std::string& name, std::initializer_list<int64_t> shape, TensorRole role, Presence presence,
                      int64_t il) {
    ManifestTensor t{name, {1, 1, 1, 1}, static_cast<uint32_t>(shape.size()), role, presence, il, nullptr, nullptr};
    size_t i = 0;
    for (int64_t d : shape) t.ne[i++] = d;
    out_.push_back(t);
    return out_.back();
  }

  std::string block_tensor_name(int64_t il, const std::string& name) const {
    if (!vision_) return "blk." + std::to_string(il) + "." + name;
    static const std::pair<const char*, const char*> kClipNames[] = {
        {"attn_norm.", "ln1."}, {"ffn_norm.", "ln2."}, {"attn_output.", "attn_out."}};
    std::string clip = name;
    for (const auto& [ours, theirs] : kClipNames) {
      if (clip.rfind(ours, 0) == 0) clip = theirs + clip.substr(std::string(ours).size());
    }
    return "v.blk." + std::to_string(il) + "." + clip;
  }

  std::vector<ManifestTensor>& out_;
  bool vision_;
};

// A norm of the architecture's kind: its weight, and with LayerNorms its bias.
void add_norm(ManifestBuilder& m, const HParams& hp, int64_t il, const std::string& name, Tensor* LayerWeights::*weight,
              Tensor* LayerWeights::*bias) {
  m.layer(il, name + ".weight", {hp.n_embd}, TensorRole::NormWeight, weight);
  if (hp.spec().norm == NormKind::Layer) m.layer(il, name + ".bias", {hp.n_embd}, TensorRole::Bias, bias);
}

// Shapes use ggml order; e = n_embd, q = n_head * head_dim, kv = n_head_kv * head_dim.
void add_attention(ManifestBuilder& m, const HParams& hp, int64_t il) {
  const ArchSpec& spec = hp.spec();
  const int64_t e = hp.n_embd, q = hp.n_embd_q(), kv = hp.n_embd_kv(), d = hp.head_dim;
  if (!spec.post_norm_block) add_norm(m, hp, il, "attn_norm", &LayerWeights::attn_norm, &LayerWeights::attn_norm_bias);
  if (spec.fused_qkv) {
    m.layer(il, "attn_qkv.weight", {e, q + 2 * kv}, TensorRole::Matrix, &LayerWeights::wqkv, Presence::FusedQkv);
  }
  const Presence separate = spec.fused_qkv ? Presence::SeparateQkv : Presence::Required;
  m.layer(il, "attn_q.weight", {e, q}, TensorRole::Matrix, &LayerWeights::wq, separate);
  m.layer(il, "attn_k.weight", {e, kv}, TensorRole::Matrix, &LayerWeights::wk, separate);
  m.layer(il, "attn_v.weight", {e, kv}, TensorRole::Matrix, &LayerWeights::wv, separate);
  if (spec.qkv_bias) {
    m.layer(il, "attn_q.bias", {q}, TensorRole::Bias, &LayerWeights::bq);
    m.layer(il, "attn_k.bias", {kv}, TensorRole::Bias, &LayerWeights::bk);
    m.layer(il, "attn_v.bias", {kv}, TensorRole::Bias, &LayerWeights::bv);
  }
  if (spec.qk_norm) {
    m.layer(il, "attn_q_norm.weight", {d}, TensorRole::NormWeight, &LayerWeights::q_norm);
    m.layer(il, "attn_k_norm.weight", {d}, TensorRole::NormWeight, &LayerWeights::k_norm);
  }
  m.layer(il, "attn_output.weight", {q, e}, TensorRole::Matrix, &LayerWeights::wo);
  if (spec.output_biases) m.layer(il, "attn_output.bias", {e}, TensorRole::Bias, &LayerWeights::bo);
  if (spec.post_norms) {
    m.layer(il, "post_attention_norm.weight", {e}, TensorRole::NormWeight, &LayerWeights::attn_post_norm);
  }
  if (spec.post_norm_block) {
    add_norm(m, hp, il, "attn_output_norm", &LayerWeights::attn_norm, &LayerWeights::attn_norm_bias);
  }
}

void add_feed_forward(ManifestBuilder& m, const HParams& hp, int64_t il) {
  const ArchSpec& spec = hp.spec();
  const int64_t e = hp.n_embd, ff = hp.n_ff;
  if (!spec.post_norm_block) add_norm(m, hp, il, "ffn_norm", &LayerWeights::ffn_norm, &LayerWeights::ffn_norm_bias);
  if (spec.fused_gate_up) {
    m.layer(il, "ffn_up.weight", {e, 2 * ff}, TensorRole::Matrix, &LayerWeights::ffn_up);  // gate rows, then up rows
  } else {
    if (spec.gated_ffn) m.layer(il, "ffn_gate.weight", {e, ff}, TensorRole::Matrix, &LayerWeights::ffn_gate);
    if (spec.gated_ffn && spec.output_biases) {
      m.layer(il, "ffn_gate.bias", {ff}, TensorRole::Bias, &LayerWeights::ffn_gate_bias);
    }
    m.layer(il, "ffn_up.weight", {e, ff}, TensorRole::Matrix, &LayerWeights::ffn_up);
  }
  if (spec.output_biases) m.layer(il, "ffn_up.bias", {ff}, TensorRole::Bias, &LayerWeights::ffn_up_bias);
  m.layer(il, "ffn_down.weight", {ff, e}, TensorRole::Matrix, &LayerWeights::ffn_down);
  if (spec.output_biases) m.layer(il, "ffn_down.bias", {e}, TensorRole::Bias, &LayerWeights::ffn_down_bias);
  if (spec.post_norms) m.layer(il, "post_ffw_norm.weight", {e}, TensorRole::NormWeight, &LayerWeights::ffn_post_norm);
  if (spec.post_norm_block) {
    add_norm(m, hp, il, "layer_output_norm", &LayerWeights::ffn_norm, &LayerWeights::ffn_norm_bias);
  }
}

// An image encoder's own tensors (llama.cpp's clip names): the patch embedding
// and positions, the final LayerNorm, the connector's.
void add_image_encoder(ManifestBuilder& m, const HParams& hp) {
  const int64_t e = hp.n_embd, p = hp.vision.patch_size;
  const ArchSpec& spec = hp.spec();
  m.model("v.patch_embd.weight", {p, p, 3, e}, TensorRole::Matrix, Presence::Required, &ModelWeights::patch_embd);
  if (spec.two_frame_patches) {
    m.model("v.patch_embd.weight.1", {p, p, 3, e}, TensorRole::Matrix, Presence::Required, &ModelWeights::patch_embd_1);
  } else {
    m.model("v.patch_embd.bias", {e}, TensorRole::Bias, Presence::Required, &ModelWeights::patch_embd_bias);
  }
  if (spec.absolute_positions) {
    m.model("v.position_embd.weight", {e, hp.vision.n_patches()}, TensorRole::Matrix, Presence::Required,
            &ModelWeights::position_embd);
  }
  m.model("v.post_ln.weight", {e}, TensorRole::NormWeight, Presence::Required, &ModelWeights::output_norm);
  if (spec.norm == NormKind::Layer) {
    m.model("v.post_ln.bias", {e}, TensorRole::Bias, Presence::Required, &ModelWeights::output_norm_bias);
  }
  if (spec.connector == VisionConnector::MergeMlp) {
    // llama.cpp's mm.0 and mm.2 (HF's merger.mlp.0 and .2; the gelu between has no tensor).
    const int64_t k = hp.vision.merge, wide = k * k * e;
    m.model("mm.0.weight", {wide, wide}, TensorRole::Matrix, Presence::Required, &ModelWeights::projector);
    m.model("mm.0.bias", {wide}, TensorRole::Bias, Presence::Required, &ModelWeights::projector_bias);
    m.model("mm.2.weight", {wide, hp.vision.n_embd_out}, TensorRole::Matrix, Presence::Required,
            &ModelWeights::projector_2);
    m.model("mm.2.bias", {hp.vision.n_embd_out}, TensorRole::Bias, Presence::Required, &ModelWeights::projector_2_bias);
  } else if (spec.connector == VisionConnector::MeanNormProject) {
    m.model("mm.soft_emb_norm.weight", {e}, TensorRole::NormWeight, Presence::Required, &ModelWeights::projector_norm);
    m.model("mm.input_projection.weight", {hp.vision.n_embd_out, e}, TensorRole::Matrix, Presence::Required,
            &ModelWeights::projector);
  } else {
    const int64_t k = hp.vision.merge;
    m.model("mm.model.fc.weight", {k * k * e, hp.vision.n_embd_out}, TensorRole::Matrix, Presence::Required,
            &ModelWeights::projector);
  }
}

}  // namespace

std::vector<ManifestTensor> tensor_manifest(const HParams& hp) {
  std::vector<ManifestTensor> out;
  const ArchSpec& spec = hp.spec();
  ManifestBuilder m(out, spec.projector_type != nullptr);
  if (spec.projector_type != nullptr) {
    add_image_encoder(m, hp);
    for (int64_t il = 0; il < hp.n_layer; ++il) {
      add_attention(m, hp, il);
      add_feed_forward(m, hp, il);
    }
    return out;
  }
  const int64_t e = hp.n_embd, pairs = hp.rope.n_dims / 2;
  m.model("token_embd.weight", {e, hp.n_vocab}, TensorRole::Matrix, Presence::Required, &ModelWeights::token_embd);
  if (spec.token_types) {
    m.model("token_types.weight", {e, hp.n_token_types}, TensorRole::Matrix, Presence::TokenTypes,
            &ModelWeights::token_types);
  }
  if (spec.absolute_positions) {
    m.model("position_embd.weight", {e, hp.n_ctx_train}, TensorRole::Matrix, Presence::Required,
            &ModelWeights::position_embd);
  }
  if (spec.embedding_norm) {
    m.model("token_embd_norm.weight", {e}, TensorRole::NormWeight, Presence::Required, &ModelWeights::embd_norm);
    m.model("token_embd_norm.bias", {e}, TensorRole::Bias, Presence::Required, &ModelWeights::embd_norm_bias);
  }
  // Pre-norm blocks end with a final norm, an encoder's too (before pooling).
  if (!spec.post_norm_block) {
    m.model("output_norm.weight", {e}, TensorRole::NormWeight, Presence::Required, &ModelWeights::output_norm);
  }
  if (!spec.absolute_positions) {
    m.model("rope_freqs.weight", {pairs}, TensorRole::FrequencyFactors, Presence::RopeFreqs, &ModelWeights::rope_freqs);
  }
  if (spec.long_rope) {
    m.model("rope_factors_long.weight", {pairs}, TensorRole::FrequencyFactors, Presence::LongRope,
            &ModelWeights::rope_factors_long);
    m.model("rope_factors_short.weight", {pairs}, TensorRole::FrequencyFactors, Presence::LongRope,
            &ModelWeights::rope_factors_short);
  }
  if (spec.encoder && hp.pooling == Pooling::Rank) {
    // llama.cpp's names for the head; it loads them as optional, but without
    // them a rank model has no score to give.
    m.model("cls.weight", {e, e}, TensorRole::Matrix, Presence::Required, &ModelWeights::cls);
    m.model("cls.bias", {e}, TensorRole::Bias, Presence::Required, &ModelWeights::cls_bias);
    m.model("cls.output.weight", {e, hp.n_cls_out}, TensorRole::Matrix, Presence::Required, &ModelWeights::cls_output);
    m.model("cls.output.bias", {hp.n_cls_out}, TensorRole::Bias, Presence::Required, &ModelWeights::cls_output_bias);
  } else if (hp.pooling == Pooling::Rank) {
    // A decoder reranker's head: its output rows for "yes" and "no".
    m.model("cls.output.weight", {e, hp.n_cls_out}, TensorRole::Matrix, Presence::Required, &ModelWeights::cls_output);
  }
  if (!spec.encoder) {
    m.model("output.weight", {e, hp.n_vocab}, TensorRole::Matrix, Presence::UntiedOutput, &ModelWeights::output);
  }
  if (hp.dense_features > 0) {
    m.model("dense_2.weight", {e, hp.dense_features}, TensorRole::Matrix, Presence::Required, &ModelWeights::dense_2);
    m.model("dense_3.weight", {hp.dense_features, e}, TensorRole::Matrix, Presence::Required, &ModelWeights::dense_3);
  }
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    add_attention(m, hp, il);
    add_feed_forward(m, hp, il);
  }
  return out;
}

}  // namespace peak::model
