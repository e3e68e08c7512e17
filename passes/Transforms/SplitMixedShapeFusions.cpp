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

void splitMixedShapeFusions(func::FuncOp function) {
  SmallVector<FusionOp> mixed;
  function.walk([&](FusionOp fusion) {
    if (fusion->getNumResults() < 2)
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

  void runOnOperation() override { splitMixedShapeFusions(getOperation()); }
};

} // namespace
