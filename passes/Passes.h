//===- Passes.h - Genesis passes --------------------------------*- C++ -*-===//

#ifndef GENESIS_PASSES_PASSES_H
#define GENESIS_PASSES_PASSES_H

#include "dialect/IR/GenesisDialect.h"
#include "runtime/plan/PlanFile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genesis {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Builds `@<forward>_grad` (see the genesis-autodiff pass) differentiating
/// `forward`'s first result with respect to the arguments `wrt`. Emits a
/// diagnostic and fails when the loss is not a float scalar, an argument is
/// not a float tensor, or a non-differentiable op lies on the path.
mlir::FailureOr<mlir::func::FuncOp> differentiate(mlir::func::FuncOp forward,
                                                  llvm::ArrayRef<unsigned> wrt);

class AttentionOp;

/// Replaces `op` by its decomposition into matmuls, a softmax and data
/// movement (genesis-decompose-attention's forward rewrite).
void decomposeAttention(AttentionOp op);

/// The ops that only move elements (transpose, slice, reshape, pad,
/// concat), which loop fusions compute by index mapping (genesis-fuse's
/// rule 2).
bool isDataMovement(mlir::Operation *op);

/// The bias `[N]` that `value`, `[..., N]`, broadcasts along its last
/// dimension (`broadcast_in_dim %bias, [rank - 1]`); null for any other
/// value.
mlir::Value broadcastBias(mlir::Value value);

/// The reduced dimensions of a reduce_sum, reduce_max or reduce_min;
/// std::nullopt for any other op.
std::optional<llvm::ArrayRef<int64_t>> reducedDims(mlir::Operation *op);

class FusionOp;

/// Whether two reductions reduce operands of one type over the same
/// dimensions to one result type (a reduction kernel can carry both).
bool alikeReductions(mlir::Operation *reduction, mlir::Operation *other);

/// The reductions of a reduction fusion: every reduce_sum, reduce_max or
/// reduce_min of the body, their operands of one type, their dimensions and
/// result types the same, each result used only by the yield, beside side
/// results of the operands' shape (genesis-merge-sibling-reductions makes
/// fusions of several). Empty for any other fusion.
llvm::SmallVector<mlir::Operation *> reductionFusionRoots(FusionOp fusion);

/// `consumer`'s body moved into `producer` (bound to the producer's yields
/// where it reads the producer's results, to its inputs otherwise): one
/// fusion in the producer's place yielding the producer's results, then the
/// consumer's, which replace theirs. The consumer's inputs must be defined
/// before the producer, except the producer's results. Defined in
/// MergeSideResults.cpp.
FusionOp mergeFusions(FusionOp producer, FusionOp consumer);

/// Whether every input of `fusion` is a block argument or defined before
/// `anchor` in `anchor`'s block: `fusion` may then move to `anchor`'s place
/// (mergeFusions). Defined in MergeSideResults.cpp.
bool inputsDefinedBefore(FusionOp fusion, mlir::Operation *anchor);

/// The 16-bit value `value` widens (a genesis.cast from bf16 or f16 to a
/// wider float), or null. Defined in SinkWideningCasts.cpp.
mlir::Value widenedFrom(mlir::Value value);

/// The element of a splat floating-point constant. Defined in Fuse.cpp.
std::optional<double> splatFloat(mlir::Value value);

/// Whether `fusion` computes element by element over `shape`: elementwise
/// ops, broadcasts and splat constants only, every result of `shape`
/// (genesis-merge-side-results and genesis-merge-sibling-loops merge such
/// fusions into others). Defined in MergeSideResults.cpp.
bool isElementwiseFusion(FusionOp fusion, llvm::ArrayRef<int64_t> shape);

/// The most ops one fusion holds (genesis-fuse's rule 6; the passes that
/// merge fusions keep to it).
inline constexpr int64_t kMaxFusionOps = 1024;

/// The ops of `fusion`'s body, its yield included (held to kMaxFusionOps).
/// Defined in MergeSideResults.cpp.
int64_t opCount(FusionOp fusion);

/// The most optimizer updates genesis-group-optimizer-updates puts in one
/// kernel: 16 updates take at most 144 pointer arguments (9 each, with their
/// own lr and step; 1152 bytes of CUDA's 4 KB of kernel parameters).
inline constexpr int64_t kMaxGroupedUpdates = 16;

/// Whether `op` updates a parameter and its optimizer state (SGD, SGD with
/// momentum, Adam, AdamW). Defined in GroupOptimizerUpdates.cpp.
bool isOptimizerUpdate(mlir::Operation *op);

