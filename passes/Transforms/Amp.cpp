//===- Amp.cpp - f32 GEMMs computed in bf16 or f16 ------------------------===//
//
// Implements genesis-amp; Passes.td states the rules.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "dialect/IR/Provenance.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include "llvm/Support/Debug.h"
#include <functional>

#define DEBUG_TYPE "genesis-amp"

namespace genesis {
#define GEN_PASS_DEF_GENESISAMP
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

struct GenesisAmpPass : public genesis::impl::GenesisAmpBase<GenesisAmpPass> {
  using GenesisAmpBase::GenesisAmpBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    MLIRContext *context = &getContext();
    Type low;
    if (computeType == "bf16")
      low = BFloat16Type::get(context);
    else if (computeType == "f16")
      low = Float16Type::get(context);
    else {
      function.emitError("genesis-amp: compute-type must be bf16 or f16, not '")
          << computeType << "'";
      return signalPassFailure();
    }
    SmallVector<MatmulOp> matmuls;
    LLVM_DEBUG(llvm::dbgs() << "@" << function.getSymName() << ": GEMMs in "
                            << computeType << "\n");
    function.walk([&](MatmulOp matmul) {
      if (matmul.getLhs().getType().getElementType().isF32() &&
          matmul.getRhs().getType().getElementType().isF32())
        matmuls.push_back(matmul);
    });
    // One cast per value, placed right after its definition so that it
    // dominates every matmul that uses it.
    llvm::DenseMap<Value, Value> lowered;
    std::function<Value(Value)> castToLow = [&](Value value) -> Value {
      // A GEMM's result cast back to f32 feeding another GEMM: its 16-bit
      // value is exact, and the round trip is the identity.
      if (auto widened = value.getDefiningOp<CastOp>();
          widened && widened.getOperand().getType().getElementType() == low)
        return widened.getOperand();
      if (Value known = lowered.lookup(value))
        return known;
      // Cast before a reshape, not after: the cast then fuses with the
      // reshaped value's producer (a reshape stops fusion).
      if (auto reshape = value.getDefiningOp<ReshapeOp>()) {
        Value operand = castToLow(reshape.getOperand());
        OpBuilder builder(reshape);
        builder.setInsertionPointAfter(reshape);
        auto type = cast<RankedTensorType>(value.getType());
        return lowered[value] = ReshapeOp::create(
                   builder, reshape.getLoc(),
                   RankedTensorType::get(type.getShape(), low), operand);
      }
      OpBuilder builder(context);
      if (auto argument = dyn_cast<BlockArgument>(value))
        builder.setInsertionPointToStart(argument.getOwner());
      else
        builder.setInsertionPointAfter(value.getDefiningOp());
      auto type = cast<RankedTensorType>(value.getType());
      return lowered[value] = CastOp::create(
                 builder, value.getLoc(),
                 RankedTensorType::get(type.getShape(), low), value);
    };
    for (MatmulOp matmul : matmuls) {
      Value lhs = castToLow(matmul.getLhs()), rhs = castToLow(matmul.getRhs());
      if (addBiasInEpilogue(matmul, lhs, rhs, castToLow))
        continue;
      OpBuilder builder(matmul);
      Value product =
          MatmulOp::create(builder, matmul.getLoc(), lhs, rhs,
                           matmul.getTransposeLhs(), matmul.getTransposeRhs());
      Value result =
          CastOp::create(builder, matmul.getLoc(), matmul.getType(), product);
      matmul.getResult().replaceAllUsesWith(result);
      matmul.erase();
      // Reshapes of the result reshape the 16-bit product and cast after,
      // so the cast fuses with their users.
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (auto reshape = dyn_cast<ReshapeOp>(user)) {
          OpBuilder after(reshape);
          auto type = cast<RankedTensorType>(reshape.getType());
          Value lowReshape = ReshapeOp::create(
              after, reshape.getLoc(),
              RankedTensorType::get(type.getShape(), low), product);
          reshape.getResult().replaceAllUsesWith(
              CastOp::create(after, reshape.getLoc(), type, lowReshape)
                  .getResult());
          reshape.erase();
        }
    }
    readSixteenBitLogits(function, low);
  }

