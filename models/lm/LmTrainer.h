//===- LmTrainer.h - Training a language model from its plan ----*- C++ -*-===//
//
// The training loop of lm-train. It needs only the runtime (no MLIR), so it
// runs a plan compiled here (models/lm/LmPlan.h) as well as one compiled
// elsewhere for the GPU machine, which has no compiler.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_LM_LMTRAINER_H
#define GENESIS_MODELS_LM_LMTRAINER_H

#include "models/common/Sampling.h"
#include "runtime/session/Session.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace genesis::models {

/// The sizes of the language model (GPT-2 or Qwen2) a training plan holds,
/// read from its tensor table.
struct LmShape {
  /// "GPT-2" or "Qwen2".
  std::string architecture;
  int64_t batch = 0;
  int64_t sequence = 0;
  int64_t vocab = 0;
  int64_t layers = 0;
  int64_t width = 0;
  /// Every parameter.
  int64_t parameters = 0;
  /// The learned position embedding, which costs no FLOPs.
  int64_t positionParameters = 0;

  /// Training FLOPs per token, PaLM's estimate (Chowdhery et al. 2022,
  /// appendix B) as nanoGPT computes it: 6 N + 12 L S d, with N the
  /// parameters except the position embedding (the tied token embedding
  /// counts: it is also the LM head's matrix), L layers, S the sequence
  /// length, d the width. 6 N is one multiply-add (2 FLOPs) per weight in
  /// the forward pass and two in the backward; 12 L S d is the same for the
  /// attention scores Q K^T and their product with V (4 S d per token and
  /// layer forward), counted over the whole S x S square although the causal
  /// half is masked.
  double flopsPerToken() const;
};

/// Reads the shape from a plan with `train_step` and `loss` over inputs
/// `ids` and `targets` [batch, sequence] and GPT-2's parameter names
/// (wte.weight, wpe.weight, h.<i>.*) or Qwen2's (model.embed_tokens.weight,
/// model.layers.<i>.*). Throws genesis::Error naming the plan
/// and what is missing.
LmShape describeLmPlan(const Session &session);

struct LmTrainOptions {
  /// Optimizer steps of the whole run (the schedule spans them all).
  int64_t steps = 2000;
  /// Peak learning rate, reached after `warmupSteps`, then cosine decay to
  /// `minLearningRate` at `steps`.
  double learningRate = 3e-3;
  double minLearningRate = 3e-4;
  int64_t warmupSteps = 100;
  /// Seed of the training windows: step t draws its windows from Philox
  /// counters [t * batch, (t + 1) * batch) of this seed, so a resumed run
  /// sees the same batches as an uninterrupted one.
  uint64_t seed = 0;
  /// A progress line every `logEvery` steps.
  int64_t logEvery = 10;
  /// Validation loss (and a checkpoint) every `evalEvery` steps and at the
  /// end, over the same `evalBatches` batches of validation windows.
  int64_t evalEvery = 100;
  int64_t evalBatches = 4;
  /// Stop (as if interrupted, after a checkpoint) after this step; 0 runs
  /// every step.
  int64_t stopAfterStep = 0;
  /// Directory of checkpoint.safetensors, training.tsv and training.png.
  std::string outputDir = "lm-run";
  /// Checkpoint to resume from ("" for none). The log rows up to its step
  /// are taken from the training.tsv beside it, when there is one (or, for
  /// a session that has trained before without a checkpoint loaded, from
  /// the output directory's).
  std::string resume;
  /// Peak FLOP/s of the device for MFU; 0 when unknown (no MFU printed).
  double peakFlops = 0;
  /// Drawn in the plot as the line the loss must fall below (nats).
  double unigramEntropy = std::numeric_limits<double>::quiet_NaN();
  /// Named in the plot's title, e.g. "CPU plan".
  std::string device = "CPU plan";
};

/// One row of the training log: the mean training loss over the steps
/// since the previous row, and the validation loss when this row's step
/// evaluated it (NaN otherwise).
struct LmLogRecord {
  int64_t step = 0;
  double trainLoss = 0;
  double validationLoss = std::numeric_limits<double>::quiet_NaN();
  double learningRate = 0;
  double tokensPerSecond = 0;
  /// Wall time since this process started training.
  double seconds = 0;
};

struct LmTrainResult {
  /// The step count the run started at (0, or the checkpoint's step).
  int64_t firstStep = 0;
  /// The loss of every step this run took, in order.
  std::vector<double> losses;
  /// The rows of training.tsv, including those before a resume.
  std::vector<LmLogRecord> log;
  /// Tokens per second of the train steps after the first (which loads and
  /// warms everything), excluding validation and checkpoints.
  double tokensPerSecond = 0;
};

/// Trains `session` (a plan from compileLmTrainingPlan, parameters bound) on
/// windows of `train`, evaluating on `validation`: a progress line every
/// logEvery steps (loss, learning rate, tokens/s, MFU when the peak is
/// known, ETA), the validation loss every evalEvery steps, a checkpoint with
/// each evaluation and at the end, then a table on stdout and training.tsv
/// and training.png (with gnuplot) in the output directory. Throws
/// genesis::Error when the corpus is too short for the plan's windows or
/// holds ids outside its vocabulary.
LmTrainResult trainLm(Session &session, const std::vector<int32_t> &train,
                      const std::vector<int32_t> &validation,
                      const LmTrainOptions &options);

/// The mean loss of the first `batches` batches of consecutive windows of
/// `validation` (window i starts at token i * sequence).
double evaluateLm(Session &session, const std::vector<int32_t> &validation,
                  int64_t batches);

/// Continues `prompt` by `count` tokens, each drawn by `picker` (greedy at
/// temperature 0: the lowest id among the most likely) from the logits of
/// a plan from compileLmSamplingPlan. Without a KV cache, every token reruns
/// the forward pass on the last `sequence` tokens; the positions after them
/// are padded, which the causal attention keeps from changing the logits
/// that are read.
std::vector<int64_t> continuePrompt(Session &sampler,
                                    const std::vector<int64_t> &prompt,
                                    int64_t count, text::Sampler &picker);

} // namespace genesis::models

#endif // GENESIS_MODELS_LM_LMTRAINER_H
