//===- DecomposeCrossEntropy.cpp - a loss's reduction as a reduce_sum ------===//
//
// Implements genesis-decompose-cross-entropy; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSECROSSENTROPY
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

void decompose(CrossEntropyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto logits = cast<RankedTensorType>(op.getLogits().getType());
  auto labels = cast<RankedTensorType>(op.getLabels().getType());
  Type element = logits.getElementType();
  Value rows = CrossEntropyOp::create(
      b, loc, RankedTensorType::get({logits.getDimSize(0)}, element),
      op.getLogits(), op.getLabels(), op.getIgnoreIndexAttr(),
      op.getLabelSmoothingAttr(),
      LossReductionAttr::get(b.getContext(), LossReduction::none));
  Value total = ReduceSumOp::create(b, loc, rows, ArrayRef<int64_t>{0}, false);
  if (op.getReduction() == LossReduction::mean) {
    // Divided by the rows that count, as the op's mean is.
    Value ignore = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(labels,
                               b.getIntegerAttr(labels.getElementType(),
                                                op.getIgnoreIndex())));
    Value kept = CompareOp::create(b, loc, CompareDirection::ne, op.getLabels(),
                                   ignore);
    Value counted = CastOp::create(
        b, loc, RankedTensorType::get(labels.getShape(), element), kept);
    Value count =
        ReduceSumOp::create(b, loc, counted, ArrayRef<int64_t>{0}, false);
    total = DivOp::create(b, loc, total, count);
  }
  op.getResult().replaceAllUsesWith(total);
  op.erase();
}

struct GenesisDecomposeCrossEntropyPass
    : public genesis::impl::GenesisDecomposeCrossEntropyBase<
          GenesisDecomposeCrossEntropyPass> {
  void runOnOperation() override {
    SmallVector<CrossEntropyOp> ops;
    getOperation().walk([&](CrossEntropyOp op) {
      if (op.getReduction() != LossReduction::none)
        ops.push_back(op);
    });
    for (CrossEntropyOp op : ops)
      decompose(op);
  }
};

} // namespace
