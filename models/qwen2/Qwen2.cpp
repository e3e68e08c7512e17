//===- Qwen2.cpp - Qwen2 dense decoder in the Genesis frontend ------------===//

#include "models/qwen2/Qwen2.h"
#include "frontend/Trace.h"
#include "models/common/HuggingFace.h"
#include "runtime/formats/Json.h"

namespace genesis::models {

Qwen2Model::Qwen2Model(const Qwen2Config &config, Generator &generator) {
  checkQwen2Size(config, "Qwen2 model");
  nn::DecoderLayer::Config layer;
  layer.hidden = config.hidden_size;
  layer.intermediate = config.intermediate_size;
  layer.num_heads = config.num_attention_heads;
  layer.num_kv_heads = config.num_key_value_heads;
  layer.rms_norm_eps = config.rms_norm_eps;
  layer.rope_theta = config.rope_theta;
  layer.qkv_bias = config.attention_bias;
  embed_tokens = register_module(
      "embed_tokens", std::make_shared<nn::Embedding>(
                          config.vocab_size, config.hidden_size, generator));
  layers = register_module(
      "layers", std::make_shared<nn::ModuleList<nn::DecoderLayer>>());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i)
    layers->push_back(std::make_shared<nn::DecoderLayer>(layer, generator));
  norm = register_module("norm", std::make_shared<nn::RMSNorm>(
                                     config.hidden_size, config.rms_norm_eps));
}

Tensor Qwen2Model::forward(const Tensor &ids) {
  Tensor x = embed_tokens->forward(ids);
  for (auto &layer : *layers)
    x = layer->forward(x);
  return norm->forward(x);
}

Tensor Qwen2Model::forward_cached(const Tensor &ids, const Tensor &position,
                                  const Tensor &last,
                                  std::vector<nn::KvCache> &caches) {
  if (caches.size() != layers->size())
    ids.trace().fail(Site::current(),
                     "Qwen2: " + std::to_string(caches.size()) +
                         " KV caches for " + std::to_string(layers->size()) +
                         " layers");
  Tensor x = embed_tokens->forward(ids);
  for (size_t i = 0; i < caches.size(); ++i)
    x = (*layers)[i].forward_cached(x, position, caches[i]);
  // Only row `last` reaches the final norm (and the LM head); a lone token
  // is that row (last is 0).
  Tensor row = ids.size(1) == 1 ? x : index_select(x, 1, last.reshape({1}));
  return norm->forward(row.squeeze(1));
}

Qwen2ForCausalLM::Qwen2ForCausalLM(const Qwen2Config &config,
                                   Generator &generator)
    : config(config) {
  model =
      register_module("model", std::make_shared<Qwen2Model>(config, generator));
  if (!config.tie_word_embeddings)
    lm_head = register_module("lm_head",
                              std::make_shared<nn::Linear>(config.hidden_size,
                                                           config.vocab_size,
                                                           false, generator));
  // HF's Qwen2PreTrainedModel._init_weights replaces the layers' torch
  // defaults: N(0, initializer_range) matrices, zero biases; norms stay 1.
  for (auto &[name, parameter] : named_parameters()) {
    HostArray &data = parameter->data();
    if (data.rank() == 2)
      generator.fill_normal(data, 0.0, config.initializer_range);
    else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0)
      data = HostArray(data.dtype(), data.shape());
  }
}

Tensor Qwen2ForCausalLM::forward(const Tensor &ids) {
  return logits(model->forward(ids));
}

Tensor Qwen2ForCausalLM::forward_cached(const Tensor &ids,
                                        const Tensor &position,
                                        const Tensor &last,
                                        std::vector<nn::KvCache> &caches) {
  return logits(model->forward_cached(ids, position, last, caches));
}

Tensor Qwen2ForCausalLM::logits(const Tensor &hidden) {
  if (lm_head)
    return lm_head->forward(hidden);
  return linear(hidden, model->embed_tokens->weight);
}

std::unique_ptr<Qwen2ForCausalLM> loadQwen2(const std::string &directory) {
  Qwen2Config config = readQwen2Config(directory + "/config.json");
  // A generator of its own: the weights drawn here are all replaced, and
  // the caller's default generator should not advance.
  Generator generator(0);
  auto model = std::make_unique<Qwen2ForCausalLM>(config, generator);
  hf::loadWeights(*model, hf::weightsFile(directory));
  model->eval();
  return model;
}

void saveQwen2(Qwen2ForCausalLM &model, const std::string &directory,
               uint64_t maxShardBytes) {
  writeQwen2Config(model.config, directory + "/config.json");
  hf::saveWeights(model, directory + "/model.safetensors", {}, maxShardBytes);
}

} // namespace genesis::models
