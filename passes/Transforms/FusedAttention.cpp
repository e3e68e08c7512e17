//===- FusedAttention.cpp - attention as fused (flash) attention ops ------===//
//
// Implements genesis-fused-attention; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-fused-attention"

namespace genesis {
#define GEN_PASS_DEF_GENESISFUSEDATTENTION
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// cuDNN's flash attention on sm_90 takes head dimensions up to this.
constexpr int64_t kMaxHeadDim = 128;

/// The 16-bit type `attention` runs in, or null when it stays decomposed.
Type computeTypeOf(AttentionOp attention, Type requested) {
  if (attention.getMask())
    return {};
  auto q = cast<RankedTensorType>(attention.getQuery().getType());
  auto k = cast<RankedTensorType>(attention.getKey().getType());
  auto v = cast<RankedTensorType>(attention.getValue().getType());
  int64_t depth = q.getDimSize(3);
  if (depth % 8 != 0 || depth > kMaxHeadDim || k.getDimSize(3) != depth ||
      v.getDimSize(3) != depth)
    return {};
  Type element = q.getElementType();
  if (isa<BFloat16Type, Float16Type>(element) &&
      (!requested || element == requested))
    return element;
  if (element.isF32() && requested)
    return requested;
  return {};
}

Value castTo(OpBuilder &builder, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  return CastOp::create(builder, loc,
                        RankedTensorType::get(type.getShape(), element), value);
}

bool isGradientOf(AttentionGradOp grad, AttentionOp attention) {
  return grad.getOut() == attention.getResult() && !grad.getMask() &&
         grad.getQuery() == attention.getQuery() &&
         grad.getKey() == attention.getKey() &&
         grad.getValue() == attention.getValue() &&
         grad.getCausal() == attention.getCausal() &&
         grad.getScale() == attention.getScale() &&
         grad->getBlock() == attention->getBlock() &&
         attention->isBeforeInBlock(grad);
}

struct GenesisFusedAttentionPass
    : public genesis::impl::GenesisFusedAttentionBase<
          GenesisFusedAttentionPass> {
  using GenesisFusedAttentionBase::GenesisFusedAttentionBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    MLIRContext *context = &getContext();
    Type requested;
    if (computeType == "bf16")
      requested = BFloat16Type::get(context);
    else if (computeType == "f16")
      requested = Float16Type::get(context);
    else if (!computeType.empty()) {
      function.emitError("genesis-fused-attention: compute-type must be "
                         "bf16, f16 or empty, not '")
          << computeType << "'";
      return signalPassFailure();
    }
    SmallVector<AttentionOp> attentions;
    function.walk([&](AttentionOp op) { attentions.push_back(op); });
    for (AttentionOp attention : attentions)
      if (Type compute = computeTypeOf(attention, requested))
        fuse(attention, compute);
  }

  void fuse(AttentionOp attention, Type compute) {
    Location loc = attention.getLoc();
    OpBuilder builder(attention);
    Value q = castTo(builder, loc, attention.getQuery(), compute);
    Value k = castTo(builder, loc, attention.getKey(), compute);
    Value v = castTo(builder, loc, attention.getValue(), compute);
    auto fused = FusedAttentionOp::create(builder, loc, q, k, v,
                                          attention.getCausalAttr(),
                                          attention.getScaleAttr());
    Type element = cast<RankedTensorType>(attention.getResult().getType())
                       .getElementType();
    SmallVector<AttentionGradOp> grads;
    for (Operation *user : attention.getResult().getUsers())
      if (auto grad = dyn_cast<AttentionGradOp>(user);
          grad && isGradientOf(grad, attention) &&
          !llvm::is_contained(grads, grad))
        grads.push_back(grad);
    LLVM_DEBUG(llvm::dbgs() << "fused attention at " << loc << " with "
                            << grads.size() << " gradient(s)\n");
    for (AttentionGradOp grad : grads) {
      OpBuilder gradBuilder(grad);
      Location gradLoc = grad.getLoc();
      Value outGrad = castTo(gradBuilder, gradLoc, grad.getOutGrad(), compute);
      auto fusedGrad = FusedAttentionGradOp::create(
          gradBuilder, gradLoc, q, k, v, fused.getResult(), outGrad,
          fused.getLogsumexp(), grad.getCausalAttr(), grad.getScaleAttr());
      for (unsigned i = 0; i < 3; ++i)
        grad.getResult(i).replaceAllUsesWith(
            castTo(gradBuilder, gradLoc, fusedGrad.getResult(i), element));
      grad.erase();
    }
    attention.getResult().replaceAllUsesWith(
        castTo(builder, loc, fused.getResult(), element));
    attention.erase();
  }
};

} // namespace
