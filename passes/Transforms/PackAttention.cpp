//===- PackAttention.cpp - attention reading a packed q/k/v projection ----===//
//
// Implements genesis-pack-attention; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "genesis-pack-attention"

namespace genesis {
#define GEN_PASS_DEF_GENESISPACKATTENTION
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// [B, S, H, D] <-> [B, H, S, D].
constexpr int64_t kSwapHeadsAndTokens[] = {0, 2, 1, 3};

/// One of q, k, v read from a token-major tensor: `transpose(reshape(
/// slice(packed)), [0, 2, 1, 3])`, the slice taking columns
/// [firstColumn, firstColumn + H * D) of every row of `packed` [B, S, N].
struct HeadsView {
  Value packed;
  int64_t firstColumn;
};

std::optional<HeadsView> headsViewOf(Value heads) {
  auto transpose = heads.getDefiningOp<TransposeOp>();
  if (!transpose ||
      transpose.getPermutation() != ArrayRef<int64_t>(kSwapHeadsAndTokens))
    return std::nullopt;
  auto reshape = transpose.getOperand().getDefiningOp<ReshapeOp>();
  auto slice =
      reshape ? reshape.getOperand().getDefiningOp<SliceOp>() : SliceOp();
  if (!slice)
    return std::nullopt;
  auto source = cast<RankedTensorType>(slice.getOperand().getType());
  auto sliced = cast<RankedTensorType>(slice.getType());
  auto split = cast<RankedTensorType>(reshape.getType());
  // The reshape splits the sliced columns into [H, D] and keeps B and S
  // (checked here, not left to the reshape's element count, which proves
  // nothing when B or S is 0).
  if (source.getRank() != 3 || split.getRank() != 4 ||
      split.getDimSize(0) != sliced.getDimSize(0) ||
      split.getDimSize(1) != sliced.getDimSize(1) ||
      split.getDimSize(2) * split.getDimSize(3) != sliced.getDimSize(2))
    return std::nullopt;
  for (int64_t d = 0; d < 3; ++d)
    if (slice.getStride()[d] != 1 ||
        (d < 2 && (slice.getStart()[d] != 0 ||
                   slice.getLimit()[d] != source.getDimSize(d))))
      return std::nullopt;
  return HeadsView{slice.getOperand(), slice.getStart()[2]};
}

/// The packed projection that `attention`'s q, k and v tile in this order,
/// or null.
Value packedOperandOf(FusedAttentionOp attention) {
  std::optional<HeadsView> q = headsViewOf(attention.getQuery()),
                           k = headsViewOf(attention.getKey()),
                           v = headsViewOf(attention.getValue());
  if (!q || !k || !v || q->packed != k->packed || q->packed != v->packed)
    return {};
  auto query = cast<RankedTensorType>(attention.getQuery().getType());
  auto key = cast<RankedTensorType>(attention.getKey().getType());
  int64_t headDim = query.getDimSize(3);
  int64_t queryColumns = query.getDimSize(1) * headDim;
  int64_t kvColumns = key.getDimSize(1) * headDim;
  auto packed = cast<RankedTensorType>(q->packed.getType());
  if (q->firstColumn != 0 || k->firstColumn != queryColumns ||
      v->firstColumn != queryColumns + kvColumns ||
      packed.getDimSize(2) != queryColumns + 2 * kvColumns)
    return {};
  return q->packed;
}

bool isGradientOf(FusedAttentionGradOp grad, FusedAttentionOp attention) {
  return grad.getQuery() == attention.getQuery() &&
         grad.getKey() == attention.getKey() &&
         grad.getValue() == attention.getValue() &&
         grad.getOut() == attention.getResult() &&
         grad.getLogsumexp() == attention.getLogsumexp() &&
         grad.getCausal() == attention.getCausal() &&
         grad.getScale() == attention.getScale();
}

/// `transpose(reshape(tokens), [0, 2, 1, 3])`: token-major [B, S, H * D] as
/// head-major [B, H, S, D] (`headsType`).
Value headMajor(OpBuilder &builder, Location loc, Value tokens,
                RankedTensorType headsType) {
  auto split =
      headsType.clone({headsType.getDimSize(0), headsType.getDimSize(2),
                       headsType.getDimSize(1), headsType.getDimSize(3)});
  Value reshaped = ReshapeOp::create(builder, loc, split, tokens);
  return TransposeOp::create(builder, loc, reshaped, kSwapHeadsAndTokens);
}

/// The inverse of headMajor.
Value tokenMajor(OpBuilder &builder, Location loc, Value heads) {
  auto type = cast<RankedTensorType>(heads.getType());
  Value swapped = TransposeOp::create(builder, loc, heads, kSwapHeadsAndTokens);
  return ReshapeOp::create(
      builder, loc,
      type.clone({type.getDimSize(0), type.getDimSize(2),
                  type.getDimSize(1) * type.getDimSize(3)}),
      swapped);
}

struct GenesisPackAttentionPass
    : public genesis::impl::GenesisPackAttentionBase<GenesisPackAttentionPass> {
  void runOnOperation() override {
    SmallVector<FusedAttentionOp> attentions;
    getOperation().walk([&](FusedAttentionOp op) { attentions.push_back(op); });
    for (FusedAttentionOp attention : attentions)
      if (Value packed = packedOperandOf(attention))
        pack(attention, packed);
  }

  void pack(FusedAttentionOp attention, Value qkv) {
    Location loc = attention.getLoc();
    auto queryType = cast<RankedTensorType>(attention.getQuery().getType());
    auto keyType = cast<RankedTensorType>(attention.getKey().getType());
    int64_t queryHeads = queryType.getDimSize(1),
            kvHeads = keyType.getDimSize(1), headDim = queryType.getDimSize(3);
    OpBuilder builder(attention);
    IntegerAttr queryHeadsAttr = builder.getI64IntegerAttr(queryHeads),
                kvHeadsAttr = builder.getI64IntegerAttr(kvHeads);
    auto packed = PackedAttentionOp::create(
        builder, loc, qkv, queryHeadsAttr, kvHeadsAttr,
        attention.getCausalAttr(), attention.getScaleAttr());
    SmallVector<FusedAttentionGradOp> grads;
    for (Operation *user : attention.getResult().getUsers())
      if (auto grad = dyn_cast<FusedAttentionGradOp>(user);
          grad && isGradientOf(grad, attention) &&
          !llvm::is_contained(grads, grad))
        grads.push_back(grad);
    LLVM_DEBUG(llvm::dbgs() << "packed attention at " << loc << " with "
                            << grads.size() << " gradient(s)\n");
    for (FusedAttentionGradOp grad : grads) {
      OpBuilder gradBuilder(grad);
      Location gradLoc = grad.getLoc();
      auto packedGrad = PackedAttentionGradOp::create(
          gradBuilder, gradLoc, qkv, packed.getResult(),
          tokenMajor(gradBuilder, gradLoc, grad.getOutGrad()),
          packed.getLogsumexp(), queryHeadsAttr, kvHeadsAttr,
          grad.getCausalAttr(), grad.getScaleAttr());
      // Each gradient is its columns of the packed one, head-major again;
      // canonicalisation folds the transposes its users apply and the
      // concatenation of the three into the packed gradient itself.
      auto type = cast<RankedTensorType>(qkv.getType());
      int64_t column = 0;
      for (unsigned i = 0; i < 3; ++i) {
        auto headsType = cast<RankedTensorType>(grad.getResult(i).getType());
        int64_t columns = headsType.getDimSize(1) * headDim;
        Value slice = SliceOp::create(
            gradBuilder, gradLoc, packedGrad.getQkvGrad(),
            ArrayRef<int64_t>{0, 0, column},
            ArrayRef<int64_t>{type.getDimSize(0), type.getDimSize(1),
                              column + columns},
            ArrayRef<int64_t>{1, 1, 1});
        grad.getResult(i).replaceAllUsesWith(
            headMajor(gradBuilder, gradLoc, slice, headsType));
        column += columns;
      }
      grad.erase();
    }
    attention.getResult().replaceAllUsesWith(
        headMajor(builder, loc, packed.getResult(), queryType));
    attention.getLogsumexp().replaceAllUsesWith(packed.getLogsumexp());
    attention.erase();
  }
};

} // namespace
