//===- Pipelines.h - The registered CPU and CUDA pipelines ------*- C++ -*-===//
//
// The one place where the compiler's pass pipelines are built. compilePlan
// (genesis-compile, gpt2-plan, lm-compile, lm-train, genesis-generate,
// mlp-fashion-mnist) lowers through these builders, and genesis-opt runs the
// same pipelines by name (--genesis-cpu-pipeline, --genesis-cuda-pipeline),
// so what a user compiles can be replayed, timed (--mlir-timing) and printed
// pass by pass (--mlir-print-ir-after-all), in genesis-opt and in
// genesis-compile alike.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_PASSES_PIPELINES_H
#define GENESIS_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace genesis {

/// The options both pipelines take.
struct GenesisPipelineOptions
    : public mlir::PassPipelineOptions<GenesisPipelineOptions> {
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("bf16 or f16: genesis-amp computes the f32 GEMMs in that "
                     "type (cuda only); empty: every op in its own type"),
      llvm::cl::init("")};
  Option<std::string> trainStep{
      *this, "train-step",
      llvm::cl::desc("Options of genesis-train-step (\"optimizer=adamw "
                     "clip-grad-norm=1\"), which then runs first; empty: no "
                     "train step is built"),
      llvm::cl::init("")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Group ops into multi-op fusions and GEMM "
                                   "epilogues; false: one kernel per op"),
                    llvm::cl::init(true)};
  Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Bytes each function's arguments and temporaries may "
                     "take; genesis-remat recomputes cheap activations to "
                     "fit (0: no budget)"),
      llvm::cl::init(0)};
};

/// Reports an invalid option; returns failure.
using PipelineErrorHandler =
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>;

/// Appends the CPU pipeline to `pm` (a pass manager on builtin.module):
/// [genesis-train-step,] genesis-step-number, genesis-widen-16bit,
/// canonicalize, cse, genesis-fuse, genesis-split-mixed-shape-fusions,
/// [genesis-remat with a memory budget,] genesis-lower-cpu,
/// genesis-dedupe-kernels.
/// Fails through `onError` for options the CPU lacks (16-bit precision).
mlir::LogicalResult
buildGenesisCpuPipeline(mlir::OpPassManager &pm,
                        const GenesisPipelineOptions &options,
                        PipelineErrorHandler onError);

/// Appends the CUDA pipeline to `pm`: genesis-pad-classes,
/// [genesis-train-step,] genesis-step-number, [genesis-fused-attention,]
/// genesis-decode-attention,
/// genesis-decompose-attention, [genesis-decompose-layer-norm,]
/// genesis-decompose-cross-entropy, genesis-decompose-global-norm,
/// [genesis-amp,] canonicalize, cse, genesis-sink-widening-casts,
/// genesis-fuse, genesis-split-mixed-shape-fusions{gpu-profitable},
/// [genesis-merge-row-fusions, genesis-merge-side-results, cse unless
/// fuse=false,] genesis-split-column-reductions, [genesis-remat with a
/// memory budget,] genesis-lower-cuda, genesis-dedupe-kernels.
/// Multi-output fusions stay whole (the reduction emitter stores their side
/// results) except narrow column reductions and wide row-fusion chains.
mlir::LogicalResult
buildGenesisCudaPipeline(mlir::OpPassManager &pm,
                         const GenesisPipelineOptions &options,
                         PipelineErrorHandler onError);

/// Registers genesis-cpu-pipeline and genesis-cuda-pipeline.
void registerGenesisPipelines();

} // namespace genesis

#endif // GENESIS_PASSES_PIPELINES_H
