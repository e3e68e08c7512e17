//===- SplitColumnReductions.cpp - Column reductions in two stages --------===//
//
// Implements genesis-split-column-reductions; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-split-column-reductions"

namespace genesis {
#define GEN_PASS_DEF_GENESISSPLITCOLUMNREDUCTIONS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Column tiles (a warp's 32 columns) below which the one-stage kernel
/// leaves SMs idle: 4 blocks for each of the H100's 132 SMs.
constexpr int64_t kMinTiles = 4 * 132;

/// The fusion's only reduction if the pass splits it (Passes.td states the
/// conditions), else null.
Operation *splittableRoot(FusionOp fusion) {
  Operation *root = reductionFusionRoot(fusion);
  // Yielded once: the first stage's result takes that one yield.
  if (!root || !root->getResult(0).hasOneUse())
    return nullptr;
  auto operand = cast<RankedTensorType>(root->getOperand(0).getType());
  if (!operand.getElementType().isF32() && !operand.getElementType().isF64())
    return nullptr;
  ArrayRef<int64_t> dims = *reducedDims(root);
  int64_t rank = operand.getRank();
  int64_t leading = static_cast<int64_t>(dims.size());
  for (int64_t i = 0; i < leading; ++i)
    if (dims[i] != i)
      return nullptr;
  if (leading < 2 || leading >= rank)
    return nullptr;
  int64_t columns = 1, inner = 1;
  for (int64_t d = leading; d < rank; ++d)
    columns *= operand.getDimSize(d);
  for (int64_t d = 1; d < leading; ++d)
    inner *= operand.getDimSize(d);
  int64_t chunks = operand.getDimSize(0);
  bool fewTiles = (columns + 31) / 32 < kMinTiles;
  return fewTiles && chunks >= 2 && inner >= 256 ? root : nullptr;
}

/// Splits `fusion`'s reduction over dims [0, k) into one over [1, k) (a
/// partial per index of dimension 0, computed by the fusion) and a new
/// fusion reducing the partials over dimension 0.
void splitColumnReduction(FusionOp fusion, Operation *root) {
  ArrayRef<int64_t> dims = *reducedDims(root);
  auto operand = cast<RankedTensorType>(root->getOperand(0).getType());
  bool keepdim = root->hasAttr("keepdim");
  SmallVector<int64_t> partialShape;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    if (d == 0 || !llvm::is_contained(dims, d))
      partialShape.push_back(operand.getDimSize(d));
    else if (keepdim)
      partialShape.push_back(1);
  auto partialType =
      RankedTensorType::get(partialShape, operand.getElementType());
  Value total = root->getResult(0);
  Type totalType = total.getType();
  LLVM_DEBUG(llvm::dbgs() << "splitting the column reduction at "
                          << fusion.getLoc() << " over dimension 0 ("
                          << partialShape[0] << " partials)\n");

  // The fusion yields the partials in the total's place.
  root->setAttr("dims",
                DenseI64ArrayAttr::get(root->getContext(), dims.drop_front()));
  total.setType(partialType);
  SmallVector<Type> resultTypes(fusion.getResultTypes());
  unsigned index = total.getUses().begin()->getOperandNumber();
  resultTypes[index] = partialType;
  OpBuilder builder(fusion);
  auto partial = FusionOp::create(builder, fusion.getLoc(), resultTypes,
                                  fusion.getInputs());
  partial.getBody().takeBody(fusion.getBody());
  partial->setAttrs(fusion->getAttrs());

  // The second stage: the partials summed (or maximised) over dimension 0.
  builder.setInsertionPointAfter(partial);
  auto final = FusionOp::create(builder, fusion.getLoc(), TypeRange{totalType},
                                ValueRange{partial.getResult(index)});
  Block *body = builder.createBlock(&final.getBody(), {}, {partialType},
                                    {fusion.getLoc()});
  OperationState state(root->getLoc(), root->getName());
  state.addOperands(body->getArgument(0));
  state.addTypes(totalType);
  state.addAttribute("dims", DenseI64ArrayAttr::get(root->getContext(), {0}));
  if (keepdim)
    state.addAttribute("keepdim", builder.getUnitAttr());
  Operation *combine = builder.create(state);
  YieldOp::create(builder, fusion.getLoc(), combine->getResults());

  for (unsigned r = 0; r < fusion->getNumResults(); ++r)
    fusion->getResult(r).replaceAllUsesWith(r == index ? final.getResult(0)
                                                       : partial.getResult(r));
  fusion.erase();
}

struct GenesisSplitColumnReductionsPass
    : public genesis::impl::GenesisSplitColumnReductionsBase<
          GenesisSplitColumnReductionsPass> {
  using GenesisSplitColumnReductionsBase::GenesisSplitColumnReductionsBase;

  void runOnOperation() override {
    SmallVector<std::pair<FusionOp, Operation *>> splits;
    getOperation().walk([&](FusionOp fusion) {
      if (Operation *root = splittableRoot(fusion))
        splits.emplace_back(fusion, root);
    });
    for (auto [fusion, root] : splits)
      splitColumnReduction(fusion, root);
  }
};

} // namespace
