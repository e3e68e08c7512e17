//===- SinkWideningCasts.cpp - Exact data movement in 16 bits -------------===//
//
// Implements genesis-sink-widening-casts; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "genesis-sink-widening-casts"

namespace genesis {
#define GEN_PASS_DEF_GENESISSINKWIDENINGCASTS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

Value genesis::widenedFrom(Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  if (!cast)
    return {};
  Type from = cast.getOperand().getType().getElementType();
  Type to = cast.getType().getElementType();
  if (!(from.isBF16() || from.isF16()) || !isa<FloatType>(to) ||
      to.getIntOrFloatBitWidth() <= 16)
    return {};
  return cast.getOperand();
}

namespace {

RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// transpose, reshape, slice, pad (zeros) and concat of widened 16-bit
/// values: the same op on the 16-bit values, widened after it. Each moves
/// or zero-fills elements, so no bit changes.
struct SinkThroughDataMovement : RewritePattern {
  SinkThroughDataMovement(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<TransposeOp, ReshapeOp, SliceOp, PadOp, ConcatOp>(op))
      return failure();
    SmallVector<Value> narrow;
    for (Value operand : op->getOperands()) {
      Value from = widenedFrom(operand);
      if (!from || (!narrow.empty() &&
                    getElementTypeOrSelf(from.getType()) !=
                        getElementTypeOrSelf(narrow.front().getType())))
        return failure();
      narrow.push_back(from);
    }
    Type element = getElementTypeOrSelf(narrow.front().getType());
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(narrow);
    moved->getResult(0).setType(
        withElement(op->getResult(0).getType(), element));
    rewriter.replaceOpWithNewOp<CastOp>(op, op->getResult(0).getType(),
                                        moved->getResult(0));
    return success();
  }
};

/// add(widen(x), 0) is widen(x) up to the sign of a zero (-0 + 0 is +0):
/// the canonical form of a sum of zero-padded slices (pad(concat(a + 0,
/// b + 0))) has these adds, and a 16-bit add would need arithmetic in the
/// data-movement kernel.
struct SinkThroughAddZero : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [value, other] : {std::pair{add.getLhs(), add.getRhs()},
                                std::pair{add.getRhs(), add.getLhs()}}) {
      if (widenedFrom(value) && value.getType() == add.getType() &&
          matchPattern(other, m_AnyZeroFloat())) {
        rewriter.replaceOp(add, value);
        return success();
      }
    }
    return failure();
  }
};

/// narrow(widen(x)) back to x's type is x.
struct NarrowOfWiden : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp cast,
                                PatternRewriter &rewriter) const override {
    Value from = widenedFrom(cast.getOperand());
    if (!from || from.getType() != cast.getType())
      return failure();
    rewriter.replaceOp(cast, from);
    return success();
  }
};

struct GenesisSinkWideningCastsPass
    : public genesis::impl::GenesisSinkWideningCastsBase<
          GenesisSinkWideningCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkThroughDataMovement, SinkThroughAddZero, NarrowOfWiden>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
