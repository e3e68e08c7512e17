//===- Gpt2.h - GPT-2 in the Genesis frontend -------------------*- C++ -*-===//
//
// OpenAI's GPT-2 with Hugging Face's GPT2Model parameter names and layouts
// ("wte.weight", "h.0.attn.c_attn.weight" stored [in, out] as HF's Conv1D,
// "ln_f.bias"). The LM head is tied to the token embedding unless
// tie_word_embeddings is false ("lm_head.weight"). Initialisation follows HF:
// N(0, 0.02), residual projections N(0, 0.02 / sqrt(2 n_layer)), zero biases.
// A Hugging Face GPT2LMHeadModel directory (config.json + model.safetensors)
// loads with loadGpt2 and saves with saveGpt2; in HF files the GPT2Model
// names carry the prefix "transformer.".
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_GPT2_GPT2_H
#define GENESIS_MODELS_GPT2_GPT2_H

#include "frontend/nn/Layers.h"
#include "models/common/HuggingFace.h"
#include "models/gpt2/Gpt2Config.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace genesis::models {

/// y = x W + b with W stored [in, out] (Hugging Face's Conv1D).
class Conv1D : public nn::Module {
public:
  Conv1D(int64_t in, int64_t out, double std, Generator &generator);
  Tensor forward(const Tensor &x) override;
  nn::Parameter &weight, &bias;
};

class Gpt2Block : public nn::Module {
public:
  Gpt2Block(const Gpt2Config &config, Generator &generator);
  Tensor forward(const Tensor &x) override;
  /// forward for the tokens x at positions position .. position + S - 1
  /// (an i64 scalar tensor, or [B] for one token per sequence), attending
  /// over `cache`, which it updates (see nn::cached_attention).
  Tensor forward_cached(const Tensor &x, const Tensor &position,
                        nn::KvCache &cache);
  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<Conv1D> c_attn, attn_proj, c_fc, mlp_proj;
  int64_t n_head;
  double dropout;

private:
  using Attend =
      std::function<Tensor(const Tensor &q, const Tensor &k, const Tensor &v)>;
  /// The block around an attention of q, k, v [B, H, S, D].
  Tensor forward(const Tensor &x, const Attend &attend);
};

class Gpt2 : public nn::Module {
public:
  explicit Gpt2(const Gpt2Config &config,
                Generator &generator = default_generator());
  /// Token ids [B, S] -> logits [B, S, vocab].
  Tensor forward(const Tensor &ids) override;
  /// The logits [B, vocab] of token `last` (an i64 scalar tensor) of ids
  /// [B, S] at positions position .. position + S - 1 (or [B] positions,
  /// one token per sequence), attending over one
  /// cache per block (updated; see nn::cached_attention). Positions past
  /// n_positions are clamped to the last learned one: only padding may lie
  /// there.
  Tensor forward_cached(const Tensor &ids, const Tensor &position,
                        const Tensor &last, std::vector<nn::KvCache> &caches);
  Gpt2Config config;
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::ModuleList<Gpt2Block>> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
  /// Null when tie_word_embeddings: the head is then wte's weight.
  std::shared_ptr<nn::Linear> lm_head;

private:
  /// ln_f and the LM head.
  Tensor logits(const Tensor &hidden);
};

/// GPT-2's tensor names in HF files: "transformer." + the GPT2Model names
/// ("lm_head.weight" as is); the causal-mask buffers "attn.bias" and
/// "attn.masked_bias" that older files hold are skipped.
hf::TensorNames gpt2TensorNames();

/// Builds the model of `directory`/config.json and loads its weights
/// (model.safetensors, or the shards of model.safetensors.index.json: see
/// hf::weightsFile and hf::loadWeights), in eval mode.
std::unique_ptr<Gpt2> loadGpt2(const std::string &directory);
/// Writes `directory`/config.json and `directory`/model.safetensors (f32,
/// HF's GPT2LMHeadModel names), or shards of at most `maxShardBytes` when it
/// is not 0 and the weights are larger (see hf::saveWeights); the directory
/// must exist.
void saveGpt2(Gpt2 &model, const std::string &directory,
              uint64_t maxShardBytes = 0);

} // namespace genesis::models

#endif // GENESIS_MODELS_GPT2_GPT2_H
