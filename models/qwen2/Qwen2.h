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

#include <memory>
#include <string>
#include <vector>

namespace genesis::models {

/// The settings of HF's Qwen2Config that Genesis implements. The defaults
/// are Qwen2.5-0.5B's; readQwen2Config falls back to HF's Qwen2Config
/// defaults for optional keys a file omits.
struct Qwen2Config {
  int64_t vocab_size = 151936;
  int64_t hidden_size = 896;
  int64_t intermediate_size = 4864;
  int64_t num_hidden_layers = 24;
  int64_t num_attention_heads = 14;
  int64_t num_key_value_heads = 2;
  /// Stored and written back; RoPE itself needs no table length.
  int64_t max_position_embeddings = 32768;
  double rms_norm_eps = 1e-6;
  double rope_theta = 1e6;
  double initializer_range = 0.02;
  bool tie_word_embeddings = true;
  /// Bias on q_proj, k_proj and v_proj (o_proj never has one).
  bool attention_bias = true;

  /// Qwen/Qwen2.5-0.5B: 494,032,768 parameters.
  static Qwen2Config qwen2_5_0_5b();
  /// 2 layers, hidden 64, intermediate 128, 4 heads over 2 KV heads,
  /// vocab 256: for tests.
  static Qwen2Config tiny();

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  /// The parameter count of the model this config builds, worked out from
  /// the sizes alone (no weights are allocated).
  int64_t parameter_count() const;
};

/// Qwen2Model: embed_tokens -> layers -> norm.
class Qwen2Model : public nn::Module {
public:
  Qwen2Model(const Qwen2Config &config, Generator &generator);
  /// Token ids [B, S] -> final hidden states [B, S, hidden].
  Tensor forward(const Tensor &ids) override;
  /// The final hidden state [B, hidden] of token `last` (an i64 scalar
  /// tensor) of ids [B, S] at positions position .. position + S - 1,
  /// attending over one cache per layer (updated; see nn::cached_attention).
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

/// Reads a Hugging Face Qwen2 config.json. Missing sizes, values of the
/// wrong type and settings that would change the math but are not
/// implemented (rope_scaling, use_sliding_window, a hidden_act other than
/// silu, a head_dim other than hidden_size / num_attention_heads) are
/// errors naming the file and key.
Qwen2Config readQwen2Config(const std::string &path);
/// Writes a config.json that HF's Qwen2ForCausalLM.from_pretrained reads.
void writeQwen2Config(const Qwen2Config &config, const std::string &path);

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
