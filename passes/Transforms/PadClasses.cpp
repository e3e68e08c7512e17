//===- PadClasses.cpp - classifier class counts padded and masked ---------===//
//
// Implements genesis-pad-classes; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-pad-classes"

namespace genesis {
#define GEN_PASS_DEF_GENESISPADCLASSES
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// What a padded class contributes to a softmax: exp(kMasked - max) is 0
/// (in f16, where -1e30 rounds to -infinity, exp gives 0 as well).
constexpr double kMasked = -1e30;

/// Every value whose last dimension is the classifier `gemm`'s classes, and
/// the GEMMs that contract or produce that dimension. Found from the GEMM's
/// result through reshapes, cross_entropy(_grad) and the backward GEMMs.
struct Closure {
  llvm::SetVector<Value> classValues;
  /// dlogits @ W: contracts the classes with the (padded) weight.
  SmallVector<MatmulOp> inputGradients;
  /// dlogits^T @ x: the weight's gradient, [classes, K].
  SmallVector<MatmulOp> weightGradients;
  bool hasLoss = false;
};

/// Fails when a user of the classes is anything the rewrite cannot pad.
LogicalResult collect(MatmulOp gemm, int64_t classes, Closure &closure) {
  Value weight = gemm.getRhs();
  SmallVector<Value> worklist = {gemm.getResult()};
  closure.classValues.insert(gemm.getResult());
  auto add = [&](Value value) {
    if (closure.classValues.insert(value))
      worklist.push_back(value);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      bool first = use.getOperandNumber() == 0;
      if (auto reshape = dyn_cast<ReshapeOp>(user)) {
        if (cast<RankedTensorType>(reshape.getType()).getShape().back() !=
            classes)
          return failure();
        add(reshape.getResult());
      } else if (auto loss = dyn_cast<CrossEntropyOp>(user)) {
        if (!first || !loss.getLabelSmoothing().isZero())
          return failure();
        closure.hasLoss = true;
      } else if (auto grad = dyn_cast<CrossEntropyGradOp>(user)) {
        if (!first || !grad.getLabelSmoothing().isZero())
          return failure();
        add(grad.getResult());
      } else if (auto matmul = dyn_cast<MatmulOp>(user)) {
        if (!first || matmul.getTransposeRhs() ||
            cast<RankedTensorType>(value.getType()).getRank() != 2)
          return failure();
        if (!matmul.getTransposeLhs() && matmul.getRhs() == weight)
          closure.inputGradients.push_back(matmul);
        else if (matmul.getTransposeLhs())
          closure.weightGradients.push_back(matmul);
        else
          return failure();
      } else {
        return failure();
      }
    }
  }
  return success(closure.hasLoss);
}

RankedTensorType withLast(Type type, int64_t size, int64_t dim = -1) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim < 0 ? shape.size() - 1 : dim] = size;
  return RankedTensorType::get(shape, tensor.getElementType());
}

struct GenesisPadClassesPass
    : public genesis::impl::GenesisPadClassesBase<GenesisPadClassesPass> {
  using GenesisPadClassesBase::GenesisPadClassesBase;

  void runOnOperation() override {
    if (multiple < 1) {
      getOperation().emitError("genesis-pad-classes: multiple must be "
                               "positive, not ")
          << static_cast<int64_t>(multiple);
      return signalPassFailure();
    }
    SmallVector<MatmulOp> gemms;
    getOperation().walk([&](MatmulOp gemm) {
      auto weight = dyn_cast<RankedTensorType>(gemm.getRhs().getType());
      if (gemm.getTransposeRhs() && !gemm.getTransposeLhs() && weight &&
          weight.getRank() == 2)
        gemms.push_back(gemm);
    });
    for (MatmulOp gemm : gemms) {
      int64_t classes =
          cast<RankedTensorType>(gemm.getRhs().getType()).getDimSize(0);
      if (classes < minClasses || classes % multiple == 0)
        continue;
      Closure closure;
      if (failed(collect(gemm, classes, closure)))
        continue;
      pad(gemm, closure, (classes + multiple - 1) / multiple * multiple);
    }
  }

  void pad(MatmulOp gemm, const Closure &closure, int64_t padded) {
    OpBuilder b(gemm);
    Location loc = gemm.getLoc();
    auto weight = cast<RankedTensorType>(gemm.getRhs().getType());
    int64_t classes = weight.getDimSize(0);
    LLVM_DEBUG(llvm::dbgs() << "padding " << classes << " classes to " << padded
                            << " at " << loc << "\n");
    Value paddedWeight = PadOp::create(
        b, loc, gemm.getRhs(), ArrayRef<int64_t>{0, 0},
        ArrayRef<int64_t>{padded - classes, 0}, ArrayRef<int64_t>{0, 0});
    // Every class value widens in place: the ops are shape-polymorphic in
    // the class dimension, so only their result types change.
    for (Value value : closure.classValues)
      value.setType(withLast(value.getType(), padded));
    gemm.getRhsMutable().assign(paddedWeight);
    for (MatmulOp inputGradient : closure.inputGradients)
      inputGradient.getRhsMutable().assign(paddedWeight);

    // The padded classes' logits: their zero rows' 0 plus a mask bias of
    // -1e30 (an iota compared with `classes` selects it), added as a bias
    // so that genesis-amp makes it the GEMM's epilogue.
    b.setInsertionPointAfter(gemm);
    auto logitsType = cast<RankedTensorType>(gemm.getType());
    Type element = logitsType.getElementType();
    auto classType = RankedTensorType::get({padded}, b.getI64Type());
    auto maskType = RankedTensorType::get({padded}, element);
    Value index = IotaOp::create(b, loc, classType, 0);
    Value count = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(classType, b.getI64IntegerAttr(classes)));
    Value real = CompareOp::create(b, loc, CompareDirection::lt, index, count);
    auto splat = [&](double value) -> Value {
      return ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(maskType, b.getFloatAttr(element, value)));
    };
    Value mask = SelectOp::create(b, loc, real, splat(0.0), splat(kMasked));
    Value broadcast = BroadcastInDimOp::create(
        b, loc, logitsType, mask, ArrayRef<int64_t>{logitsType.getRank() - 1});
    auto masked = AddOp::create(b, loc, gemm.getResult(), broadcast);
    gemm.getResult().replaceAllUsesExcept(masked.getResult(), masked);

    // The weight's gradient: its padded rows (zeros) are dropped.
    for (MatmulOp weightGradient : closure.weightGradients) {
      OpBuilder after(weightGradient);
      after.setInsertionPointAfter(weightGradient);
      Value full = weightGradient.getResult();
      full.setType(withLast(full.getType(), padded, 0));
      auto rows = cast<RankedTensorType>(full.getType()).getDimSize(1);
      auto slice = SliceOp::create(
          after, weightGradient.getLoc(), full, ArrayRef<int64_t>{0, 0},
          ArrayRef<int64_t>{classes, rows}, ArrayRef<int64_t>{1, 1});
      full.replaceAllUsesExcept(slice.getResult(), slice);
    }
  }
};

} // namespace
