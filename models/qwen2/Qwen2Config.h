//===- Qwen2Config.h - Qwen2's configuration and config.json ----*- C++ -*-===//
//
// The sizes of a Qwen2 and Hugging Face's config.json for them, apart from
// the model (no MLIR), so that loaders and the config fuzzer link only this.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_QWEN2_QWEN2CONFIG_H
#define GENESIS_MODELS_QWEN2_QWEN2CONFIG_H

#include <cstdint>
#include <string>

namespace genesis::models {

/// The settings of HF's Qwen2Config that Genesis implements. The defaults
/// are Qwen2.5-0.5B's; readQwen2Config falls back to HF's Qwen2Config
/// defaults for optional keys a file omits.
struct Qwen2Config {
  int64_t vocab_size = 151936;
  int64_t hidden_size = 896;
  int64_t intermediate_size = 4864;
  int64_t num_hidden_layers = 24;
  int64_t num_attention_heads = 14;
  int64_t num_key_value_heads = 2;
  /// Stored and written back; RoPE itself needs no table length.
  int64_t max_position_embeddings = 32768;
  double rms_norm_eps = 1e-6;
  double rope_theta = 1e6;
  double initializer_range = 0.02;
  bool tie_word_embeddings = true;
  /// Bias on q_proj, k_proj and v_proj (o_proj never has one).
  bool attention_bias = true;

  /// Qwen/Qwen2.5-0.5B: 494,032,768 parameters.
  static Qwen2Config qwen2_5_0_5b();
  /// 2 layers, hidden 64, intermediate 128, 4 heads over 2 KV heads,
  /// vocab 256: for tests.
  static Qwen2Config tiny();

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  /// The parameter count of the model this config builds, worked out from
  /// the sizes alone (no weights are allocated).
  int64_t parameter_count() const;
};

/// Refuses a model too deep or too large before anything is allocated,
/// naming `where` ("Qwen2 model", "config file '...'") and the sizes
/// (hf::checkModelSize).
void checkQwen2Size(const Qwen2Config &config, const std::string &where);

/// Reads a Hugging Face Qwen2 config.json. Missing sizes, values of the
/// wrong type and settings that would change the math but are not
/// implemented (rope_scaling, use_sliding_window, a hidden_act other than
/// silu, a head_dim other than hidden_size / num_attention_heads) are
/// errors naming the file and key.
Qwen2Config readQwen2Config(const std::string &path);
/// Writes a config.json that HF's Qwen2ForCausalLM.from_pretrained reads.
void writeQwen2Config(const Qwen2Config &config, const std::string &path);

} // namespace genesis::models

#endif // GENESIS_MODELS_QWEN2_QWEN2CONFIG_H
