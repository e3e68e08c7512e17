//===- DecodeAttention.cpp - decode steps' attention as one kernel --------===//
//
// Implements genesis-decode-attention; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Analysis/DecodeAttentionLayout.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECODEATTENTION
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The 16-bit value `value` widens, or null.
Value narrowSource(Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  if (!cast)
    return {};
  Type from = cast.getOperand().getType();
  return isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(from))
             ? cast.getOperand()
             : Value();
}

struct GenesisDecodeAttentionPass
    : public genesis::impl::GenesisDecodeAttentionBase<
          GenesisDecodeAttentionPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> taken;
    getOperation().walk([&](AttentionOp attention) {
      auto query = cast<RankedTensorType>(attention.getQuery().getType());
      bool differentiated =
          llvm::any_of(attention->getUsers(), [](Operation *user) {
            return isa<AttentionGradOp>(user);
          });
      if (!query.getElementType().isF32() || differentiated ||
          !decodeAttentionLayout(
              query.getShape(),
              cast<RankedTensorType>(attention.getKey().getType()).getShape(),
              cast<RankedTensorType>(attention.getValue().getType())
                  .getShape()))
        return;
      taken.push_back(attention);
    });
    for (AttentionOp attention : taken) {
      Value key = attention.getKey(), value = attention.getValue();
      Value narrowKey = narrowSource(key), narrowValue = narrowSource(value);
      if (narrowKey && narrowValue &&
          getElementTypeOrSelf(narrowKey.getType()) ==
              getElementTypeOrSelf(narrowValue.getType())) {
        key = narrowKey;
        value = narrowValue;
      }
      OpBuilder builder(attention);
      auto decode = DecodeAttentionOp::create(
          builder, attention.getLoc(), attention.getQuery(), key, value,
          attention.getMask(), attention.getCausal(), attention.getScale());
      Operation *keyCast = attention.getKey().getDefiningOp();
      Operation *valueCast = attention.getValue() == attention.getKey()
                                 ? nullptr
                                 : attention.getValue().getDefiningOp();
      attention.getResult().replaceAllUsesWith(decode.getResult());
      attention.erase();
      for (Operation *widening : {keyCast, valueCast})
        if (widening && isa<CastOp>(widening) && widening->use_empty())
          widening->erase();
    }
  }
};

} // namespace
