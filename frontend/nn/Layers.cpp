//===- Layers.cpp - Standard layers of the frontend -----------------------===//

#include "frontend/nn/Layers.h"
#include "frontend/Trace.h"

#include <cmath>

namespace genesis::nn {

namespace {
HostArray uniform(Generator &generator, Shape shape, double bound) {
  HostArray array(DType::F32, std::move(shape));
  generator.fill_uniform(array, -bound, bound);
  return array;
}

HostArray filled(Shape shape, double value) {
  HostArray array(DType::F32, std::move(shape));
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setDouble(i, value);
  return array;
}
} // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias,
               Generator &generator)
    : weight(register_parameter(
          "weight",
          uniform(generator, {out_features, in_features},
                  1.0 / std::sqrt(static_cast<double>(in_features))))) {
  if (bias)
    this->bias = &register_parameter(
        "bias", uniform(generator, {out_features},
                        1.0 / std::sqrt(static_cast<double>(in_features))));
}

Tensor Linear::forward(const Tensor &x) {
  return linear(x, weight, bias ? std::optional<Tensor>(*bias) : std::nullopt);
}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim,
                     Generator &generator, double std)
    : weight(register_parameter("weight", [&] {
        HostArray table(DType::F32, {num_embeddings, embedding_dim});
        generator.fill_normal(table, 0.0, std);
        return table;
      }())) {}

Tensor Embedding::forward(const Tensor &ids) {
  return index_select(weight, 0, ids);
}

LayerNorm::LayerNorm(int64_t dim, double eps, bool elementwise_affine,
                     bool bias)
    : eps(eps) {
  if (elementwise_affine) {
    weight = &register_parameter("weight", filled({dim}, 1.0));
    if (bias)
      this->bias = &register_parameter("bias", filled({dim}, 0.0));
  }
}

Tensor LayerNorm::forward(const Tensor &x) {
  auto optional = [](Parameter *p) {
    return p ? std::optional<Tensor>(*p) : std::nullopt;
  };
  return layer_norm(x, optional(weight), optional(bias), eps);
}

RMSNorm::RMSNorm(int64_t dim, double eps)
    : weight(register_parameter("weight", filled({dim}, 1.0))), eps(eps) {}

Tensor RMSNorm::forward(const Tensor &x) { return rms_norm(x, weight, eps); }

Dropout::Dropout(double p) : p(p) {
  if (!(p >= 0.0 && p < 1.0))
    throw Error("Dropout probability must be in [0, 1), got " +
                std::to_string(p));
}

Tensor Dropout::forward(const Tensor &x) {
  return dropout(x, p, is_training());
}

namespace {
/// The buffers "k" and "v" of one layer.
class LayerCache : public Module {
public:
  LayerCache(const Shape &shape, DType dtype) {
    register_buffer("k", HostArray(dtype, shape));
    register_buffer("v", HostArray(dtype, shape));
  }
};
} // namespace

KvCacheBuffers::KvCacheBuffers(int64_t num_layers, int64_t batch,
                               int64_t kv_heads, int64_t max_len,
                               int64_t head_dim, DType dtype) {
  if (!isFloatDType(dtype))
    throw Error(
        std::string("KvCacheBuffers: the cache must hold floats, not ") +
        dtypeName(dtype));
  auto layers = register_module("layers", std::make_shared<ModuleList<>>());
  for (int64_t i = 0; i < num_layers; ++i)
    layers->push_back(std::make_shared<LayerCache>(
        Shape{batch, kv_heads, max_len, head_dim}, dtype));
}

std::vector<KvCache> KvCacheBuffers::caches() {
  NamedParameters buffers = named_buffers();
  std::vector<KvCache> caches;
  for (size_t i = 0; i + 1 < buffers.size(); i += 2)
    caches.push_back(
        {buffers[i].second->tensor(), buffers[i + 1].second->tensor()});
  return caches;
}

