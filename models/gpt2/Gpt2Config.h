//===- Gpt2Config.h - GPT-2's configuration and config.json -----*- C++ -*-===//
//
// The sizes of a GPT-2 and Hugging Face's config.json for them, apart from
// the model (no MLIR), so that loaders and the config fuzzer link only this.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_GPT2_GPT2CONFIG_H
#define GENESIS_MODELS_GPT2_GPT2CONFIG_H

#include <cstdint>
#include <string>

namespace genesis::models {

struct Gpt2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double layer_norm_epsilon = 1e-5;
  /// Dropout on the embeddings and the residual branches while training
  /// (HF's resid_pdrop and embd_pdrop; there is no attention dropout).
  double dropout = 0.0;
  bool tie_word_embeddings = true;
};

/// Refuses a model too deep or too large before anything is allocated,
/// naming `where` ("GPT-2 model", "config file '...'") and the sizes
/// (hf::checkModelSize).
void checkGpt2Size(const Gpt2Config &config, const std::string &where);

/// Reads a Hugging Face GPT-2 config.json. Missing sizes, values of the
/// wrong type and settings that would change the math but are not
/// implemented (an activation other than gelu_new, n_inner other than
/// 4 n_embd, unscaled or layer-scaled attention, cross-attention) are errors
/// naming the file and key. `dropout` is read from resid_pdrop.
Gpt2Config readGpt2Config(const std::string &path);
/// Writes a config.json that HF's GPT2LMHeadModel.from_pretrained reads.
void writeGpt2Config(const Gpt2Config &config, const std::string &path);

} // namespace genesis::models

#endif // GENESIS_MODELS_GPT2_GPT2CONFIG_H
