//===- Amp.cpp - f32 GEMMs computed in bf16 or f16
//-------------------------===//
//
// Implements genesis-amp; Passes.td states the rules.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

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
    function.walk([&](MatmulOp matmul) {
      if (matmul.getLhs().getType().getElementType().isF32() &&
          matmul.getRhs().getType().getElementType().isF32())
        matmuls.push_back(matmul);
    });
    // One cast per value, placed right after its definition so that it
    // dominates every matmul that uses it.
    llvm::DenseMap<Value, Value> lowered;
    auto castToLow = [&](Value value) -> Value {
      // A GEMM's result cast back to f32 feeding another GEMM: its 16-bit
      // value is exact, and the round trip is the identity.
      if (auto widened = value.getDefiningOp<CastOp>();
          widened && widened.getOperand().getType().getElementType() == low)
        return widened.getOperand();
      Value &lowValue = lowered[value];
      if (lowValue)
        return lowValue;
      OpBuilder builder(context);
      if (auto argument = dyn_cast<BlockArgument>(value))
        builder.setInsertionPointToStart(argument.getOwner());
      else
        builder.setInsertionPointAfter(value.getDefiningOp());
      auto type = cast<RankedTensorType>(value.getType());
      lowValue =
          CastOp::create(builder, value.getLoc(),
                         RankedTensorType::get(type.getShape(), low), value);
      return lowValue;
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
    }
  }
};

} // namespace