/// Whether optimizer `updates` can run in one kernel in any order: none
/// reads another's result, and none reads a tensor another may overwrite
/// or reuse (its parameter, state or gradient: every operand but the
/// trailing lr and step, which they may share). Defined in
/// GroupOptimizerUpdates.cpp.
bool updatesAreIndependent(llvm::ArrayRef<mlir::Operation *> updates);

/// The reduction of a reduction fusion of one root (reductionFusionRoots).
/// Null for any other fusion.
mlir::Operation *reductionFusionRoot(FusionOp fusion);

/// Whether `op` has results and every one is a tensor of zero elements
/// (`tensor<3x0xf32>`, valid in PyTorch and MLIR): it computes nothing, so
/// the lowerings emit no kernel for it and the plan no step.
inline bool computesNothing(mlir::Operation *op) {
  return op->getNumResults() != 0 &&
         llvm::all_of(op->getResultTypes(), [](mlir::Type type) {
           auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
           return tensor && tensor.hasStaticShape() &&
                  tensor.getNumElements() == 0;
         });
}

/// Rows of at least this many classes run CUDA's block-per-row cross-entropy
/// kernel (one block streaming a row); genesis-fuse-cross-entropy-gradient
/// fuses only such rows, since narrower ones run faster a thread per row.
inline constexpr int64_t kWideCrossEntropyClasses = 1024;

/// Whether `op` (cross_entropy, cross_entropy_grad) computes a loss per row
/// (reduction none).
bool isPerRowLoss(mlir::Operation *op);

/// The logits' element types of CUDA's cross-entropy kernels, which compute
/// in f32: f32, bf16 and f16.
inline bool isGpuLogitsElement(mlir::Type element) {
  return element.isF32() || element.isBF16() || element.isF16();
}

/// The most micro-batches genesis-train-step accumulates: the batch inputs
/// gain a leading dimension of this size.
inline constexpr int64_t kMaxAccumulation = 65536;

/// Builds `@train_step` next to `loss` (see the genesis-train-step pass).
/// Every option is checked before anything is built.
mlir::FailureOr<mlir::func::FuncOp>
buildTrainStep(mlir::func::FuncOp loss, const GenesisTrainStepOptions &options);

/// Marks a genesis.fusion built by genesis-remat to recompute a value; its
/// kernel is named `<function>_remat<N>`.
inline constexpr llvm::StringLiteral kRematAttrName = "genesis.remat";

/// Whether `value` is a constant with one value everywhere (kernels
/// materialise it; the memory plan gives it no buffer unless an op kernel
/// reads it).
bool isSplatConstant(mlir::Value value);

/// Bytes of a statically shaped tensor of integers or floats of `type`
/// (`ceil(bits / 8)` per element); std::nullopt for any other type.
std::optional<int64_t> tensorBytes(mlir::Type type);

/// Where the temporaries of one function live in its arena (see the
/// genesis-plan-memory pass).
struct MemoryPlan {
  /// A range of the arena and the values that occupy it in turn (more than
  /// one through in-place reuse and reshape aliasing), in program order.
  /// `start` and `end` are the indices, in the function's top-level block,
  /// of the first definition and the last use.
  struct Buffer {
    int64_t offset = 0;
    int64_t bytes = 0;
    int64_t start = 0;
    int64_t end = 0;
    llvm::SmallVector<mlir::Value, 1> values;
  };

  int64_t alignment = 0;
  /// Size of the arena: the highest end of a buffer.
  int64_t arenaBytes = 0;
  /// Sum of the sizes of all planned values, before any sharing.
  int64_t temporaryBytes = 0;
  llvm::SmallVector<Buffer> buffers;
  /// Arena offset of every planned value; values without a buffer
  /// (arguments, splat constants, values inside regions) are absent.
  llvm::DenseMap<mlir::Value, int64_t> offsets;
};

/// Plans the temporaries of `function` (see the genesis-plan-memory pass)
/// with every offset a multiple of `alignment`, a power of two. Emits a
/// diagnostic and fails for a function without a body or with several
/// blocks, or a result that is not a statically shaped tensor of integers
/// or floats.
mlir::FailureOr<MemoryPlan> planMemory(mlir::func::FuncOp function,
                                       int64_t alignment = 64);

/// Checks `plan` against the liveness of `function` recomputed from its IR:
/// every value that needs a buffer has one, offsets are aligned and inside
/// the arena, the totals add up, and no two values share bytes while both
/// are live, except an operand that dies at an op allowed to overwrite it
/// with the result. Emits an error naming the first violation.
mlir::LogicalResult verifyMemoryPlan(mlir::func::FuncOp function,
                                     const MemoryPlan &plan);

