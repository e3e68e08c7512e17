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
#include "runtime/support/Random.h"

#include <array>

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

/// The keys and values of one attention layer at every position a generation
/// can reach, [B, Hkv, max_len, D] each. A cached forward replaces both by
/// their updated values; traced into a plan, they are persistent buffers that
/// the plan's functions update in place.
struct KvCache {
  Tensor key, value;
};

/// Zero-filled buffers "layers.<i>.k" and "layers.<i>.v", one KvCache per
/// layer, [batch, kv_heads, max_len, head_dim] each, of a float `dtype`
/// (bf16 or f16 halves the cache; cached_attention rounds into it). Kept out of
/// the model so that its state_dict stays the checkpoint's; bind it with its
/// own prefix (Trace::bind(caches, "cache.")).
class KvCacheBuffers : public Module {
public:
  KvCacheBuffers(int64_t num_layers, int64_t batch, int64_t kv_heads,
                 int64_t max_len, int64_t head_dim, DType dtype = DType::F32);
  /// The traced buffers of the most recent bind, in layer order.
  std::vector<KvCache> caches();
};

/// The positions of S tokens from `position` on: [S] for an i64 scalar, [B, S]
/// for one position per sequence ([B], batched decoding).
Tensor token_positions(const Tensor &position, int64_t seq);

/// Attention of S queries q [B, Hq, S, D] at positions position .. position +
/// S - 1 (`position` an i64 scalar tensor) over a cache: first writes the new
/// keys and values k, v [B, Hkv, S, D] into `cache` at those positions (rows
/// past the cache's end are dropped), then lets query s attend to the cached
/// positions t <= position + s. Returns [B, Hq, S, D]; GQA reads the Hkv
/// heads of the cache directly. For batched decoding `position` may hold one
/// position per sequence ([B], S = 1): each sequence writes and attends at
/// its own.
Tensor cached_attention(const Tensor &q, const Tensor &k, const Tensor &v,
                        const Tensor &position, KvCache &cache);

/// Causal self-attention with grouped-query heads and rotary embeddings, as
/// Qwen2Attention: q/k/v projections (with bias when `qkv_bias`), o_proj
/// without bias. Input and output are [B, S, hidden].
class Attention : public Module {
public:
  Attention(int64_t hidden, int64_t num_heads, int64_t num_kv_heads,
            double rope_theta = 1e6, bool qkv_bias = true,
            Generator &generator = default_generator());
  Tensor forward(const Tensor &x) override;
  /// forward for the tokens x at positions position .. position + S - 1
  /// (an i64 scalar tensor, or [B] for one token per sequence), attending
  /// over `cache`, which it updates (see cached_attention).
  Tensor forward_cached(const Tensor &x, const Tensor &position,
                        KvCache &cache);
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, o_proj;
  int64_t num_heads, num_kv_heads, head_dim;
  double rope_theta;

private:
  /// o_proj of the attention output o [B, Hq, S, D].
  Tensor merge_heads(const Tensor &o);
  /// q, k and v of x [B, S, hidden] as [B, H, S, D], RoPE applied to q and k.
  std::array<Tensor, 3> rotated_projections(const Tensor &x, const Tensor &cos,
                                            const Tensor &sin);
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
  /// forward with Attention::forward_cached.
  Tensor forward_cached(const Tensor &x, const Tensor &position,
                        KvCache &cache);
  std::shared_ptr<RMSNorm> input_layernorm, post_attention_layernorm;
  std::shared_ptr<Attention> self_attn;
  std::shared_ptr<SwiGLU> mlp;
};

} // namespace genesis::nn

#endif // GENESIS_FRONTEND_NN_LAYERS_H