  /// A bias added to the GEMM's result, `add(matmul, broadcast(bias))`,
  /// directly or after a reshape that keeps the last dimension, becomes a
  /// `genesis.library_call` with the bias epilogue and a 16-bit result (the
  /// bias cast to 16 bits, as autocast's linear does): the sum is rounded
  /// once, by the GEMM, and no f32 copy of it is stored. Returns whether
  /// `matmul` was rewritten so.
  bool addBiasInEpilogue(MatmulOp matmul, Value lhs, Value rhs,
                         const std::function<Value(Value)> &castToLow) {
    Value result = matmul.getResult();
    if (!result.hasOneUse())
      return false;
    Operation *user = *result.user_begin();
    auto reshape = dyn_cast<ReshapeOp>(user);
    if (reshape) {
      auto from = cast<RankedTensorType>(result.getType());
      auto to = cast<RankedTensorType>(reshape.getType());
      if (!reshape.getResult().hasOneUse() ||
          to.getShape().back() != from.getShape().back())
        return false;
      user = *reshape.getResult().user_begin();
    }
    auto add = dyn_cast<AddOp>(user);
    if (!add)
      return false;
    Value summed = reshape ? reshape.getResult() : result;
    Value other = add.getLhs() == summed ? add.getRhs() : add.getLhs();
    Value wideBias = broadcastBias(other);
    if (!wideBias || !getElementTypeOrSelf(wideBias.getType()).isF32())
      return false;
    auto sumType = cast<RankedTensorType>(add.getType());
    Value bias = castToLow(wideBias);
    // At the add, which both the bias and the operands dominate.
    OpBuilder builder(add);
    Location loc =
        builder.getFusedLoc({memberLocation(matmul), memberLocation(add)});
    auto lowType = [&](Value v) {
      return RankedTensorType::get(
          cast<RankedTensorType>(v.getType()).getShape(),
          getElementTypeOrSelf(lhs.getType()));
    };
    Value product = LibraryCallOp::create(
        builder, loc, lowType(result), GemmEpilogue::bias, lhs, rhs, bias,
        /*aux=*/Value(), matmul.getTransposeLhs(), matmul.getTransposeRhs(),
        APFloat(1.0));
    if (reshape)
      product = ReshapeOp::create(builder, reshape.getLoc(), lowType(summed),
                                  product);
    add.getResult().replaceAllUsesWith(
        CastOp::create(builder, loc, sumType, product).getResult());
    add.erase();
    if (reshape)
      reshape.erase();
    matmul.erase();
    if (Operation *broadcast = other.getDefiningOp();
        broadcast && broadcast->use_empty())
      broadcast->erase();
    return true;
  }

  /// The 16-bit value that `value` widens, through reshapes and selects of
  /// a constant (a mask of padded classes), rebuilt in 16 bits; null when
  /// `value` is not such a widening.
  Value narrowed(Value value, Type low, llvm::DenseMap<Value, Value> &built) {
    if (Value known = built.lookup(value))
      return known;
    Operation *op = value.getDefiningOp();
    if (!op)
      return {};
    auto lowType = [&](Value v) {
      return RankedTensorType::get(
          cast<RankedTensorType>(v.getType()).getShape(), low);
    };
    Value result;
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    if (auto widening = dyn_cast<CastOp>(op)) {
      if (getElementTypeOrSelf(widening.getOperand().getType()) == low)
        result = widening.getOperand();
    } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (Value source = narrowed(reshape.getOperand(), low, built))
        result = ReshapeOp::create(b, reshape.getLoc(), lowType(value), source);
    } else if (auto select = dyn_cast<SelectOp>(op)) {
      auto hidden = select.getOnFalse().getDefiningOp<ConstantOp>();
      if (hidden && hidden.getValue().isSplat())
        if (Value source = narrowed(select.getOnTrue(), low, built)) {
          // The constant in 16 bits, its magnitude clamped to the largest
          // finite value (-1e30 is -inf in f16).
          APFloat constant = hidden.getValue().getSplatValue<APFloat>();
          bool lost = false;
          const llvm::fltSemantics &semantics =
              cast<FloatType>(low).getFloatSemantics();
          constant.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
          if (constant.isInfinity())
            constant = APFloat::getLargest(semantics, constant.isNegative());
          Value lowConstant = ConstantOp::create(
              b, hidden.getLoc(),
              DenseElementsAttr::get(lowType(value), constant));
          result = SelectOp::create(b, select.getLoc(), select.getCondition(),
                                    source, lowConstant);
        }
    }
    if (result)
      built[value] = result;
    return result;
  }

  /// Cross-entropy reads 16-bit logits directly and its gradient is written
  /// in 16 bits for the backward GEMMs (PyTorch's autocast computes the loss
  /// in f32 from bf16 logits too): no f32 [tokens, classes] tensor. Only
  /// where the GPU's wide kernel runs it (reduction none, >= 1024 classes).
  void readSixteenBitLogits(func::FuncOp function, Type low) {
    SmallVector<Operation *> losses;
    function.walk([&](Operation *op) {
      if (!isa<CrossEntropyOp, CrossEntropyGradOp>(op))
        return;
      auto logits = cast<RankedTensorType>(op->getOperand(0).getType());
      if (logits.getElementType().isF32() &&
          logits.getDimSize(1) >= kWideCrossEntropyClasses && isPerRowLoss(op))
        losses.push_back(op);
    });
    llvm::DenseMap<Value, Value> built;
    for (Operation *loss : losses) {
      Value logits = narrowed(loss->getOperand(0), low, built);
      if (!logits)
        continue;
      loss->setOperand(0, logits);
      auto grad = dyn_cast<CrossEntropyGradOp>(loss);
      if (!grad)
        continue;
      Value result = grad.getResult();
      auto wide = cast<RankedTensorType>(result.getType());
      result.setType(logits.getType());
      OpBuilder after(grad);
      after.setInsertionPointAfter(grad);
      Value widened = CastOp::create(after, grad.getLoc(), wide, result);
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        Operation *user = use.getOwner();
        if (user == widened.getDefiningOp())
          continue;
        // The backward GEMMs' casts to 16 bits read the result directly.
        if (auto narrowing = dyn_cast<CastOp>(user);
            narrowing && narrowing.getType() == logits.getType()) {
          narrowing.getResult().replaceAllUsesWith(result);
          narrowing.erase();
          continue;
        }
        use.set(widened);
      }
    }
  }
};

} // namespace