/// genesis-fuse's rule 1 on `function`: every genesis.matmul becomes a
/// genesis.library_call, which then absorbs its scale, bias and activation
/// when `absorbEpilogues` is set.
void formLibraryCalls(mlir::func::FuncOp function, bool absorbEpilogues = true);

/// genesis-fuse's rules 2 to 5 on `function`: loop and input fusion groups
/// become genesis.fusion regions; without `grouping`, one per fusible op.
void formFusions(mlir::func::FuncOp function, bool grouping = true);

/// Compiles every function marked `genesis.kernel` (genesis-lower-cpu) into
/// a shared object for the host CPU and returns its bytes. Each kernel `k` is
/// exported twice: `extern "C" void k(void **args)` runs the whole kernel and
/// `void k_range(void **args, int64_t begin, int64_t end)` a slice of its
/// outermost loop; `args` holds the data pointers of the inputs and then the
/// outputs, in the kernel's argument order.
mlir::FailureOr<std::string> compileCpuKernels(mlir::ModuleOp source);

/// Whether genesis compiles CUDA kernels for the chip of compute
/// capability `chip` (major * 10 + minor): Ampere (80, 86, 87), Ada (89),
/// Hopper (90) and Blackwell (100, 103, 120, 121). The kernels need sm_80's
/// instructions (bf16, redux.sync) and nothing newer.
bool isSupportedChip(uint32_t chip);
/// The supported chips for messages: "sm_80, sm_86, ...".
std::string supportedChipList();
/// The chips of a `--cuda-arch` value ("sm_80,sm_89,sm_90"), ascending, each
/// once, or for "native" the chip of this machine's GPU (the newest supported
/// chip not above it; sm_90 without a GPU); throws genesis::Error naming the
/// flag and the first chip that is malformed or not supported.
std::vector<uint32_t> parseCudaArchs(const std::string &value);

/// How compilePlan compiles.
struct PlanOptions {
  /// Cpu (genesis-lower-cpu, one elf-so image) or Cuda (genesis-lower-cuda,
  /// a cubin per chip of `cudaChips` and the PTX of the oldest, which the
  /// driver compiles for any later chip).
  plan::Target target = plan::Target::Cpu;
  /// Cuda: the chips to compile cubins for (ascending, isSupportedChip).
  std::vector<uint32_t> cudaChips = {90};
  /// Print each pass manager's per-pass times to stderr.
  bool timing = false;
  /// Let f32 GEMMs use TF32 tensor cores (CUDA; ~1e-3 relative error).
  bool allowTf32 = false;
  /// "bf16" or "f16": genesis-amp computes the f32 GEMMs in that type
  /// (CUDA only); empty: everything in its own type.
  std::string mixedPrecision;
  /// false: one kernel per op (genesis-fuse grouping=false).
  bool fuse = true;
  /// Bytes each function's arguments and temporaries may take; genesis-remat
  /// recomputes cheap activations to fit. 0: no budget.
  int64_t memoryBudget = 0;
};

/// Compiles `functions` of `module` (a clone of it; the module is left as it
/// is) into a plan file: fusion, kernels, memory plans and the steps of
/// every function, and returns the file's bytes (see runtime/plan/PlanFile.h).
/// Arguments become tensors shared by genesis.name; results named like an
/// argument update it in place. A `step` argument is fed the completed steps
/// by the runtime, so the plan adds one. An rng_seed argument (tensor<i64>)
/// becomes the session-fed i64[2] (seed, offset) tensor that the dropout
/// kernels read; each function's rng_offset_advance is the largest `offset +
/// numel` of its dropout ops. all_reduce is the identity in a single-process
/// plan: a Copy step (a multi-rank runtime will replace it). Emits a
/// diagnostic naming the op and its location for anything without a
/// lowering for the target.
mlir::FailureOr<std::vector<uint8_t>>
compilePlan(mlir::ModuleOp module, llvm::ArrayRef<std::string> functions,
            const PlanOptions &options);

/// compilePlan for the CPU.
mlir::FailureOr<std::vector<uint8_t>>
compileCpuPlan(mlir::ModuleOp module, llvm::ArrayRef<std::string> functions,
               bool timing = false);

/// The IR stages of compilePlan, in place: keeps only `functions` (and what
/// they call), then runs the registered genesis-cpu-pipeline or
/// genesis-cuda-pipeline (passes/Pipelines.h) with the options' precision
/// and fusion setting.
mlir::LogicalResult lowerForTarget(mlir::ModuleOp module,
                                   llvm::ArrayRef<std::string> functions,
                                   const PlanOptions &options);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace genesis

#endif // GENESIS_PASSES_PASSES_H
