//===- Qwen2Config.cpp - Qwen2's configuration and config.json ------------===//

#include "models/qwen2/Qwen2Config.h"
#include "models/common/ConfigFile.h"
#include "runtime/formats/Json.h"

#include <vector>

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

void checkQwen2Size(const Qwen2Config &config, const std::string &where) {
  hf::checkModelSize(where, approximateParameters(config),
                     config.num_hidden_layers,
                     {{"vocab_size", config.vocab_size},
                      {"hidden_size", config.hidden_size},
                      {"intermediate_size", config.intermediate_size},
                      {"num_hidden_layers", config.num_hidden_layers}});
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
  checkQwen2Size(config, file.where());
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

} // namespace genesis::models
