//===- LmPlan.h - Compiled plans of a causal language model -----*- C++ -*-===//
//
// The compiler side of lm-train (it needs MLIR): the plan that trains a
// causal language model (GPT-2 or Qwen2) on next-token prediction and the
// plan that samples from it. The training loop itself
// (models/lm/LmTrainer.h) needs only the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_LM_LMPLAN_H
#define GENESIS_MODELS_LM_LMPLAN_H

#include "frontend/nn/Module.h"
#include "runtime/plan/PlanFile.h"

#include <cstdint>
#include <vector>

namespace genesis::models {

struct LmPlanOptions {
  int64_t batch = 16;
  /// Tokens per window (at most the model's n_positions).
  int64_t sequence = 64;
  plan::Target target = plan::Target::Cpu;
  /// Cuda: the chips to compile kernels for (PlanOptions::cudaChips).
  std::vector<uint32_t> cudaChips = {90};
  /// Let f32 GEMMs use TF32 tensor cores (cuda).
  bool allowTf32 = false;
  /// AdamW, decoupled; 1-D parameters (biases, layer norms) are not decayed.
  double weightDecay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  /// Maximum global gradient norm (0: no clipping).
  double clipGradNorm = 1.0;
  /// "bf16" or "f16": GEMMs in that type (genesis-amp, cuda only).
  std::string mixedPrecision;
  /// "dynamic": GradScaler's loss scale in the train step (for f16).
  std::string lossScale = "none";
  /// Bytes the training plan's arguments and temporaries may take
  /// (genesis-remat recomputes cheap activations to fit; 0: no budget). The
  /// sampling plan has none.
  int64_t memoryBudget = 0;
};

/// `model` maps ids i64 [B, S] to logits [B, S, vocab] (models::Gpt2,
/// models::Qwen2ForCausalLM).
///
/// A plan with two functions over ids and targets, i64 [batch, sequence]:
/// `train_step` (mean next-token cross-entropy, gradients, clipping and the
/// AdamW update; learning rate `lr` from the host) and `loss` (the same loss
/// without the update, for validation). Throws genesis::Error with the
/// compiler's first diagnostic on failure.
std::vector<uint8_t> compileLmTrainingPlan(nn::Module &model, int64_t vocab,
                                           const LmPlanOptions &options);

/// A plan with `forward`: ids i64 [1, sequence] -> logits f32 [1, sequence,
/// vocab], the forward pass used to sample (its parameters have the names
/// of the training plan's, so trained weights bind to it as they are).
std::vector<uint8_t> compileLmSamplingPlan(nn::Module &model,
                                           const LmPlanOptions &options);

} // namespace genesis::models

#endif // GENESIS_MODELS_LM_LMPLAN_H
