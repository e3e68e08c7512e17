//===- Amp.cpp - f32 GEMMs computed in bf16 or f16 ------------------------===//
//
// Implements genesis-amp; Passes.td states the rules.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
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
  }
};

} // namespace
