//===- MergeSiblingReductions.cpp - Reductions of shared inputs, one kernel
//===//
//
// Implements genesis-merge-sibling-reductions; Passes.td states the
// algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-merge-sibling-reductions"

namespace genesis {
#define GEN_PASS_DEF_GENESISMERGESIBLINGREDUCTIONS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The first reduction fusion after `first` in its block whose roots are
/// alike to `first`'s, that reads one of its inputs (or another result of an
/// op `first` reads), and whose inputs are all defined before `first` (so
/// the merged fusion can take its place), or null.
FusionOp sibling(FusionOp first, Operation *root) {
  for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
    auto fusion = dyn_cast<FusionOp>(op);
    if (!fusion)
      continue;
    SmallVector<Operation *> roots = reductionFusionRoots(fusion);
    if (roots.empty() || !alikeReductions(root, roots.front()))
      continue;
    // A shared input, or results of one op (the partials of sibling column
    // reductions, which genesis-split-column-reductions finishes apart).
    bool sharesInput = llvm::any_of(fusion.getInputs(), [&](Value input) {
      return llvm::any_of(first.getInputs(), [&](Value other) {
        return other == input ||
               (other.getDefiningOp() &&
                other.getDefiningOp() == input.getDefiningOp());
      });
    });
    if (sharesInput && inputsDefinedBefore(fusion, first))
      return fusion;
  }
  return {};
}

struct GenesisMergeSiblingReductionsPass
    : public genesis::impl::GenesisMergeSiblingReductionsBase<
          GenesisMergeSiblingReductionsPass> {
  void runOnOperation() override {
    // One forward scan per block: a merged fusion stays in the earlier one's
    // place and is checked again against the fusions after it.
    getOperation().walk([](Block *block) {
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;
           op = op->getNextNode()) {
        auto fusion = dyn_cast<FusionOp>(op);
        if (!fusion)
          continue;
        SmallVector<Operation *> roots = reductionFusionRoots(fusion);
        if (roots.empty())
          continue;
        while (FusionOp other = roots.empty()
                                    ? FusionOp()
                                    : sibling(fusion, roots.front())) {
          LLVM_DEBUG(llvm::dbgs() << "merging sibling reductions at "
                                  << fusion.getLoc() << "\n");
          fusion = mergeFusions(fusion, other);
          roots = reductionFusionRoots(fusion);
        }
        op = fusion;
      }
    });
  }
};

} // namespace
