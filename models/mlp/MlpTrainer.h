//===- MlpTrainer.h - Training the MLP from a compiled plan -----*- C++ -*-===//
//
// The training loop of the main job. It needs only the runtime (no MLIR), so
// the same loop runs in mlp-fashion-mnist, which compiles the plan first, and
// in mlp-train, which runs a plan compiled elsewhere (the GPU machine has no
// compiler).
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_MLP_MLPTRAINER_H
#define GENESIS_MODELS_MLP_MLPTRAINER_H

#include "runtime/session/Session.h"

#include <cstdint>
#include <string>

namespace genesis::models {

struct MlpTrainOptions {
  int64_t epochs = 5;
  double learningRate = 2e-3;
  /// Weight and shuffle seed.
  uint64_t seed = 0;
  /// Use the first N training images.
  int64_t trainImages = 60000;
  /// Directory for the checkpoint, table and plot.
  std::string outputDir = "mlp-run";
  /// Checkpoint to resume from ("" for none).
  std::string resume;
  /// Stop (as if interrupted) after this epoch; 0 runs every epoch.
  int64_t stopAfterEpoch = 0;
  /// Named in the plot's title, e.g. "CPU plan".
  std::string device = "CPU plan";
};

/// Trains `session` (a plan from compileMlpTrainingPlan, parameters bound)
/// on Fashion-MNIST with AdamW under a warmup-cosine schedule, batch size
/// from the plan: a progress line per step (loss, samples/s, ETA), the test
/// loss and accuracy each epoch, a checkpoint after each epoch, then a table
/// on stdout and training.tsv / training.png in the output directory.
void trainMlp(Session &session, const MlpTrainOptions &options);

} // namespace genesis::models

#endif // GENESIS_MODELS_MLP_MLPTRAINER_H
