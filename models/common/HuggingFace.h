//===- HuggingFace.h - Hugging Face config.json and weights -----*- C++ -*-===//
//
// What every model needs to read and write a Hugging Face model directory:
// typed access to config.json whose errors name the file and key, and the
// transfer of a module's parameters from and to model.safetensors under
// Hugging Face's tensor names. The per-model parts (which keys a config has,
// which names a model's tensors carry in HF files) live with each model
// (models/gpt2, models/qwen2).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_HUGGINGFACE_H
#define GENESIS_MODELS_COMMON_HUGGINGFACE_H

#include "frontend/nn/Module.h"
#include "models/common/ConfigFile.h"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace genesis::models::hf {

/// How the state_dict keys of a Genesis module appear in Hugging Face files.
struct TensorNames {
  /// HF's name of every key is `prefix` + key, except the keys listed in
  /// `unprefixed`. Loading accepts names with or without the prefix (HF's
  /// from_pretrained does too: files of the base model lack it).
  std::string prefix;
  std::vector<std::string> unprefixed;
  /// Tensors that older HF files hold but that are not parameters (buffers
  /// HF now recomputes), matched by the end of the name; skipped on load.
  std::vector<std::string> ignoredSuffixes;
};

/// The weights of the Hugging Face checkpoint in `directory`, as
/// from_pretrained looks for them: model.safetensors, or, when there is
/// none, the sharded form's model.safetensors.index.json.
std::string weightsFile(const std::string &directory);

/// Loads every parameter and buffer of `module` from the safetensors file
/// `path`, or from the shards a `*.safetensors.index.json` file's
/// "weight_map" names (files in the index's directory; every shard must
/// hold exactly the tensors the map gives it). Before anything changes it
/// checks that each of the module's tensors is there exactly once with the
/// module's shape, that there are no other tensors (beyond
/// `names.ignoredSuffixes`) and that every dtype is F32, F16 or BF16;
/// half-precision tensors are widened to the module's f32 exactly. Errors
/// start with "safetensors file '<path>'" (or "checkpoint index '<path>'")
/// and name the tensor.
void loadWeights(nn::Module &module, const std::string &path,
                 const TensorNames &names = {});

/// Writes the module's state_dict to `path` (.../model.safetensors) under
/// HF's names, with the metadata {"format": "pt"} that from_pretrained
/// requires, atomically. When `maxShardBytes` is not 0 and the tensors
/// hold more bytes, they go instead, in state_dict order, to shards
/// model-00001-of-0000N.safetensors of at most that size beside `path` (a
/// larger tensor alone in its shard) with `path`.index.json mapping each to
/// its shard, as save_pretrained's max_shard_size does; the form not
/// written is removed, so the directory never holds stale weights that
/// from_pretrained would prefer.
void saveWeights(nn::Module &module, const std::string &path,
                 const TensorNames &names = {}, uint64_t maxShardBytes = 0);

} // namespace genesis::models::hf

#endif // GENESIS_MODELS_COMMON_HUGGINGFACE_H
