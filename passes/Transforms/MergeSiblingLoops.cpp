//===- MergeSiblingLoops.cpp - Loop fusions of shared inputs, one kernel --===//
//
// Implements genesis-merge-sibling-loops; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-merge-sibling-loops"

namespace genesis {
#define GEN_PASS_DEF_GENESISMERGESIBLINGLOOPS
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

/// The shape `fusion` computes element by element (isElementwiseFusion), or
/// nullopt.
std::optional<ArrayRef<int64_t>> loopShape(FusionOp fusion) {
  if (fusion->getNumResults() == 0)
    return std::nullopt;
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(fusion->getResultTypes()[0]).getShape();
  if (!isElementwiseFusion(fusion, shape))
    return std::nullopt;
  return shape;
}

/// The next fusion after `first` when only reshapes and constants lie
/// between them (so merging moves no result across other work and lengthens
/// no lifetime past a kernel), computes over `shape` element by element,
/// reads one of `first`'s inputs, and reads nothing defined after `first`;
/// else null.
FusionOp adjacentSibling(FusionOp first, ArrayRef<int64_t> shape) {
  for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
    if (isa<ReshapeOp, ConstantOp>(op))
      continue;
    auto fusion = dyn_cast<FusionOp>(op);
    if (!fusion || loopShape(fusion) != std::optional(shape) ||
        opCount(first) + opCount(fusion) > kMaxFusionOps)
      return {};
    bool sharesInput = llvm::any_of(fusion.getInputs(), [&](Value input) {
      return llvm::is_contained(first.getInputs(), input);
    });
    return sharesInput && inputsDefinedBefore(fusion, first) ? fusion
                                                             : FusionOp();
  }
  return {};
}

struct GenesisMergeSiblingLoopsPass
    : public genesis::impl::GenesisMergeSiblingLoopsBase<
          GenesisMergeSiblingLoopsPass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) {
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;
           op = op->getNextNode()) {
        auto fusion = dyn_cast<FusionOp>(op);
        std::optional<ArrayRef<int64_t>> shape =
            fusion ? loopShape(fusion) : std::nullopt;
        if (!shape)
          continue;
        while (FusionOp sibling = adjacentSibling(fusion, *shape)) {
          LLVM_DEBUG(llvm::dbgs()
                     << "merging sibling loops at " << fusion.getLoc() << "\n");
          fusion = mergeFusions(fusion, sibling);
        }
        op = fusion;
      }
    });
  }
};

} // namespace
