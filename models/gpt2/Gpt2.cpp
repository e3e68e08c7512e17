//===- Gpt2.cpp - GPT-2 in the Genesis frontend ----------------------------===//

#include "models/gpt2/Gpt2.h"
#include "frontend/Trace.h"

#include <cmath>

namespace genesis::models {

namespace {
HostArray normal(Generator &generator, Shape shape, double std) {
  HostArray array(DType::F32, std::move(shape));
  generator.fill_normal(array, 0.0, std);
  return array;
}

/// HF names the two projections of a block's attention and MLP both
/// "c_proj"; they live in the children "attn" and "mlp".
class Named : public nn::Module {
public:
  template <typename... M>
  explicit Named(std::pair<const char *, std::shared_ptr<M>>... children) {
    (register_module(children.first, children.second), ...);
  }
};
} // namespace

Conv1D::Conv1D(int64_t in, int64_t out, double std, Generator &generator)
    : weight(register_parameter("weight", normal(generator, {in, out}, std))),
      bias(register_parameter("bias", HostArray(DType::F32, {out}))) {}

Tensor Conv1D::forward(const Tensor &x) { return matmul(x, weight) + bias; }

Gpt2Block::Gpt2Block(const Gpt2Config &config, Generator &generator)
    : n_head(config.n_head), dropout(config.dropout) {
  int64_t c = config.n_embd;
  double residualStd = 0.02 / std::sqrt(2.0 * config.n_layer);
  ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(
                                     c, config.layer_norm_epsilon));
  c_attn = std::make_shared<Conv1D>(c, 3 * c, 0.02, generator);
  attn_proj = std::make_shared<Conv1D>(c, c, residualStd, generator);
  register_module("attn", std::make_shared<Named>(
                              std::make_pair("c_attn", c_attn),
                              std::make_pair("c_proj", attn_proj)));
  ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(
                                     c, config.layer_norm_epsilon));
  c_fc = std::make_shared<Conv1D>(c, 4 * c, 0.02, generator);
  mlp_proj = std::make_shared<Conv1D>(4 * c, c, residualStd, generator);
  register_module("mlp", std::make_shared<Named>(
                             std::make_pair("c_fc", c_fc),
                             std::make_pair("c_proj", mlp_proj)));
}

Tensor Gpt2Block::forward(const Tensor &x) {
  int64_t batch = x.size(0), seq = x.size(1), width = x.size(2);
  int64_t headDim = width / n_head;
  auto qkv = split(c_attn->forward(ln_1->forward(x)), width, -1);
  auto heads = [&](const Tensor &t) {
    return t.reshape({batch, seq, n_head, headDim}).transpose(1, 2);
  };
  Tensor attended = scaled_dot_product_attention(
      heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), std::nullopt,
      /*is_causal=*/true);
  Tensor merged = attended.transpose(1, 2).reshape({batch, seq, width});
  Tensor h = x + genesis::dropout(attn_proj->forward(merged), dropout,
                                  is_training());
  Tensor mlp =
      mlp_proj->forward(gelu(c_fc->forward(ln_2->forward(h)), "tanh"));
  return h + genesis::dropout(mlp, dropout, is_training());
}

Gpt2::Gpt2(const Gpt2Config &config, Generator &generator) : config(config) {
  wte = register_module("wte", std::make_shared<nn::Embedding>(
                                   config.vocab_size, config.n_embd, generator,
                                   0.02));
  wpe = register_module("wpe", std::make_shared<nn::Embedding>(
                                   config.n_positions, config.n_embd, generator,
                                   0.01));
  h = register_module("h", std::make_shared<nn::ModuleList<Gpt2Block>>());
  for (int64_t i = 0; i < config.n_layer; ++i)
    h->push_back(std::make_shared<Gpt2Block>(config, generator));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(
                                     config.n_embd, config.layer_norm_epsilon));
}

Tensor Gpt2::forward(const Tensor &ids) {
  int64_t seq = ids.size(1);
  if (seq > config.n_positions)
    ids.trace().fail(Site::current(),
                     "GPT-2: sequence length " + std::to_string(seq) +
                         " exceeds n_positions " +
                         std::to_string(config.n_positions));
  Tensor positions = arange(ids.trace(), seq);
  Tensor x = wte->forward(ids) + wpe->forward(positions);
  x = genesis::dropout(x, config.dropout, is_training());
  for (auto &block : *h)
    x = block->forward(x);
  // The LM head is the token embedding, transposed (tied weights).
  return linear(ln_f->forward(x), wte->weight);
}

} // namespace genesis::models