Tensor token_positions(const Tensor &position, int64_t seq) {
  Tensor steps = arange(position.trace(), seq);
  if (position.dim() == 0)
    return steps + position;
  return position.unsqueeze(1) + steps.unsqueeze(0);
}

namespace {
/// `cache` [B, H, T, D] with rows position .. position + S - 1 replaced by
/// `rows` [B, H, S, D]: an elementwise select of a gather, which a plan runs
/// in place on the cache's buffer. One row (a decode step) is a broadcast
/// rather than a gather, so the select is one kernel. With a position per
/// sequence ([B], one token each), row b lands at position[b].
Tensor write_rows(const Tensor &cache, const Tensor &rows,
                  const Tensor &position) {
  int64_t seq = rows.size(2), length = cache.size(2);
  Tensor cachePositions = arange(cache.trace(), length);
  if (position.dim() == 1) {
    Tensor inside =
        eq(cachePositions.unsqueeze(0), position.unsqueeze(1)); // [B, T]
    return where(inside.reshape({cache.size(0), 1, length, 1}),
                 broadcast_to(rows, cache.shape()), cache);
  }
  Tensor offset = cachePositions - position;
  Tensor inside = logical_and(ge(offset, full_like(offset, 0)),
                              lt(offset, full_like(offset, seq)));
  Tensor source = seq == 1 ? broadcast_to(rows, cache.shape())
                           : index_select(rows, 2, clamp(offset, 0, seq - 1));
  return where(inside.reshape({1, 1, length, 1}), source, cache);
}
} // namespace

Tensor cached_attention(const Tensor &q, const Tensor &k, const Tensor &v,
                        const Tensor &position, KvCache &cache) {
  Trace &trace = q.trace();
  int64_t batch = q.size(0), seq = q.size(2), length = cache.key.size(2);
  bool perRow = position.dim() == 1;
  if (position.dim() > 1 || (perRow && position.size(0) != batch) ||
      (perRow && seq != 1))
    trace.fail(Site::current(),
               "cached_attention: position must be a scalar, or one position "
               "per sequence [B] for one token each; got position " +
                   shapeString(position.shape()) + " for queries " +
                   shapeString(q.shape()));
  // A 16-bit cache stores rounded keys and values; attention reads them
  // widened to the queries' type.
  cache.key = write_rows(cache.key, k.to(cache.key.dtype()), position);
  cache.value = write_rows(cache.value, v.to(cache.value.dtype()), position);
  // Query s (at position + s) may attend to key t when t <= position + s:
  // [S, T], or [B, 1, S, T] with a position per sequence.
  Tensor allowed = le(arange(trace, length).unsqueeze(0),
                      token_positions(position, seq).unsqueeze(-1));
  if (perRow)
    allowed = allowed.unsqueeze(1);
  return scaled_dot_product_attention(q, cache.key.to(q.dtype()),
                                      cache.value.to(q.dtype()), allowed);
}

Attention::Attention(int64_t hidden, int64_t num_heads, int64_t num_kv_heads,
                     double rope_theta, bool qkv_bias, Generator &generator)
    : num_heads(num_heads), num_kv_heads(num_kv_heads),
      head_dim(num_heads > 0 ? hidden / num_heads : 0), rope_theta(rope_theta) {
  if (num_heads <= 0 || num_kv_heads <= 0 || hidden % num_heads != 0 ||
      num_heads % num_kv_heads != 0)
    throw Error("Attention: hidden (" + std::to_string(hidden) +
                ") must divide into num_heads (" + std::to_string(num_heads) +
                "), a multiple of num_kv_heads (" +
                std::to_string(num_kv_heads) + ")");
  int64_t kvWidth = num_kv_heads * head_dim;
  q_proj = register_module(
      "q_proj", std::make_shared<Linear>(hidden, hidden, qkv_bias, generator));
  k_proj = register_module(
      "k_proj", std::make_shared<Linear>(hidden, kvWidth, qkv_bias, generator));
  v_proj = register_module(
      "v_proj", std::make_shared<Linear>(hidden, kvWidth, qkv_bias, generator));
  o_proj = register_module(
      "o_proj", std::make_shared<Linear>(hidden, hidden, false, generator));
}

