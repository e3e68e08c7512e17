//===- SplitMixedShapeFusions.cpp - One fusion per result shape -----------===//
//
// Implements genesis-split-mixed-shape-fusions; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-split-mixed-shape-fusions"

namespace genesis {
#define GEN_PASS_DEF_GENESISSPLITMIXEDSHAPEFUSIONS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// Whether the GPU runs `fusion` better whole (Passes.td states the rule):
/// every column reduction (over dimensions other than the trailing ones)
/// keeps at least 512 elements, and a row reduction over more than 4096
/// elements has no result (its own or a side result) feeding another fusion.
bool gpuRunsWhole(FusionOp fusion) {
  bool feedsFusion = llvm::any_of(fusion.getResults(), [](Value result) {
    return llvm::any_of(result.getUsers(),
                        [](Operation *user) { return isa<FusionOp>(user); });
  });
  return llvm::all_of(fusion.getBody().front(), [&](Operation &op) {
    std::optional<ArrayRef<int64_t>> reduction = reducedDims(&op);
    if (!reduction)
      return true;
    ArrayRef<int64_t> dims = *reduction;
    auto operand = cast<RankedTensorType>(op.getOperand(0).getType());
    int64_t rank = operand.getRank();
    bool trailing = true;
    int64_t reduced = 1;
    for (auto [i, d] : llvm::enumerate(dims)) {
      trailing &= d == rank - static_cast<int64_t>(dims.size() - i);
      reduced *= operand.getDimSize(d);
    }
    if (trailing)
      return !feedsFusion || reduced <= 4096;
    int64_t kept = reduced == 0 ? 0 : operand.getNumElements() / reduced;
    return kept >= 512;
  });
}

void splitMixedShapeFusions(func::FuncOp function, bool gpuProfitable) {
  SmallVector<FusionOp> mixed;
  function.walk([&](FusionOp fusion) {
    if (fusion->getNumResults() < 2 || (gpuProfitable && gpuRunsWhole(fusion)))
      return;
    for (Type type : fusion->getResultTypes())
      if (cast<ShapedType>(type).getShape() !=
          cast<ShapedType>(fusion->getResultTypes()[0]).getShape())
        return mixed.push_back(fusion), void();
  });
  for (FusionOp fusion : mixed) {
    // Results grouped by shape, in order of first appearance.
    SmallVector<SmallVector<unsigned>> groups;
    for (unsigned r = 0; r < fusion->getNumResults(); ++r) {
      auto shape = cast<ShapedType>(fusion->getResultTypes()[r]).getShape();
      auto it = llvm::find_if(groups, [&](const SmallVector<unsigned> &g) {
        return cast<ShapedType>(fusion->getResultTypes()[g[0]]).getShape() ==
               shape;
      });
      if (it == groups.end())
        groups.push_back({r});
      else
        it->push_back(r);
    }
    LLVM_DEBUG(llvm::dbgs() << "splitting the fusion at " << fusion.getLoc()
                            << " into " << groups.size() << " fusions\n");
    OpBuilder builder(fusion);
    for (const SmallVector<unsigned> &group : groups) {
      OperationState state(fusion->getLoc(), fusion->getName());
      state.addOperands(fusion->getOperands());
      for (unsigned r : group)
        state.addTypes(fusion->getResultTypes()[r]);
      state.addAttributes(fusion->getAttrs());
      Region *region = state.addRegion();
      IRMapping mapping;
      fusion->getRegion(0).cloneInto(region, mapping);
      Operation *clone = builder.create(state);
      Block &block = clone->getRegion(0).front();
      Operation *yield = block.getTerminator();
      SmallVector<Value> kept;
      for (unsigned r : group)
        kept.push_back(yield->getOperand(r));
      yield->setOperands(kept);
      // Drop what the kept results do not need.
      SmallVector<Operation *> body;
      for (Operation &op : block.without_terminator())
        body.push_back(&op);
      for (Operation *op : llvm::reverse(body))
        if (op->use_empty())
          op->erase();
      for (auto [i, r] : llvm::enumerate(group))
        fusion->getResult(r).replaceAllUsesWith(clone->getResult(i));
    }
    fusion->erase();
  }
}

struct GenesisSplitMixedShapeFusionsPass
    : public genesis::impl::GenesisSplitMixedShapeFusionsBase<
          GenesisSplitMixedShapeFusionsPass> {
  using GenesisSplitMixedShapeFusionsBase::GenesisSplitMixedShapeFusionsBase;

  void runOnOperation() override {
    splitMixedShapeFusions(getOperation(), gpuProfitable);
  }
};

} // namespace
