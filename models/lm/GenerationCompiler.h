//===- GenerationCompiler.h - Generation plans of LMs -----------*- C++ -*-===//
//
// The compiler half of generation: the language models Genesis implements
// behind one interface (CausalLM), how to load or build them, and the
// tracing and compilation of their generation plan (prefill and decode
// sharing parameters and a static KV cache; see Generation.h for the plan's
// contract, which the runtime half checks).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_LM_GENERATIONCOMPILER_H
#define GENESIS_MODELS_LM_GENERATIONCOMPILER_H

#include "frontend/Trace.h"
#include "frontend/nn/Layers.h"
#include "models/gpt2/Gpt2.h"
#include "models/qwen2/Qwen2.h"
#include "passes/Passes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace genesis::lm {

/// A decoder-only language model that can run with a KV cache.
class CausalLM {
public:
  virtual ~CausalLM();
  /// "gpt2" or "qwen2", as Hugging Face's model_type.
  virtual std::string modelType() const = 0;
  /// The model: its parameters (state_dict keys are the plan's parameter
  /// names) and its forward, ids [B, S] -> logits [B, S, vocab].
  virtual nn::Module &model() = 0;
  /// The logits [B, vocab] after token `last` of ids [B, S] at positions
  /// position .. position + S - 1 (`position` a scalar, or [B] for one token
  /// per sequence), attending over one cache per layer.
  virtual Tensor forward_cached(const Tensor &ids, const Tensor &position,
                                const Tensor &last,
                                std::vector<nn::KvCache> &caches) = 0;
  virtual int64_t numLayers() const = 0;
  virtual int64_t numKvHeads() const = 0;
  virtual int64_t headDim() const = 0;
  virtual int64_t vocabSize() const = 0;
  /// The longest sequence the model was made for (GPT-2's n_positions,
  /// Qwen2's max_position_embeddings).
  virtual int64_t maxPositions() const = 0;
};

/// Loads the Hugging Face directory `directory` (config.json and
/// model.safetensors) as the model its config's model_type names: "gpt2" or
/// "qwen2"; any other is a genesis::Error naming the file.
std::unique_ptr<CausalLM> loadCausalLM(const std::string &directory);

/// The model of `config` with weights drawn from `generator`, in eval mode.
std::unique_ptr<CausalLM> makeCausalLM(const models::Gpt2Config &config,
                                       Generator &generator);
std::unique_ptr<CausalLM> makeCausalLM(const models::Qwen2Config &config,
                                       Generator &generator);

/// The names randomCausalLM accepts.
std::vector<std::string> randomModelNames();
/// A model of a named configuration with random weights drawn from `seed`:
/// "gpt2-tiny" and "qwen2-tiny" (2 layers, width 64, vocabulary 512, 1024
/// positions), "gpt2-124m" (GPT-2 small) and "qwen2.5-0.5b". Throws
/// genesis::Error listing the names for another.
std::unique_ptr<CausalLM> randomCausalLM(const std::string &name,
                                         uint64_t seed);

/// The shapes a generation plan is compiled for.
struct GenerationShape {
  /// Positions in the KV cache: the longest conversation.
  int64_t maxLength = 512;
  /// Tokens per prefill call.
  int64_t prefillLength = 32;
  /// Sequences decoded together (a cache row each; Generation.h).
  int64_t batch = 1;
};

/// @prefill, @decode and @decode_greedy (see Generation.h) traced into one
/// module; `caches`
/// holds the zero-filled cache buffers the traces bind as "cache.".
struct GenerationTraces {
  std::unique_ptr<nn::KvCacheBuffers> caches;
  std::unique_ptr<Trace> prefill;
  std::unique_ptr<Trace> decode;
  std::unique_ptr<Trace> decodeGreedy;
};

/// The type the floating parameters of `lm` are stored in: f32, bf16 or f16
/// (a mix, or another type, is a genesis::Error). The generation plan keeps
/// its weights and KV cache in that type and computes in f32; 16-bit GEMMs
/// (genesis-amp) read the weights directly.
DType storedDType(CausalLM &lm);

/// Traces `lm` for `shape`. Throws genesis::Error for a maxLength beyond
/// lm.maxPositions(), a prefillLength outside [1, maxLength] or a batch
/// below 1.
GenerationTraces traceGeneration(CausalLM &lm, const GenerationShape &shape);

/// Traces and compiles the generation plan; returns the plan file's bytes.
/// With 16-bit weights the cuda plan's GEMMs compute in that type
/// (options.mixedPrecision, unless set); a CPU plan widens each weight to
/// f32 where it is used (slower than f32 weights: genesis-generate refuses
/// it).
/// Throws genesis::Error with the compiler's first diagnostic on failure.
std::vector<uint8_t> compileGeneration(CausalLM &lm,
                                       const GenerationShape &shape,
                                       const PlanOptions &options);

} // namespace genesis::lm

#endif // GENESIS_MODELS_LM_GENERATIONCOMPILER_H
