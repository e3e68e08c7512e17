//===- FuseCrossEntropyGradient.cpp - a loss and its gradient in one op ---===//
//
// Implements genesis-fuse-cross-entropy-gradient; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-fuse-cross-entropy-gradient"

namespace genesis {
#define GEN_PASS_DEF_GENESISFUSECROSSENTROPYGRADIENT
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Whether `value` is computed from `op`'s results.
bool dependsOn(Value value, Operation *op) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  if (failed(getBackwardSlice(value, &slice, options)))
    return true; // cannot tell: keep the ops apart
  return slice.contains(op);
}

struct GenesisFuseCrossEntropyGradientPass
    : public genesis::impl::GenesisFuseCrossEntropyGradientBase<
          GenesisFuseCrossEntropyGradientPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    SmallVector<CrossEntropyGradOp> grads;
    function.walk([&](CrossEntropyGradOp grad) {
      if (grad->getBlock() == &function.getBody().front() && isPerRowLoss(grad))
        grads.push_back(grad);
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(function);
    for (CrossEntropyGradOp grad : grads)
      if (CrossEntropyOp loss = lossOf(grad))
        fuse(rewriter, dominance, loss, grad);
  }

  /// The per-row loss of `grad`'s logits and labels, before it in its block
  /// and with its attributes, when the cotangents do not depend on it.
  static CrossEntropyOp lossOf(CrossEntropyGradOp grad) {
    auto logits = cast<RankedTensorType>(grad.getLogits().getType());
    if (logits.getDimSize(1) < kWideCrossEntropyClasses ||
        !isGpuLogitsElement(logits.getElementType()))
      return {};
    for (Operation *user : grad.getLogits().getUsers()) {
      auto loss = dyn_cast<CrossEntropyOp>(user);
      if (loss && isPerRowLoss(loss) && loss.getLabels() == grad.getLabels() &&
          loss.getIgnoreIndex() == grad.getIgnoreIndex() &&
          loss.getLabelSmoothing() == grad.getLabelSmoothing() &&
          loss->getBlock() == grad->getBlock() && loss->isBeforeInBlock(grad) &&
          !dependsOn(grad.getLossGrad(), loss))
        return loss;
    }
    return {};
  }

  /// Moves the cotangents' computation before `loss` and puts the fused op
  /// in its place.
  void fuse(IRRewriter &rewriter, DominanceInfo &dominance, CrossEntropyOp loss,
            CrossEntropyGradOp grad) {
    if (failed(moveValueDefinitions(rewriter, grad.getLossGrad(), loss,
                                    dominance))) {
      LLVM_DEBUG(llvm::dbgs() << "cannot move the cotangents of " << grad
                              << " before the loss\n");
      return;
    }
    rewriter.setInsertionPoint(loss);
    auto fused = CrossEntropyWithGradOp::create(
        rewriter, loss.getLoc(), loss.getLogits(), loss.getLabels(),
        grad.getLossGrad(), loss.getIgnoreIndexAttr(),
        loss.getLabelSmoothingAttr());
    LLVM_DEBUG(llvm::dbgs() << "fused " << loss << " with its gradient\n");
    rewriter.replaceOp(loss, fused.getLoss());
    rewriter.replaceOp(grad, fused.getLogitsGrad());
  }
};

} // namespace
