//===- GenerationConfig.h - Hugging Face generation_config.json -*- C++ -*-===//
//
// What a model directory's generation_config.json (transformers'
// GenerationConfig) says about generating: the tokens that end a reply and
// the default sampling. genesis-generate uses it where the command line is
// silent.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_GENERATIONCONFIG_H
#define GENESIS_MODELS_COMMON_GENERATIONCONFIG_H

#include "models/common/Sampling.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genesis::text {

struct GenerationConfig {
  /// eos_token_id: one id or a list (Qwen2.5-Instruct: <|im_end|> and
  /// <|endoftext|>).
  std::vector<int64_t> eosTokenIds;
  /// do_sample; transformers' default is greedy decoding.
  bool doSample = false;
  /// temperature, top_k, top_p as given (transformers' defaults when
  /// sampling: 1.0, 50, 1.0).
  std::optional<double> temperature;
  std::optional<int64_t> topK;
  std::optional<double> topP;
  std::optional<int64_t> maxNewTokens;
  /// repetition_penalty (1: none), applied with and without do_sample.
  std::optional<double> repetitionPenalty;
  /// Settings that change the result and that Genesis does not apply
  /// (num_beams > 1, no_repeat_ngram_size, ...), as "key value".
  std::vector<std::string> unsupported;

  /// The sampling transformers' generate() would do with this config:
  /// greedy (temperature 0) without do_sample, else its temperature, top-k
  /// and top-p or transformers' defaults for those absent; its repetition
  /// penalty either way.
  SamplingOptions sampling() const;
};

/// Reads and checks `path`. Throws genesis::Error naming the file and the
/// key for a file that is not a JSON object or a key of the wrong type or
/// range (an eos_token_id that is not a non-negative integer, a negative
/// temperature, a top_p outside (0, 1], ...).
GenerationConfig loadGenerationConfig(const std::string &path);

} // namespace genesis::text

#endif // GENESIS_MODELS_COMMON_GENERATIONCONFIG_H