std::array<Tensor, 3> Attention::rotated_projections(const Tensor &x,
                                                     const Tensor &cos,
                                                     const Tensor &sin) {
  int64_t batch = x.size(0), seq = x.size(1);
  auto heads = [&](const Tensor &t, int64_t count) {
    return t.reshape({batch, seq, count, head_dim}).transpose(1, 2);
  };
  Tensor q = heads(q_proj->forward(x), num_heads);
  Tensor k = heads(k_proj->forward(x), num_kv_heads);
  Tensor v = heads(v_proj->forward(x), num_kv_heads);
  return {apply_rotary(q, cos, sin), apply_rotary(k, cos, sin), v};
}

Tensor Attention::merge_heads(const Tensor &o) {
  int64_t batch = o.size(0), seq = o.size(2);
  return o_proj->forward(
      o.transpose(1, 2).reshape({batch, seq, num_heads * head_dim}));
}

Tensor Attention::forward(const Tensor &x) {
  auto [cos, sin] =
      rope_tables(x.trace(), x.size(1), head_dim, rope_theta, x.dtype());
  auto [q, k, v] = rotated_projections(x, cos, sin);
  return merge_heads(scaled_dot_product_attention(q, k, v, std::nullopt,
                                                  /*is_causal=*/true));
}

Tensor Attention::forward_cached(const Tensor &x, const Tensor &position,
                                 KvCache &cache) {
  Tensor positions = token_positions(position, x.size(1));
  // A position per sequence: tables [B, S, D] of each row's positions.
  Shape tableShape = positions.shape();
  tableShape.push_back(head_dim);
  auto [cos, sin] = rope_tables(positions.reshape({positions.numel()}),
                                head_dim, rope_theta, x.dtype());
  auto [q, k, v] =
      rotated_projections(x, cos.reshape(tableShape), sin.reshape(tableShape));
  return merge_heads(cached_attention(q, k, v, position, cache));
}

SwiGLU::SwiGLU(int64_t hidden, int64_t intermediate, Generator &generator) {
  gate_proj = register_module(
      "gate_proj",
      std::make_shared<Linear>(hidden, intermediate, false, generator));
  up_proj =
      register_module("up_proj", std::make_shared<Linear>(hidden, intermediate,
                                                          false, generator));
  down_proj = register_module(
      "down_proj",
      std::make_shared<Linear>(intermediate, hidden, false, generator));
}

Tensor SwiGLU::forward(const Tensor &x) {
  return down_proj->forward(silu(gate_proj->forward(x)) * up_proj->forward(x));
}

DecoderLayer::DecoderLayer(const Config &config, Generator &generator) {
  self_attn = register_module(
      "self_attn", std::make_shared<Attention>(
                       config.hidden, config.num_heads, config.num_kv_heads,
                       config.rope_theta, config.qkv_bias, generator));
  mlp = register_module(
      "mlp",
      std::make_shared<SwiGLU>(config.hidden, config.intermediate, generator));
  input_layernorm = register_module(
      "input_layernorm",
      std::make_shared<RMSNorm>(config.hidden, config.rms_norm_eps));
  post_attention_layernorm = register_module(
      "post_attention_layernorm",
      std::make_shared<RMSNorm>(config.hidden, config.rms_norm_eps));
}

Tensor DecoderLayer::forward(const Tensor &x) {
  Tensor h = x + self_attn->forward(input_layernorm->forward(x));
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

Tensor DecoderLayer::forward_cached(const Tensor &x, const Tensor &position,
                                    KvCache &cache) {
  Tensor h = x + self_attn->forward_cached(input_layernorm->forward(x),
                                           position, cache);
  return h + mlp->forward(post_attention_layernorm->forward(h));
}

} // namespace genesis::nn
