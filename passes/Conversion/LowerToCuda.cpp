//===- LowerToCuda.cpp - Fusion regions and ops to GPU kernels ------------===//
//
// Implements genesis-lower-cuda; Passes.td states the algorithm. Each kernel
// comes from one emitter, chosen through one table (kEmitters, as XLA's
// GetFusionEmitter chooses): a new kernel family is one file beside the
// others (Cuda*Emitter.cpp, declared in CudaEmitters.h) and one entry here.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/RowFusion.h"
#include "passes/Conversion/CpuKernels.h"
#include "passes/Conversion/CudaEmitters.h"
#include "passes/Conversion/CudaKernels.h"
#include "passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-lower-cuda"

namespace genesis {
#define GEN_PASS_DEF_GENESISLOWERCUDA
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;
using namespace genesis::cuda;

namespace {

bool isLoopFusion(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  return fusion &&
         llvm::none_of(fusion.getBody().front(), [](Operation &inner) {
           return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(inner);
         });
}

bool isReductionFusion(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  return fusion && !reductionFusionRoots(fusion).empty();
}

bool isRowFusion(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  return fusion && rowFusionShape(fusion.getBody().front()).has_value();
}

FailureOr<GpuKernel> emitLoop(Operation *op, StringRef name,
                              OpBuilder &builder) {
  return emitLoopFusion(cast<FusionOp>(op), name, builder);
}

FailureOr<GpuKernel> emitReduction(Operation *op, StringRef name,
                                   OpBuilder &builder) {
  auto fusion = cast<FusionOp>(op);
  return emitReductionFusion(fusion, reductionFusionRoots(fusion), name,
                             builder);
}

FailureOr<GpuKernel> emitRow(Operation *op, StringRef name,
                             OpBuilder &builder) {
  auto fusion = cast<FusionOp>(op);
  return emitRowFusion(fusion, *rowFusionShape(fusion.getBody().front()), name,
                       builder);
}

/// One kernel family: which ops it takes and how it emits their kernel.
struct KernelEmitter {
  llvm::StringLiteral kind;
  bool (*matches)(Operation *op);
  FailureOr<GpuKernel> (*emit)(Operation *op, StringRef name,
                               OpBuilder &moduleBuilder);
};

/// Every emitter, most specific first: the first that matches an op emits
/// its kernel. The CPU op kernel run per thread is the fallback of every op
/// that has one.
const KernelEmitter kEmitters[] = {
    {"optimizer group", isOptimizerGroup, emitOptimizerGroup},
    {"matrix-vector", isGemv, emitGemv},
    {"loop fusion", isLoopFusion, emitLoop},
    {"reduction fusion", isReductionFusion, emitReduction},
    {"row fusion", isRowFusion, emitRow},
    {"transpose", hasGpuTransposeKernel, emitTransposeKernel},
    {"gather", hasGpuGatherKernel, emitGatherKernel},
    {"cross-entropy", hasGpuCrossEntropyKernel, emitCrossEntropyKernel},
    {"decode attention", isDecodeAttention, emitDecodeAttention},
    {"row op", hasGpuRowKernel, emitRowKernel},
    {"op kernel", cpu::hasOpKernel, emitOuterLoopKernel},
};

const KernelEmitter *chooseEmitter(Operation *op) {
  for (const KernelEmitter &emitter : kEmitters)
    if (emitter.matches(op))
      return &emitter;
  return nullptr;
}

struct GenesisLowerCudaPass
    : public genesis::impl::GenesisLowerCudaBase<GenesisLowerCudaPass> {
  using GenesisLowerCudaBase::GenesisLowerCudaBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<std::pair<func::FuncOp, Operation *>> work;
    for (auto function : module.getOps<func::FuncOp>())
      for (Operation &op : function.getBody().getOps())
        if ((isa<FusionOp, CrossEntropyWithGradOp>(op) ||
             cpu::hasOpKernel(&op) || isDecodeAttention(&op) || isGemv(&op)) &&
            !computesNothing(&op))
          work.emplace_back(function, &op);
    if (work.empty())
      return;
    // Index arithmetic is 32-bit in the kernels (see compileCudaKernels).
    for (auto [function, op] : work)
      for (Type type :
           llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            tensor && numel(tensor.getShape()) >= (int64_t{1} << 31)) {
          op->emitError("genesis-lower-cuda: tensor ")
              << tensor << " has 2^31 or more elements; GPU kernels index "
              << "with 32 bits";
          return signalPassFailure();
        }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(top, module.getLoc(), cuda::kKernelModuleName);
    OpBuilder builder = OpBuilder::atBlockEnd(gpuModule.getBody());
    llvm::StringMap<unsigned> counters;
    for (auto [function, op] : work) {
      StringRef kind = op->hasAttr(kRematAttrName) ? StringRef("remat")
                       : isOptimizerGroup(op)      ? StringRef("optimizer")
                       : isGemv(op)                ? StringRef("gemv")
                       : isa<FusionOp>(op)         ? StringRef("fusion")
                                           : op->getName().stripDialect();
      std::string name =
          (function.getSymName() + "_" + kind +
           Twine(counters[(function.getSymName() + kind).str()]++))
              .str();
      const KernelEmitter *emitter = chooseEmitter(op);
      if (!emitter && isa<CrossEntropyWithGradOp>(op)) {
        op->emitError("genesis-lower-cuda: cross_entropy_with_grad takes f32, "
                      "bf16 or f16 logits of rank 2, not ")
            << op->getOperand(0).getType();
        return signalPassFailure();
      }
      if (!emitter) {
        op->emitError(
            "genesis-lower-cuda: a fusion with several reductions, or "
            "computing from a reduction, needs f32 sums or maxima over the "
            "last dimension whose results are used only along their rows");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << name << ": " << emitter->kind << " emitter\n");
      FailureOr<GpuKernel> kernel = emitter->emit(op, name, builder);
      if (failed(kernel))
        return signalPassFailure();
      op->setAttr(kKernelAttrName, FlatSymbolRefAttr::get(context, name));
      if (failed(cuda::setLaunchAttr(op, kernel->launch)))
        return signalPassFailure();
    }
  }
};

} // namespace
