//===- Qwen2.cpp - Qwen2 dense decoder in the Genesis frontend ------------===//

#include "models/qwen2/Qwen2.h"
#include "frontend/Trace.h"
#include "models/common/HuggingFace.h"
#include "runtime/formats/Json.h"

namespace genesis::models {

Qwen2Config Qwen2Config::qwen2_5_0_5b() { return Qwen2Config(); }

Qwen2Config Qwen2Config::tiny() {
  Qwen2Config config;
  config.vocab_size = 256;
  config.hidden_size = 64;
  config.intermediate_size = 128;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 4;
  config.num_key_value_heads = 2;
  config.max_position_embeddings = 128;
  return config;
}

int64_t Qwen2Config::parameter_count() const {
  int64_t hidden = hidden_size, kvWidth = num_key_value_heads * head_dim();
  int64_t attention = 2 * hidden * hidden + 2 * hidden * kvWidth +
                      (attention_bias ? hidden + 2 * kvWidth : 0);
  int64_t mlp = 3 * hidden * intermediate_size;
  int64_t layer = attention + mlp + 2 * hidden; // + two RMSNorm weights
  int64_t embedding = vocab_size * hidden;
  return embedding + num_hidden_layers * layer + hidden +
         (tie_word_embeddings ? 0 : embedding);
}

/// parameter_count() in double, with full-width key/value projections:
/// no product of the sizes overflows.
static double approximateParameters(const Qwen2Config &config) {
  double hidden = static_cast<double>(config.hidden_size);
  double embedding = static_cast<double>(config.vocab_size) * hidden;
  double layer = 4 * hidden * hidden +
                 3 * hidden * static_cast<double>(config.intermediate_size);
  return embedding * (config.tie_word_embeddings ? 1 : 2) +
         static_cast<double>(config.num_hidden_layers) * layer;
}

/// Refuses a model too deep or too large before anything is allocated,
/// naming `where` and the sizes (hf::checkModelSize).
static void checkSize(const Qwen2Config &config, const std::string &where) {
  hf::checkModelSize(where, approximateParameters(config),
                     config.num_hidden_layers,
                     {{"vocab_size", config.vocab_size},
                      {"hidden_size", config.hidden_size},
                      {"intermediate_size", config.intermediate_size},
                      {"num_hidden_layers", config.num_hidden_layers}});
}

Qwen2Model::Qwen2Model(const Qwen2Config &config, Generator &generator) {
  checkSize(config, "Qwen2 model");
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
  // Only row `last` reaches the final norm (and the LM head).
  return norm->forward(index_select(x, 1, last.reshape({1})).squeeze(1));
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

Qwen2Config readQwen2Config(const std::string &path) {
  hf::ConfigFile file(path);
  file.requireDefault("model_type", {"qwen2"}, "this is not a Qwen2 config");
  file.requireDefault("hidden_act", {"silu"},
                      "the MLP is SwiGLU, whose gate activation is SiLU");

  Qwen2Config config;
  config.vocab_size = file.positiveInt("vocab_size");
  config.hidden_size = file.positiveInt("hidden_size");
  config.intermediate_size = file.positiveInt("intermediate_size");
  config.num_hidden_layers = file.positiveInt("num_hidden_layers");
  config.num_attention_heads = file.positiveInt("num_attention_heads");
  // The fallbacks are HF's Qwen2Config defaults.
  config.num_key_value_heads =
      file.positiveInt("num_key_value_heads", config.num_attention_heads);
  config.max_position_embeddings =
      file.positiveInt("max_position_embeddings", 32768);
  config.rms_norm_eps = file.positiveNumber("rms_norm_eps", 1e-6);
  config.rope_theta = file.ropeTheta(10000.0);
  config.initializer_range = file.positiveNumber("initializer_range", 0.02);
  config.tie_word_embeddings = file.flag("tie_word_embeddings", false);
  config.attention_bias = file.flag("attention_bias", true);

  if (config.hidden_size % config.num_attention_heads != 0)
    file.fail("num_attention_heads",
              "(" + std::to_string(config.num_attention_heads) +
                  ") must divide hidden_size (" +
                  std::to_string(config.hidden_size) + ")");
  if (config.num_attention_heads % config.num_key_value_heads != 0)
    file.fail("num_key_value_heads",
              "(" + std::to_string(config.num_key_value_heads) +
                  ") must divide num_attention_heads (" +
                  std::to_string(config.num_attention_heads) + ")");
  if (config.head_dim() % 2 != 0)
    file.fail("num_attention_heads", "gives an odd head_dim " +
                                         std::to_string(config.head_dim()) +
                                         "; RoPE needs an even one");
  // Sliding-window attention: transformers 4.x marks it with
  // use_sliding_window (for the layers from max_window_layers on), 5.x lists
  // each layer's kind in layer_types. Only full attention is implemented.
  if (file.flag("use_sliding_window", false) &&
      file.positiveInt("max_window_layers", 28) < config.num_hidden_layers)
    file.fail("use_sliding_window",
              "is true: sliding-window attention is not implemented");
  if (const nlohmann::json *types = file.find("layer_types")) {
    if (!types->is_array() ||
        static_cast<int64_t>(types->size()) != config.num_hidden_layers)
      file.fail("layer_types", "must list one kind for each of the " +
                                   std::to_string(config.num_hidden_layers) +
                                   " layers, got " + describeJson(*types));
    for (size_t i = 0; i < types->size(); ++i)
      if ((*types)[i] != "full_attention")
        file.fail("layer_types[" + std::to_string(i) + "]",
                  "is " + describeJson((*types)[i]) +
                      ": only \"full_attention\" is implemented");
  }
  file.requireDefault("head_dim", {config.head_dim()},
                      "a head_dim other than hidden_size / "
                      "num_attention_heads is not implemented");
  checkSize(config, file.where());
  return config;
}

void writeQwen2Config(const Qwen2Config &config, const std::string &path) {
  hf::writeConfigFile(
      path, {{"architectures", nlohmann::json::array({"Qwen2ForCausalLM"})},
             {"model_type", "qwen2"},
             {"vocab_size", config.vocab_size},
             {"hidden_size", config.hidden_size},
             {"intermediate_size", config.intermediate_size},
             {"num_hidden_layers", config.num_hidden_layers},
             {"num_attention_heads", config.num_attention_heads},
             {"num_key_value_heads", config.num_key_value_heads},
             {"max_position_embeddings", config.max_position_embeddings},
             {"rms_norm_eps", config.rms_norm_eps},
             // Both forms, so that transformers 4.x (top-level rope_theta)
             // and 5.x (rope_parameters) read the same theta.
             {"rope_theta", config.rope_theta},
             {"rope_parameters",
              {{"rope_theta", config.rope_theta}, {"rope_type", "default"}}},
             {"layer_types", std::vector<std::string>(config.num_hidden_layers,
                                                      "full_attention")},
             {"initializer_range", config.initializer_range},
             {"tie_word_embeddings", config.tie_word_embeddings},
             {"attention_bias", config.attention_bias},
             {"hidden_act", "silu"},
             {"use_sliding_window", false},
             {"sliding_window", nullptr},
             {"max_window_layers", config.num_hidden_layers},
             {"attention_dropout", 0.0},
             {"dtype", "float32"}});
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
