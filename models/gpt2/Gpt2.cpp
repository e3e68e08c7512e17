//===- Gpt2.cpp - GPT-2 in the Genesis frontend ---------------------------===//

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
  ln_1 = register_module(
      "ln_1", std::make_shared<nn::LayerNorm>(c, config.layer_norm_epsilon));
  c_attn = std::make_shared<Conv1D>(c, 3 * c, 0.02, generator);
  attn_proj = std::make_shared<Conv1D>(c, c, residualStd, generator);
  register_module("attn",
                  std::make_shared<Named>(std::make_pair("c_attn", c_attn),
                                          std::make_pair("c_proj", attn_proj)));
  ln_2 = register_module(
      "ln_2", std::make_shared<nn::LayerNorm>(c, config.layer_norm_epsilon));
  c_fc = std::make_shared<Conv1D>(c, 4 * c, 0.02, generator);
  mlp_proj = std::make_shared<Conv1D>(4 * c, c, residualStd, generator);
  register_module("mlp",
                  std::make_shared<Named>(std::make_pair("c_fc", c_fc),
                                          std::make_pair("c_proj", mlp_proj)));
}

Tensor Gpt2Block::forward(const Tensor &x, const Attend &attend) {
  int64_t batch = x.size(0), seq = x.size(1), width = x.size(2);
  int64_t headDim = width / n_head;
  auto qkv = split(c_attn->forward(ln_1->forward(x)), width, -1);
  auto heads = [&](const Tensor &t) {
    return t.reshape({batch, seq, n_head, headDim}).transpose(1, 2);
  };
  Tensor attended = attend(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]));
  Tensor merged = attended.transpose(1, 2).reshape({batch, seq, width});
  Tensor h =
      x + genesis::dropout(attn_proj->forward(merged), dropout, is_training());
  Tensor mlp = mlp_proj->forward(gelu(c_fc->forward(ln_2->forward(h)), "tanh"));
  return h + genesis::dropout(mlp, dropout, is_training());
}

Tensor Gpt2Block::forward(const Tensor &x) {
  return forward(x, [](const Tensor &q, const Tensor &k, const Tensor &v) {
    return scaled_dot_product_attention(q, k, v, std::nullopt,
                                        /*is_causal=*/true);
  });
}

Tensor Gpt2Block::forward_cached(const Tensor &x, const Tensor &position,
                                 nn::KvCache &cache) {
  return forward(x, [&](const Tensor &q, const Tensor &k, const Tensor &v) {
    return nn::cached_attention(q, k, v, position, cache);
  });
}

Gpt2::Gpt2(const Gpt2Config &config, Generator &generator) : config(config) {
  checkGpt2Size(config, "GPT-2 model");
  wte = register_module(
      "wte", std::make_shared<nn::Embedding>(config.vocab_size, config.n_embd,
                                             generator, 0.02));
  wpe = register_module(
      "wpe", std::make_shared<nn::Embedding>(config.n_positions, config.n_embd,
                                             generator, 0.01));
  h = register_module("h", std::make_shared<nn::ModuleList<Gpt2Block>>());
  for (int64_t i = 0; i < config.n_layer; ++i)
    h->push_back(std::make_shared<Gpt2Block>(config, generator));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(
                                     config.n_embd, config.layer_norm_epsilon));
  if (!config.tie_word_embeddings) {
    lm_head = register_module("lm_head", std::make_shared<nn::Linear>(
                                             config.n_embd, config.vocab_size,
                                             /*bias=*/false, generator));
    generator.fill_normal(lm_head->weight.data(), 0.0, 0.02);
  }
}

Tensor Gpt2::forward(const Tensor &ids) {
  int64_t seq = ids.size(1);
  if (seq > config.n_positions)
    ids.trace().fail(Site::current(), "GPT-2: sequence length " +
                                          std::to_string(seq) +
                                          " exceeds n_positions " +
                                          std::to_string(config.n_positions));
  Tensor positions = arange(ids.trace(), seq);
  Tensor x = wte->forward(ids) + wpe->forward(positions);
  x = genesis::dropout(x, config.dropout, is_training());
  for (auto &block : *h)
    x = block->forward(x);
  return logits(x);
}

Tensor Gpt2::forward_cached(const Tensor &ids, const Tensor &position,
                            const Tensor &last,
                            std::vector<nn::KvCache> &caches) {
  if (static_cast<int64_t>(caches.size()) != config.n_layer)
    ids.trace().fail(Site::current(),
                     "GPT-2: " + std::to_string(caches.size()) +
                         " KV caches for " + std::to_string(config.n_layer) +
                         " blocks");
  Tensor positions = clamp(nn::token_positions(position, ids.size(1)),
                           std::nullopt, config.n_positions - 1);
  Tensor x = wte->forward(ids) + wpe->forward(positions);
  x = genesis::dropout(x, config.dropout, is_training());
  for (size_t i = 0; i < caches.size(); ++i)
    x = (*h)[i].forward_cached(x, position, caches[i]);
  // Only row `last` reaches ln_f and the LM head; a lone token is that row
  // (last is 0).
  Tensor row = ids.size(1) == 1 ? x : index_select(x, 1, last.reshape({1}));
  return logits(row.squeeze(1));
}

Tensor Gpt2::logits(const Tensor &hidden) {
  Tensor normed = ln_f->forward(hidden);
  if (lm_head)
    return lm_head->forward(normed);
  // The LM head is the token embedding, transposed (tied weights).
  return linear(normed, wte->weight);
}

hf::TensorNames gpt2TensorNames() {
  hf::TensorNames names;
  names.prefix = "transformer.";
  names.unprefixed = {"lm_head.weight"};
  names.ignoredSuffixes = {".attn.bias", ".attn.masked_bias"};
  return names;
}

std::unique_ptr<Gpt2> loadGpt2(const std::string &directory) {
  Gpt2Config config = readGpt2Config(directory + "/config.json");
  // A generator of its own: the weights drawn here are all replaced, and
  // the caller's default generator should not advance.
  Generator generator(0);
  auto model = std::make_unique<Gpt2>(config, generator);
  hf::loadWeights(*model, hf::weightsFile(directory), gpt2TensorNames());
  model->eval();
  return model;
}

void saveGpt2(Gpt2 &model, const std::string &directory,
              uint64_t maxShardBytes) {
  writeGpt2Config(model.config, directory + "/config.json");
  hf::saveWeights(model, directory + "/model.safetensors", gpt2TensorNames(),
                  maxShardBytes);
}

} // namespace genesis::models
