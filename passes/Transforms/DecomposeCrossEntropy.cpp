//===- DecomposeCrossEntropy.cpp - a loss's reduction as a reduce_sum -----===//
//
// Implements genesis-decompose-cross-entropy; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-decompose-cross-entropy"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSECROSSENTROPY
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The rows that count for a mean: labels other than ignore_index, as a
/// float scalar.
Value countedRows(OpBuilder &b, Location loc, Value labels, int64_t ignore,
                  Type element) {
  auto type = cast<RankedTensorType>(labels.getType());
  Value ignored = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type,
                             b.getIntegerAttr(type.getElementType(), ignore)));
  Value kept = CompareOp::create(b, loc, CompareDirection::ne, labels, ignored);
  Value counted = CastOp::create(
      b, loc, RankedTensorType::get(type.getShape(), element), kept);
  return ReduceSumOp::create(b, loc, counted, ArrayRef<int64_t>{0}, false);
}

void decompose(CrossEntropyOp op) {
  OpBuilder b(op);
  Location loc = memberLocation(op);
  auto logits = cast<RankedTensorType>(op.getLogits().getType());
  // The loss's type (f32 for 16-bit logits), in which rows are counted.
  Type element = op.getType().getElementType();
  Value rows = CrossEntropyOp::create(
      b, loc, RankedTensorType::get({logits.getDimSize(0)}, element),
      op.getLogits(), op.getLabels(), op.getIgnoreIndexAttr(),
      op.getLabelSmoothingAttr(),
      LossReductionAttr::get(b.getContext(), LossReduction::none));
  Value total = ReduceSumOp::create(b, loc, rows, ArrayRef<int64_t>{0}, false);
  if (op.getReduction() == LossReduction::mean)
    total = DivOp::create(
        b, loc, total,
        countedRows(b, loc, op.getLabels(), op.getIgnoreIndex(), element));
  op.getResult().replaceAllUsesWith(total);
  op.erase();
}

/// The gradient of a mean or summed loss is the per-row gradient with every
/// row's cotangent the loss's (divided by the rows that count, for a mean).
void decompose(CrossEntropyGradOp op) {
  OpBuilder b(op);
  Location loc = memberLocation(op);
  auto logits = cast<RankedTensorType>(op.getLogits().getType());
  // The loss gradient's type (f32 for 16-bit logits).
  Type element =
      cast<RankedTensorType>(op.getLossGrad().getType()).getElementType();
  Value weight = op.getLossGrad();
  if (op.getReduction() == LossReduction::mean)
    weight = DivOp::create(
        b, loc, weight,
        countedRows(b, loc, op.getLabels(), op.getIgnoreIndex(), element));
  Value rows = BroadcastInDimOp::create(
      b, loc, RankedTensorType::get({logits.getDimSize(0)}, element), weight,
      ArrayRef<int64_t>{});
  Value grad = CrossEntropyGradOp::create(
      b, loc, logits, op.getLogits(), op.getLabels(), rows,
      op.getIgnoreIndexAttr(), op.getLabelSmoothingAttr(),
      LossReductionAttr::get(b.getContext(), LossReduction::none));
  op.getResult().replaceAllUsesWith(grad);
  op.erase();
}

} // namespace

bool genesis::isPerRowLoss(Operation *op) {
  auto reduction = op->getAttrOfType<LossReductionAttr>("reduction");
  return reduction && reduction.getValue() == LossReduction::none;
}

namespace {

struct GenesisDecomposeCrossEntropyPass
    : public genesis::impl::GenesisDecomposeCrossEntropyBase<
          GenesisDecomposeCrossEntropyPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<CrossEntropyOp, CrossEntropyGradOp>(op) && !isPerRowLoss(op))
        ops.push_back(op);
    });
    LLVM_DEBUG(llvm::dbgs() << ops.size() << " reduced cross-entropy ops\n");
    for (Operation *op : ops) {
      if (auto loss = dyn_cast<CrossEntropyOp>(op))
        decompose(loss);
      else
        decompose(cast<CrossEntropyGradOp>(op));
    }
  }
};

} // namespace
