//===- Gpt2Config.cpp - GPT-2's configuration and config.json -------------===//

#include "models/gpt2/Gpt2Config.h"
#include "models/common/ConfigFile.h"

namespace genesis::models {

/// The parameters of `config` (embeddings and 12 width^2 a layer), in
/// double so that no product of sizes overflows.
static double approximateParameters(const Gpt2Config &config) {
  double width = static_cast<double>(config.n_embd);
  return (static_cast<double>(config.vocab_size) +
          static_cast<double>(config.n_positions)) *
             width +
         static_cast<double>(config.n_layer) * 12 * width * width;
}

void checkGpt2Size(const Gpt2Config &config, const std::string &where) {
  hf::checkModelSize(where, approximateParameters(config), config.n_layer,
                     {{"vocab_size", config.vocab_size},
                      {"n_positions", config.n_positions},
                      {"n_embd", config.n_embd},
                      {"n_layer", config.n_layer}});
}

Gpt2Config readGpt2Config(const std::string &path) {
  hf::ConfigFile file(path);
  file.requireDefault("model_type", {"gpt2"}, "this is not a GPT-2 config");
  // gelu_pytorch_tanh is the same function as gelu_new.
  file.requireDefault("activation_function", {"gelu_new", "gelu_pytorch_tanh"},
                      "the MLP uses GELU's tanh approximation");
  file.requireDefault("scale_attn_weights", {true},
                      "attention scores are always scaled by 1/sqrt(head_dim)");
  file.requireDefault(
      "scale_attn_by_inverse_layer_idx", {false},
      "scaling attention by the layer index is not implemented");
  file.requireDefault("add_cross_attention", {false},
                      "cross-attention is not implemented");

  Gpt2Config config;
  config.vocab_size = file.positiveInt("vocab_size");
  config.n_positions = file.positiveInt("n_positions");
  config.n_embd = file.positiveInt("n_embd");
  config.n_layer = file.positiveInt("n_layer");
  config.n_head = file.positiveInt("n_head");
  // The fallbacks are HF's GPT2Config defaults.
  config.layer_norm_epsilon = file.positiveNumber("layer_norm_epsilon", 1e-5);
  config.dropout = file.probability("resid_pdrop", 0.1);
  config.tie_word_embeddings = file.flag("tie_word_embeddings", true);
  if (config.n_embd % config.n_head != 0)
    file.fail("n_head", "(" + std::to_string(config.n_head) +
                            ") must divide n_embd (" +
                            std::to_string(config.n_embd) + ")");
  // Before 4 n_embd below, which the size check keeps from overflowing.
  checkGpt2Size(config, file.where());
  file.requireDefault("n_inner", {nullptr, 4 * config.n_embd},
                      "an MLP width other than 4 n_embd is not implemented");
  return config;
}

void writeGpt2Config(const Gpt2Config &config, const std::string &path) {
  hf::writeConfigFile(
      path, {{"architectures", nlohmann::json::array({"GPT2LMHeadModel"})},
             {"model_type", "gpt2"},
             {"vocab_size", config.vocab_size},
             {"n_positions", config.n_positions},
             {"n_embd", config.n_embd},
             {"n_layer", config.n_layer},
             {"n_head", config.n_head},
             {"n_inner", nullptr},
             {"layer_norm_epsilon", config.layer_norm_epsilon},
             {"activation_function", "gelu_new"},
             {"resid_pdrop", config.dropout},
             {"embd_pdrop", config.dropout},
             {"attn_pdrop", 0.0},
             {"scale_attn_weights", true},
             {"scale_attn_by_inverse_layer_idx", false},
             {"reorder_and_upcast_attn", false},
             {"initializer_range", 0.02},
             {"tie_word_embeddings", config.tie_word_embeddings},
             {"torch_dtype", "float32"}});
}

} // namespace genesis::models
