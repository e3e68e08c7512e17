//===- Widen16Bit.cpp - 16-bit float arithmetic computed in f32 -----------===//
//
// Implements genesis-widen-16bit; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace genesis {
#define GEN_PASS_DEF_GENESISWIDEN16BIT
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

bool isHalf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (tensor.getElementType().isBF16() || tensor.getElementType().isF16());
}

Type widened(Type type) {
  if (!isHalf(type))
    return type;
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(Float32Type::get(type.getContext()));
}

/// The ops that move 16-bit values exactly, which the kernels handle in
/// their own type.
bool movesExactly(Operation *op) {
  return isa<CastOp, SelectOp, ConstantOp, BroadcastInDimOp, TakeOp,
             AllReduceOp, FusionOp, LibraryCallOp>(op) ||
         isDataMovement(op);
}

struct GenesisWiden16BitPass
    : public genesis::impl::GenesisWiden16BitBase<GenesisWiden16BitPass> {
  void runOnOperation() override {
    SmallVector<Operation *> work;
    getOperation().walk([&](Operation *op) {
      if (!isa<GenesisDialect>(op->getDialect()) || movesExactly(op))
        return;
      if (llvm::any_of(op->getOperandTypes(), isHalf) ||
          llvm::any_of(op->getResultTypes(), isHalf))
        work.push_back(op);
    });
    for (Operation *op : work) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      IRMapping mapping;
      for (Value operand : op->getOperands())
        if (isHalf(operand.getType()))
          mapping.map(operand, CastOp::create(
                                   b, loc, widened(operand.getType()), operand)
                                   .getResult());
      Operation *wide = b.clone(*op, mapping);
      for (OpResult result : wide->getResults())
        result.setType(widened(result.getType()));
      for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults())) {
        Value replacement = now;
        if (old.getType() != now.getType())
          replacement = CastOp::create(b, loc, old.getType(), now);
        old.replaceAllUsesWith(replacement);
      }
      op->erase();
    }
  }
};

} // namespace
