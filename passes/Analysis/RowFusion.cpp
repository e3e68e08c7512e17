//===- RowFusion.cpp - Which fusions a block per row computes -------------===//

#include "passes/Analysis/RowFusion.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace genesis {
namespace {

/// Whether `shape` is per row of `rowShape` ([rows..., C]): [rows...] or
/// [rows..., 1].
bool isPerRow(ArrayRef<int64_t> shape, ArrayRef<int64_t> rowShape) {
  ArrayRef<int64_t> rows = rowShape.drop_back();
  return shape == rows || (shape.size() == rowShape.size() &&
                           shape.drop_back() == rows && shape.back() == 1);
}

/// Whether `broadcast` spreads a per-row value along the last dimension of
/// `rowShape`, keeping each row's leading indices.
bool isRowBroadcast(BroadcastInDimOp broadcast, ArrayRef<int64_t> rowShape) {
  ArrayRef<int64_t> from = broadcast.getOperand().getType().getShape();
  if (broadcast.getType().getShape() != rowShape || !isPerRow(from, rowShape))
    return false;
  return llvm::all_of(
      llvm::enumerate(broadcast.getBroadcastDimensions()), [](auto entry) {
        return static_cast<int64_t>(entry.index()) == entry.value();
      });
}

} // namespace

std::optional<SmallVector<int64_t>> rowFusionShape(Block &body) {
  std::optional<SmallVector<int64_t>> rowShape;
  llvm::DenseSet<Value> fromReduction;
  for (Operation &op : body.without_terminator()) {
    // The row kernel combines sums and maxima only, and reads its inputs
    // in row order (no data movement, no rope's partner element).
    if (isa<ReduceMinOp, RopeOp>(op) || isDataMovement(&op))
      return std::nullopt;
    bool derived = llvm::any_of(op.getOperands(), [&](Value operand) {
      return fromReduction.contains(operand);
    });
    if (isa<ReduceSumOp, ReduceMaxOp>(op)) {
      auto operand = cast<RankedTensorType>(op.getOperand(0).getType());
      ArrayRef<int64_t> dims = isa<ReduceSumOp>(op)
                                   ? cast<ReduceSumOp>(op).getDims()
                                   : cast<ReduceMaxOp>(op).getDims();
      if (operand.getRank() == 0 || !operand.getElementType().isF32() ||
          dims.size() != 1 || dims[0] != operand.getRank() - 1 ||
          (rowShape && operand.getShape() != ArrayRef<int64_t>(*rowShape)))
        return std::nullopt;
      rowShape = SmallVector<int64_t>(operand.getShape());
      fromReduction.insert(op.getResult(0));
      continue;
    }
    if (!derived)
      continue;
    auto broadcast = dyn_cast<BroadcastInDimOp>(op);
    if (broadcast ? !rowShape || !isRowBroadcast(broadcast, *rowShape)
                  : !op.hasTrait<mlir::OpTrait::Elementwise>())
      return std::nullopt;
    fromReduction.insert(op.getResult(0));
  }
  if (!rowShape || rowShape->back() > kMaxBlockRowColumns)
    return std::nullopt;
  for (Value value : body.getTerminator()->getOperands()) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    if (shape != ArrayRef<int64_t>(*rowShape) && !isPerRow(shape, *rowShape))
      return std::nullopt;
  }
  return rowShape;
}

} // namespace genesis
