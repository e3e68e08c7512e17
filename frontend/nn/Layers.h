//===- Layers.h - Standard layers of the frontend ---------------*- C++ -*-===//
//
// The torch.nn layers Genesis models are made of, with PyTorch's parameter
// names, shapes and default initialisation (drawn from a seeded Generator, so
// the same seed gives the same weights), and the Qwen2/LLaMA decoder pieces
// with Hugging Face names (q_proj, gate_proj, input_layernorm, ...).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_NN_LAYERS_H
#define GENESIS_FRONTEND_NN_LAYERS_H

#include "frontend/nn/Module.h"
#include "runtime/Random.h"

namespace genesis::nn {

/// y = x W^T + b; W [out, in] and b [out] ~ U(-1/sqrt(in), 1/sqrt(in)), the
/// distribution torch's kaiming_uniform_(a=sqrt(5)) default gives.
class Linear : public Module {
public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true,
         Generator &generator = default_generator());
  Tensor forward(const Tensor &x) override;
  Parameter &weight;
  Parameter *bias = nullptr;
};

/// Rows of a [num_embeddings, dim] table ~ N(0, std^2) (torch: std = 1);
/// forward takes integer ids.
class Embedding : public Module {
public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            Generator &generator = default_generator(), double std = 1.0);
  Tensor forward(const Tensor &ids) override;
  Parameter &weight;
};

/// Normalises the last dimension; weight = 1, bias = 0.
class LayerNorm : public Module {
public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5,
                     bool elementwise_affine = true, bool bias = true);
  Tensor forward(const Tensor &x) override;
  Parameter *weight = nullptr;
  Parameter *bias = nullptr;
  double eps;
};

/// x / sqrt(mean(x^2) + eps) * weight over the last dimension; weight = 1.
class RMSNorm : public Module {
public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor forward(const Tensor &x) override;
  Parameter &weight;
  double eps;
};

/// Inverted dropout while training; the identity in eval().
class Dropout : public Module {
public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor &x) override;
  double p;
};

class ReLU : public Module {
public:
  Tensor forward(const Tensor &x) override { return relu(x); }
};

class GELU : public Module {
public:
  explicit GELU(std::string approximate = "none")
      : approximate(std::move(approximate)) {}
  Tensor forward(const Tensor &x) override { return gelu(x, approximate); }
  std::string approximate;
};

class SiLU : public Module {
public:
  Tensor forward(const Tensor &x) override { return silu(x); }
};

class Tanh : public Module {
public:
  Tensor forward(const Tensor &x) override { return tanh(x); }
};

class Sigmoid : public Module {
public:
  Tensor forward(const Tensor &x) override { return sigmoid(x); }
};

class Softmax : public Module {
public:
  explicit Softmax(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor &x) override { return softmax(x, dim); }
  int64_t dim;
};

class Flatten : public Module {
public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor &x) override {
    return x.flatten(start_dim, end_dim);
  }
  int64_t start_dim, end_dim;
};

/// Causal self-attention with grouped-query heads and rotary embeddings, as
/// Qwen2Attention: q/k/v projections (with bias when `qkv_bias`), o_proj
/// without bias. Input and output are [B, S, hidden].
class Attention : public Module {
public:
  Attention(int64_t hidden, int64_t num_heads, int64_t num_kv_heads,
            double rope_theta = 1e6, bool qkv_bias = true,
            Generator &generator = default_generator());
  Tensor forward(const Tensor &x) override;
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, o_proj;
  int64_t num_heads, num_kv_heads, head_dim;
  double rope_theta;
};

/// down_proj(silu(gate_proj(x)) * up_proj(x)), as Qwen2MLP / LlamaMLP.
class SwiGLU : public Module {
public:
  SwiGLU(int64_t hidden, int64_t intermediate,
         Generator &generator = default_generator());
  Tensor forward(const Tensor &x) override;
  std::shared_ptr<Linear> gate_proj, up_proj, down_proj;
};

/// Pre-norm decoder layer: x + attn(norm(x)), then + mlp(norm(x)).
class DecoderLayer : public Module {
public:
  struct Config {
    int64_t hidden = 64;
    int64_t intermediate = 128;
    int64_t num_heads = 4;
    int64_t num_kv_heads = 2;
    double rms_norm_eps = 1e-6;
    double rope_theta = 1e6;
    bool qkv_bias = true;
  };
  explicit DecoderLayer(const Config &config,
                        Generator &generator = default_generator());
  Tensor forward(const Tensor &x) override;
  std::shared_ptr<RMSNorm> input_layernorm, post_attention_layernorm;
  std::shared_ptr<Attention> self_attn;
  std::shared_ptr<SwiGLU> mlp;
};

} // namespace genesis::nn

#endif // GENESIS_FRONTEND_NN_LAYERS_H
