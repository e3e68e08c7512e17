//===- DecomposeLayerNorm.cpp - Norms as row sums and elementwise ops -----===//
//
// Implements genesis-decompose-layer-norm; Passes.td states the algorithm.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/GenesisExpansions.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "genesis-decompose-layer-norm"

namespace genesis {
#define GEN_PASS_DEF_GENESISDECOMPOSELAYERNORM
#include "passes/Passes.h.inc"
} // namespace genesis

using namespace mlir;
using namespace genesis;

namespace {

struct GenesisDecomposeLayerNormPass
    : public genesis::impl::GenesisDecomposeLayerNormBase<
          GenesisDecomposeLayerNormPass> {
  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation().walk([&](Operation *op) {
      if (isa<LayerNormOp, RmsNormOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        norms.push_back(op);
    });
    LLVM_DEBUG(llvm::dbgs() << norms.size() << " f32 norms\n");
    for (Operation *norm : norms) {
      OpBuilder builder(norm);
      Value expanded = isa<LayerNormOp>(norm)
                           ? expandLayerNorm(builder, cast<LayerNormOp>(norm))
                           : expandRmsNorm(builder, cast<RmsNormOp>(norm));
      norm->getResult(0).replaceAllUsesWith(expanded);
      norm->erase();
    }
  }
};

} // namespace
