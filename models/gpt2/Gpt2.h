//===- Gpt2.h - GPT-2 in the Genesis frontend -------------------*- C++ -*-===//
//
// OpenAI's GPT-2 with Hugging Face's GPT2Model parameter names and layouts
// ("wte.weight", "h.0.attn.c_attn.weight" stored [in, out] as HF's Conv1D,
// "ln_f.bias"), so its state_dict loads GPT-2 safetensors directly. The LM
// head is tied to the token embedding. Initialisation follows HF: N(0, 0.02),
// residual projections N(0, 0.02 / sqrt(2 n_layer)), zero biases.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_GPT2_GPT2_H
#define GENESIS_MODELS_GPT2_GPT2_H

#include "frontend/nn/Layers.h"

namespace genesis::models {

struct Gpt2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double layer_norm_epsilon = 1e-5;
  double dropout = 0.0; ///< resid/embd/attn dropout while training
};

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
  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<Conv1D> c_attn, attn_proj, c_fc, mlp_proj;
  int64_t n_head;
  double dropout;
};

class Gpt2 : public nn::Module {
public:
  explicit Gpt2(const Gpt2Config &config,
                Generator &generator = default_generator());
  /// Token ids [B, S] -> logits [B, S, vocab].
  Tensor forward(const Tensor &ids) override;
  Gpt2Config config;
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::ModuleList<Gpt2Block>> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
};

} // namespace genesis::models

#endif // GENESIS_MODELS_GPT2_GPT2_H
