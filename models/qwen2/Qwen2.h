//===- Qwen2.h - Qwen2 dense decoder in the Genesis frontend ----*- C++ -*-===//
//
// Hugging Face's Qwen2ForCausalLM with its parameter names and layouts
// ("model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"
// stored [out, in] as nn.Linear, "model.norm.weight", "lm_head.weight" when
// the head is not tied), built from the frontend's nn::DecoderLayer: RMSNorm,
// attention with q/k/v bias, RoPE and grouped-query heads, SwiGLU. A
// Hugging Face directory (config.json + model.safetensors) loads with
// loadQwen2 and saves with saveQwen2. Initialisation follows HF: N(0,
// initializer_range) for matrices and embeddings, zero biases, unit norms.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_QWEN2_QWEN2_H
#define GENESIS_MODELS_QWEN2_QWEN2_H

#include "frontend/nn/Layers.h"
#include "models/qwen2/Qwen2Config.h"

#include <memory>
#include <string>
#include <vector>

namespace genesis::models {

/// Qwen2Model: embed_tokens -> layers -> norm.
class Qwen2Model : public nn::Module {
public:
  Qwen2Model(const Qwen2Config &config, Generator &generator);
  /// Token ids [B, S] -> final hidden states [B, S, hidden].
  Tensor forward(const Tensor &ids) override;
  /// The final hidden state [B, hidden] of token `last` (an i64 scalar
  /// tensor) of ids [B, S] at positions position .. position + S - 1 (an
  /// i64 scalar tensor, or [B] for one token per sequence), attending over
  /// one cache per layer (updated; see nn::cached_attention).
  Tensor forward_cached(const Tensor &ids, const Tensor &position,
                        const Tensor &last, std::vector<nn::KvCache> &caches);
  std::shared_ptr<nn::Embedding> embed_tokens;
  std::shared_ptr<nn::ModuleList<nn::DecoderLayer>> layers;
  std::shared_ptr<nn::RMSNorm> norm;
};

class Qwen2ForCausalLM : public nn::Module {
public:
  explicit Qwen2ForCausalLM(const Qwen2Config &config,
                            Generator &generator = default_generator());
  /// Token ids [B, S] -> logits [B, S, vocab].
  Tensor forward(const Tensor &ids) override;
  /// The logits [B, vocab] of token `last` (see Qwen2Model::forward_cached).
  Tensor forward_cached(const Tensor &ids, const Tensor &position,
                        const Tensor &last, std::vector<nn::KvCache> &caches);
  Qwen2Config config;
  std::shared_ptr<Qwen2Model> model;
  /// Null when tie_word_embeddings: the head is then embed_tokens' weight.
  std::shared_ptr<nn::Linear> lm_head;

private:
  Tensor logits(const Tensor &hidden);
};

/// Builds the model of `directory`/config.json and loads its weights
/// (model.safetensors, or the shards of model.safetensors.index.json: see
/// hf::weightsFile and hf::loadWeights), in eval mode.
std::unique_ptr<Qwen2ForCausalLM> loadQwen2(const std::string &directory);
/// Writes `directory`/config.json and `directory`/model.safetensors (f32),
/// or shards of at most `maxShardBytes` when it is not 0 and the weights
/// are larger (see hf::saveWeights); the directory must exist.
void saveQwen2(Qwen2ForCausalLM &model, const std::string &directory,
               uint64_t maxShardBytes = 0);

} // namespace genesis::models

#endif // GENESIS_MODELS_QWEN2_QWEN2_H
