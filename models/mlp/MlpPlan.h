//===- MlpPlan.h - The compiled MLP training plan ---------------*- C++ -*-===//

#ifndef GENESIS_MODELS_MLP_MLPPLAN_H
#define GENESIS_MODELS_MLP_MLPPLAN_H

#include "frontend/nn/Module.h"
#include "runtime/plan/PlanFile.h"

#include <cstdint>
#include <vector>

namespace genesis::models {

/// A plan for `target` with `train_step` (cross-entropy, AdamW with weight
/// decay 0.01 except on biases) and `loss` (returning the loss and the logits)
/// for an MLP classifier of 784 inputs and 10 classes on batches of `batch`.
/// Prints the traced IR first when `printIr`.
std::vector<uint8_t>
compileMlpTrainingPlan(nn::Sequential &model, int64_t batch,
                       bool printIr = false,
                       plan::Target target = plan::Target::Cpu);

} // namespace genesis::models

#endif // GENESIS_MODELS_MLP_MLPPLAN_H
