//===- Pipelines.cpp - The registered CPU and CUDA pipelines --------------===//
//
// Both pipelines share their front (the train step, step numbering,
// canonicalisation and fusion) and differ where the targets do: the GPU
// pads large classifiers to aligned class counts, runs 16-bit attention as
// cuDNN's flash attention and decomposes the rest
// of attention, cross-entropy's mean and the global norm into ops
// its emitters run in parallel, may compute GEMMs in 16 bits, and merges
// row fusions for its block-per-row emitter, and splits multi-output fusions
// only where its emitters do better split; the CPU splits every multi-output
// fusion of mixed shapes for its loop nests.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace genesis {
namespace {

/// [genesis-train-step,] genesis-step-number: the passes before any target
/// choice.
LogicalResult addTrainStep(OpPassManager &pm,
                           const GenesisPipelineOptions &options,
                           PipelineErrorHandler onError) {
  if (!options.trainStep.empty()) {
    std::unique_ptr<Pass> trainStep = createGenesisTrainStep();
    // initializeOptions reports the bad option through onError itself.
    if (failed(trainStep->initializeOptions(options.trainStep, onError)))
      return failure();
    pm.addPass(std::move(trainStep));
  }
  pm.addNestedPass<func::FuncOp>(createGenesisStepNumber());
  return success();
}

/// canonicalize, CSE[, genesis-fuse-cross-entropy-gradient,
/// genesis-chunk-classifier, genesis-fuse-gelu-gradient,
/// genesis-sink-widening-casts, genesis-pack-attention, canonicalize],
/// genesis-fuse.
void addFusion(OpPassManager &functionPm, const GenesisPipelineOptions &options,
               bool forCuda = false) {
  functionPm.addPass(createCanonicalizerPass());
  functionPm.addPass(createCSEPass());
  if (forCuda && options.fuse) {
    functionPm.addPass(createGenesisFuseCrossEntropyGradient());
    functionPm.addPass(createGenesisChunkClassifier());
    functionPm.addPass(createGenesisFuseGeluGradient());
  }
  if (forCuda)
    functionPm.addPass(createGenesisSinkWideningCasts());
  if (forCuda && options.fuse) {
    functionPm.addPass(createGenesisPackAttention());
    // Folds the transposes and slices it leaves around the packed tensors.
    functionPm.addPass(createCanonicalizerPass());
  }
  functionPm.addPass(createGenesisFuse(GenesisFuseOptions{options.fuse}));
}

} // namespace

LogicalResult buildGenesisCpuPipeline(OpPassManager &pm,
                                      const GenesisPipelineOptions &options,
                                      PipelineErrorHandler onError) {
  if (!options.precision.empty())
    return onError("genesis-cpu-pipeline: precision=" + options.precision +
                   " needs the cuda target (the CPU kernels compute in f32 "
                   "and f64)");
  if (failed(addTrainStep(pm, options, onError)))
    return failure();
  OpPassManager &functionPm = pm.nest<func::FuncOp>();
  functionPm.addPass(createGenesisWiden16Bit());
  addFusion(functionPm, options);
  functionPm.addPass(createGenesisSplitMixedShapeFusions());
  if (options.memoryBudget > 0)
    pm.addPass(createGenesisRemat(
        GenesisRematOptions{options.memoryBudget, /*alignment=*/64}));
  pm.addPass(createGenesisLowerCpu());
  pm.addPass(createGenesisDedupeKernels());
  return success();
}

LogicalResult buildGenesisCudaPipeline(OpPassManager &pm,
                                       const GenesisPipelineOptions &options,
                                       PipelineErrorHandler onError) {
  if (!options.precision.empty() && options.precision != "bf16" &&
      options.precision != "f16")
    return onError("genesis-cuda-pipeline: precision must be bf16 or f16, "
                   "got '" +
                   options.precision + "'");
  // Before the train step, so that autodiff differentiates the padding.
  pm.addNestedPass<func::FuncOp>(createGenesisPadClasses());
  if (failed(addTrainStep(pm, options, onError)))
    return failure();
  OpPassManager &functionPm = pm.nest<func::FuncOp>();
  if (!options.precision.empty())
    functionPm.addPass(createGenesisFusedAttention(
        GenesisFusedAttentionOptions{options.precision.getValue()}));
  functionPm.addPass(createGenesisDecodeAttention());
  functionPm.addPass(createGenesisDecomposeAttention());
  // Its row statistics become row fusions only where fusions merge.
  if (options.fuse)
    functionPm.addPass(createGenesisDecomposeLayerNorm());
  functionPm.addPass(createGenesisDecomposeCrossEntropy());
  functionPm.addPass(createGenesisDecomposeGlobalNorm());
  if (!options.precision.empty())
    functionPm.addPass(
        createGenesisAmp(GenesisAmpOptions{options.precision.getValue()}));
  addFusion(functionPm, options, /*forCuda=*/true);
  functionPm.addPass(createGenesisSplitMixedShapeFusions(
      GenesisSplitMixedShapeFusionsOptions{/*gpuProfitable=*/true}));
  if (options.fuse) {
    functionPm.addPass(createGenesisMergeRowFusions());
    functionPm.addPass(createGenesisMergeSideResults());
    // A merged sibling recomputes the reduction's elementwise ops.
    functionPm.addPass(createCSEPass());
  }
  functionPm.addPass(createGenesisSplitColumnReductions());
  if (options.fuse) {
    functionPm.addPass(createGenesisMergeSiblingReductions());
    functionPm.addPass(createGenesisMergeSiblingLoops());
    // The merged bodies recompute their shared elementwise ops.
    functionPm.addPass(createCSEPass());
    functionPm.addPass(createGenesisFuseMatrixVector());
    // After it: a loop computing a product's lhs is its prologue.
    functionPm.addPass(createGenesisHorizontalLoopFusion());
  }
  // Before remat, which then plans the groups' gradients' lifetimes.
  if (options.fuse)
    pm.addNestedPass<func::FuncOp>(createGenesisGroupOptimizerUpdates());
  if (options.memoryBudget > 0)
    pm.addPass(createGenesisRemat(
        GenesisRematOptions{options.memoryBudget, /*alignment=*/256}));
  pm.addPass(createGenesisLowerCuda());
  pm.addPass(createGenesisDedupeKernels());
  return success();
}

void registerGenesisPipelines() {
  using Builder = LogicalResult (*)(
      OpPassManager &, const GenesisPipelineOptions &, PipelineErrorHandler);
  auto add = [](StringRef name, StringRef description, Builder build) {
    registerPassPipeline(
        name, description,
        [build](OpPassManager &pm, StringRef text,
                function_ref<LogicalResult(const Twine &)> onError) {
          GenesisPipelineOptions options;
          if (failed(options.parseFromString(text)))
            return failure();
          return build(pm, options, onError);
        },
        [](function_ref<void(const mlir::detail::PassOptions &)> describe) {
          describe(GenesisPipelineOptions());
        });
  };
  add("genesis-cpu-pipeline",
      "The CPU pipeline of genesis-compile --target=cpu: fusion, loop "
      "kernels",
      buildGenesisCpuPipeline);
  add("genesis-cuda-pipeline",
      "The CUDA pipeline of genesis-compile --target=cuda: decompositions, "
      "mixed precision, fusion, GPU kernels",
      buildGenesisCudaPipeline);
}

} // namespace genesis
